"""Built-in layer: the archive of every past session and ``session_search``.

``archive`` (the storage seam: ``SessionStore`` and the shared ``ArchiveBase``), ``db``
(SQLite: state.db + FTS5; schema, migrations, records), ``pg`` / ``pg_schema`` / ``pg_fts``
(PostgreSQL), ``store`` (opening the configured backend), ``migrate`` (copying between
backends), ``fts`` (query sanitiser, CJK), ``ranking``, ``timeparse``, ``search`` (the tool),
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
    from .pg import PostgresSessionDB
    from .plugin import refresh_hermes_agent
    from .ranking import rank
    from .search import SessionSearch
    from .store import open_store, open_url
    from .transfer import TransferError, export_session, export_sessions, import_groups, read_import

_HOME: dict[str, str] = {
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
    "HermesAgentHomeError",
    "PostgresSessionDB",
    "SessionDB",
    "SessionSearch",
    "SessionStoreError",
    "SessionStoreUnusable",
    "TransferError",
    "build_match",
    "copy_archive",
    "export_session",
    "export_sessions",
    "import_groups",
    "import_hermes_agent",
    "locate_state_db",
    "merge_archive",
    "open_store",
    "open_url",
    "rank",
    "read_import",
    "refresh_hermes_agent",
    "session_stamps",
]
