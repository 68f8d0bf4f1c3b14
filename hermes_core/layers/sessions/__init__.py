"""Built-in layer: the archive of every past session and ``session_search``.

``archive`` (the storage seam: ``SessionStore`` and the shared ``ArchiveBase``), ``db``
(SQLite: state.db + FTS5; schema, migrations, records), ``pg`` / ``pg_schema`` / ``pg_fts``
(PostgreSQL), ``store`` (opening the configured backend), ``migrate`` (copying between
backends), ``operations`` (what the ``sessions`` commands do), ``fts`` (query sanitiser,
CJK), ``ranking``, ``timeparse``, ``search`` (the tool),
``plugin`` (the hooks; registered from ``hermes_core.plugins.BUILTIN_PLUGINS``).

The layer's public face is ``__all__`` below: code outside the layers (cli/, mcp/, compat/,
agent/, bench/, host.py, hooks.py) imports these names from ``hermes_core.layers.sessions`` and
nothing from its modules (tests/test_layer_boundaries.py). Names load on first use, so
importing the package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.lazy import lazy_names

if TYPE_CHECKING:
    from .db import SessionDB, SessionStoreUnusable
    from .errors import SessionStoreError
    from .fts import build_match
    from .hermes_agent import (
        HermesAgentHomeError,
        import_hermes_agent,
        locate_state_db,
        session_stamps,
    )
    from .migrate import copy_archive, merge_archive
    from .operations import (
        AgeError,
        AgentImportSummary,
        SessionNotFound,
        count_hermes_agent_sessions,
        import_from_hermes_agent,
        migrate_archive,
        migration_total,
        open_archive,
        open_migration_source,
        parse_age,
        prune_sessions,
        resolve_ref,
        scope_session_ids,
        search_archive,
    )
    from .pg import PostgresSessionDB
    from .plugin import refresh_hermes_agent
    from .ranking import rank
    from .search import SessionSearch
    from .store import open_store, open_url
    from .transfer import TransferError, export_session, export_sessions, import_groups, read_import

_HOME: dict[str, str] = {
    "AgeError": "operations",
    "AgentImportSummary": "operations",
    "SessionNotFound": "operations",
    "count_hermes_agent_sessions": "operations",
    "import_from_hermes_agent": "operations",
    "migrate_archive": "operations",
    "migration_total": "operations",
    "open_archive": "operations",
    "open_migration_source": "operations",
    "parse_age": "operations",
    "prune_sessions": "operations",
    "resolve_ref": "operations",
    "scope_session_ids": "operations",
    "search_archive": "operations",
    "build_match": "fts",
    "copy_archive": "migrate",
    "merge_archive": "migrate",
    "export_session": "transfer",
    "export_sessions": "transfer",
    "HermesAgentHomeError": "hermes_agent",
    "import_groups": "transfer",
    "import_hermes_agent": "hermes_agent",
    "locate_state_db": "hermes_agent",
    "open_store": "store",
    "open_url": "store",
    "PostgresSessionDB": "pg",
    "rank": "ranking",
    "read_import": "transfer",
    "refresh_hermes_agent": "plugin",
    "session_stamps": "hermes_agent",
    "SessionDB": "db",
    "SessionSearch": "search",
    "SessionStoreError": "errors",
    "SessionStoreUnusable": "db",
    "TransferError": "transfer",
}
"""Public name -> the module of this layer that defines it."""


__getattr__ = lazy_names(__name__, _HOME)

__all__ = [
    "AgeError",
    "AgentImportSummary",
    "HermesAgentHomeError",
    "PostgresSessionDB",
    "SessionDB",
    "SessionNotFound",
    "SessionSearch",
    "SessionStoreError",
    "SessionStoreUnusable",
    "TransferError",
    "build_match",
    "copy_archive",
    "count_hermes_agent_sessions",
    "export_session",
    "export_sessions",
    "import_from_hermes_agent",
    "import_groups",
    "import_hermes_agent",
    "locate_state_db",
    "merge_archive",
    "migrate_archive",
    "migration_total",
    "open_archive",
    "open_migration_source",
    "open_store",
    "open_url",
    "parse_age",
    "prune_sessions",
    "rank",
    "read_import",
    "refresh_hermes_agent",
    "resolve_ref",
    "scope_session_ids",
    "search_archive",
    "session_stamps",
]
