"""``state.db``: whose file it is, and whether hermes-core may write to it.

Several layers keep tables in ``$HERMES_HOME/state.db`` (the session archive, the memory
overflow archive, compression metrics). A file whose schema is newer than this code, or that
belongs to another program (a Hermes Agent ``state.db``, anything with tables hermes-core
never creates), is never written to — by any of them: each calls :func:`write_refusal`
before it creates a table or a row. A ``state.db`` (or its ``-wal``/``-shm``/``-journal``
file) that is not a regular file is refused too, before SQLite opens it (a FIFO would hang
the open).
"""

from __future__ import annotations

import re
import sqlite3
import stat
from pathlib import Path

from hermes_core.fsutil import special_kind

SCHEMA_VERSION = 7
"""The newest ``state.db`` schema this code knows (see ``layers/sessions/schema.py``)."""
OWNER = "hermes-core"
"""``state_meta['owner']``: written by migration 6; a file without it is checked for tables
and columns this program never creates before anything is written to it."""
SIDECARS = ("-wal", "-shm", "-journal")


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


SESSIONS_COLUMNS = frozenset(
    [
        "id",
        "source",
        "user_id",
        "model",
        "model_config",
        "system_prompt",
        "parent_session_id",
        "started_at",
        "ended_at",
        "end_reason",
        "message_count",
        "tool_call_count",
        "input_tokens",
        "output_tokens",
        "title",
        "import_digest",
    ]
)
MESSAGES_COLUMNS = frozenset(
    [
        "id",
        "session_id",
        "role",
        "content",
        "tool_call_id",
        "tool_calls",
        "tool_name",
        "timestamp",
        "token_count",
        "finish_reason",
        "reasoning",
        "active",
        "compacted",
        "name",
        "turn_key",
    ]
)
KNOWN_TABLES = frozenset(
    {
        "sessions",
        "messages",
        "messages_fts",
        "schema_version",
        "state_meta",
        "memory_archive",
        "memory_priority",
        "memory_expiry",
        "memory_fts",
        "compression_events",
        "skill_outcomes",
        "skill_usage",
        "skills_fts",
    }
)
"""Tables hermes-core's layers create in ``state.db`` (checked only in files without the
owner mark, i.e. archives written before it existed)."""
KNOWN_PREFIXES = ("sqlite_", "memory_", "compression_", "skill_", "skills_", "hermes_")
_FTS_SHADOW = re.compile(
    r"^(messages_fts|memory_fts|skills_fts)_(data|idx|content|docsize|config)$"
)


def _tables(conn: sqlite3.Connection) -> tuple[set[str], int]:
    rows = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
    tables = {str(name) for kind, name in rows if kind == "table"}
    triggers = sum(1 for kind, _ in rows if kind == "trigger")
    return tables, triggers


def _stored_version(conn: sqlite3.Connection, tables: set[str]) -> int:
    if "schema_version" not in tables:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0]) if row and isinstance(row[0], int) else 0


def incompatibility(conn: sqlite3.Connection) -> str | None:
    """Why this code must not write to the open database, or ``None`` when it may.

    Never writes. A schema newer than :data:`SCHEMA_VERSION` is refused; a file without the
    owner mark is refused when it holds a table hermes-core never creates, triggers, or
    ``sessions``/``messages`` columns this schema does not have (e.g. a Hermes Agent
    ``state.db``)."""
    tables, triggers = _tables(conn)
    version = _stored_version(conn, tables)
    if version > SCHEMA_VERSION:
        return (
            f"its schema is version {version}, newer than this hermes-core "
            f"(version {SCHEMA_VERSION}); upgrade hermes-core (pip install -U hermes-memory-core)"
        )
    owner = None
    if "state_meta" in tables:
        row = conn.execute("SELECT value FROM state_meta WHERE key='owner'").fetchone()
        owner = row[0] if row else None
    if owner == OWNER:
        return None
    if owner is not None:
        return f"it belongs to another program (state_meta owner {owner!r})"
    foreign = sorted(
        name
        for name in tables
        if name not in KNOWN_TABLES
        and not name.startswith(KNOWN_PREFIXES)
        and not _FTS_SHADOW.match(name)
    )
    for table, known in (("sessions", SESSIONS_COLUMNS), ("messages", MESSAGES_COLUMNS)):
        if table in tables:
            extra = sorted(_columns(conn, table) - known)
            foreign += [f"{table}.{column}" for column in extra[:5]]
    if triggers:
        foreign.append(f"{triggers} trigger(s)")
    if not foreign:
        return None
    shown = ", ".join(foreign[:8]) + (" …" if len(foreign) > 8 else "")
    return f"it belongs to another program (tables/columns hermes-core never creates: {shown})"


file_kind = special_kind
"""What a non-regular file of ``st_mode`` is (:func:`hermes_core.fsutil.special_kind`)."""


def special_file_reason(path: Path) -> str | None:
    """Why ``path`` or one of its SQLite sidecars is not a regular file (with the fix), or
    ``None``. Never opens anything."""
    for candidate in (Path(str(path) + suffix) for suffix in ("", *SIDECARS)):
        try:
            mode = candidate.stat().st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"cannot inspect {candidate} ({exc.strerror}); check the permissions"
        if not stat.S_ISREG(mode):
            return (
                f"{candidate} is a {file_kind(mode)}, not a database file — move it aside "
                f"(mv {candidate} {candidate}.bad) and rerun"
            )
    return None


def write_refusal(path: Path) -> str | None:
    """Why hermes-core must not write to the ``state.db`` at ``path`` (the text names the
    fix), or ``None`` when it may (also when the file does not exist or is empty). Never
    writes; opens the file read-only."""
    special = special_file_reason(path)
    if special is not None:
        return special
    try:
        if path.stat().st_size == 0:
            return None
    except FileNotFoundError:
        return None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error as exc:
        return f"{path} cannot be opened ({exc})"
    try:
        reason = incompatibility(conn)
    except sqlite3.Error as exc:
        return f"{path} is not a readable SQLite database ({exc})"
    finally:
        conn.close()
    if reason is None:
        return None
    return (
        f"{path} is not written to: {reason}. Give hermes-core a home of its own "
        f"(HERMES_HOME=~/.hermes-core) or move the file aside (mv {path} {path}.other)"
    )


__all__ = [
    "KNOWN_TABLES",
    "MESSAGES_COLUMNS",
    "OWNER",
    "SCHEMA_VERSION",
    "SESSIONS_COLUMNS",
    "SIDECARS",
    "file_kind",
    "incompatibility",
    "special_file_reason",
    "write_refusal",
]
