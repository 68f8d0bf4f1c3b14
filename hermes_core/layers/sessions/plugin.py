"""The sessions layer as a plugin (hook implementations only; logic lives in sibling modules).

* ``on_session_start`` creates the session row (source, user_id, model, parent, title).
* ``on_prompt_frozen`` stores the frozen system prompt snapshot (``sessions.system_prompt``).
* ``sync`` writes every message of the turn (and its token usage) in one transaction and
  returns only once it is committed. Values are sanitised, never refused; text is redacted
  unless ``sessions.redact_secrets`` is off. A failure raises, and the facade hands it to
  the caller of ``after_turn`` (:attr:`SessionsLayer.durable_sync`). A resend of the same
  turn is recognised by its key (turn number + digest of the turn) and skipped.
* ``on_session_end`` records ``ended_at`` and the reason (``exit``, ``new_session``,
  ``compression``...).
* ``register_tools`` offers ``session_search`` (read-only, also for background review).
* ``health_check`` reports FTS5 availability, file permissions and the schema version.

Messages the compressor archives in place should be flagged with
:meth:`hermes_core.layers.sessions.db.SessionDB.mark_compacted` (``active=0, compacted=1``)
through :meth:`SessionsLayer.mark_compacted`; they then stay searchable even from their own
session.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from hermes_core.homefiles import inspect_state_db, own_db_path
from hermes_core.layers.sessions.archive import SessionStore
from hermes_core.layers.sessions.db import (
    SCHEMA_VERSION,
    SessionDB,
    SessionStoreError,
    content_text,
    tighten_permissions,
)
from hermes_core.layers.sessions.hermes_agent import index_hermes_agent
from hermes_core.layers.sessions.sanitize import json_text
from hermes_core.layers.sessions.search import SessionSearch, build_tool, llm_summarizer
from hermes_core.layers.sessions.store import open_store
from hermes_core.markers import hookimpl
from hermes_core.types import CompressionResult, HealthCheck, SessionInfo, ToolSpec, Turn

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from hermes_core.settings.models import HermesSettings, SessionsSettings
    from hermes_core.types import ChatMessage

log = logging.getLogger(__name__)


def turn_key(session: SessionInfo, turn: Turn) -> str:
    """The idempotency key of a turn: its number plus a digest of everything in it. Distinct
    turns of one session have distinct numbers, so no two of them share a key; a resend of
    the same :class:`Turn` has the same key."""
    body = json_text(
        [
            session.id,
            turn.number,
            turn.started_at,
            turn.ended_at,
            turn.user_text,
            turn.reply,
            list(turn.messages),
        ]
    )
    digest = hashlib.sha256(body.encode("utf-8", "replace")).hexdigest()[:24]
    return f"{turn.number}:{digest}"


class SessionsLayer:
    """Hook implementations of the sessions layer. One instance per host."""

    durable_sync: ClassVar[bool] = True
    """The facade re-raises this plugin's ``sync`` failures to the caller of ``after_turn``
    (after every other implementation ran): a turn is stored whole or the caller learns why."""

    def __init__(self) -> None:
        self._settings: HermesSettings | None = None
        self._home: Path | None = None
        self._db: SessionStore | None = None
        self._lock = threading.Lock()

    # -- plumbing ----------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        """False when ``sessions.enabled`` is off (nothing is recorded or searched)."""
        return self._settings is None or self._settings.sessions.enabled

    def db(self) -> SessionStore | None:
        """The archive on the configured backend (opened on first use), or None when
        disabled/unconfigured."""
        if not self.enabled or self._home is None:
            return None
        with self._lock:
            if self._db is None:
                sessions = self._settings.sessions if self._settings else None
                self._db = open_store(self._home, sessions)
            return self._db

    def searcher(self) -> SessionSearch | None:
        """A :class:`SessionSearch` bound to the archive and settings."""
        db = self.db()
        if db is None:
            return None
        if self._home is not None and isinstance(db, SessionDB):
            refresh_hermes_agent(db, self._home)
        settings = self._settings
        return SessionSearch(
            db,
            hidden_sources=settings.sessions.hidden_sources if settings else (),
            default_limit=settings.sessions.default_limit if settings else 3,
            profile=self._home.name if self._home else "default",
            summarizer=llm_summarizer(settings) if settings is not None else None,
        )

    def mark_compacted(self, session_id: str, message_ids: Iterable[int]) -> int:
        """Flag archived (summarised-away) messages ``active=0, compacted=1``."""
        db = self.db()
        return db.mark_compacted(session_id, message_ids) if db else 0

    def close(self) -> None:
        """Close the database connections."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- hooks -------------------------------------------------------------------------

    @hookimpl
    def configure(self, settings: HermesSettings, home: Path) -> None:
        self.close()
        self._settings = settings
        self._home = Path(home)

    @hookimpl
    def on_session_start(self, session: SessionInfo) -> None:
        db = self.db()
        if db is None:
            return
        db.create_session(
            session.id,
            source=session.source,
            user_id=session.user_id,
            model=session.model,
            parent_session_id=session.parent_id,
            started_at=session.started_at,
            title=session.title,
        )

    @hookimpl
    def on_prompt_frozen(self, session: SessionInfo, system_prompt: str) -> None:
        db = self.db()
        if db is not None:
            db.record_system_prompt(session.id, system_prompt, user_id=session.user_id)

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        db = self.db()
        if db is None:
            return
        messages: list[object] = list(turn.messages)
        if not messages:
            messages = [{"role": "user", "content": turn.user_text}]
            if turn.reply:
                messages.append({"role": "assistant", "content": turn.reply})
        db.ensure_session(
            session.id,
            source=session.source,
            user_id=session.user_id,
            model=session.model,
            parent_session_id=session.parent_id,
        )
        ids = db.append_messages(
            session.id,
            messages,
            timestamp=turn.started_at,
            source=session.source,
            user_id=session.user_id,
            turn_key=turn_key(session, turn),
        )
        if ids and (turn.prompt_tokens or turn.completion_tokens):
            db.add_token_usage(session.id, turn.prompt_tokens or 0, turn.completion_tokens or 0)

    @hookimpl
    def on_compressed(self, session: SessionInfo, result: CompressionResult) -> None:
        """Mark this session's rows that left the live transcript as compacted."""
        db = self.db()
        if db is None:
            return
        live = {(m.get("role"), content_text(m.get("content"))) for m in result.messages}
        gone = [
            row.id for row in db.get_messages(session.id) if (row.role, row.content) not in live
        ]
        db.mark_compacted(session.id, gone)

    @hookimpl
    def on_session_end(
        self, session: SessionInfo, messages: Sequence[ChatMessage], reason: str
    ) -> None:
        db = self.db()
        if db is not None:
            db.end_session(session.id, reason or "exit")

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec] | None:
        if not self.enabled:
            return None
        return [build_tool(self.searcher)]

    @hookimpl
    def health_check(self, home: Path) -> list[HealthCheck]:
        sessions = self._settings.sessions if self._settings else None
        if sessions is not None and sessions.backend == "postgresql":
            return postgres_health_checks(sessions)
        return health_checks(Path(home))


def refresh_hermes_agent(db: SessionDB, home: Path) -> None:
    """Index the sessions of a Hermes Agent ``state.db`` in ``home`` into ``db`` (incremental,
    read-only on its file; :mod:`.hermes_agent`). A failure is logged, never raised: search
    still runs over what is indexed."""
    try:
        index_hermes_agent(db, home)
    except (sqlite3.Error, OSError, SessionStoreError) as exc:
        log.warning("could not index Hermes Agent sessions in %s: %s", home, exc)


def health_checks(home: Path) -> list[HealthCheck]:
    """FTS5, permissions and schema checks of our archive (``<home>/state.db``, or
    ``hermes_core.db`` beside a Hermes Agent ``state.db``; opens ours read/write), and what a
    Hermes Agent ``state.db`` in ``home`` is (read-only look)."""
    path = own_db_path(home)
    checks: list[HealthCheck] = []
    found = inspect_state_db(home)
    if found.is_hermes_agent:
        checks.append(
            HealthCheck(
                "sessions: Hermes Agent home",
                True,
                f"{found.describe()}; hermes-core only reads it (its sessions are indexed "
                f"into {path.name} for search) and never changes its tables or schema",
                "",
            )
        )
    loose = []
    for suffix in ("", "-wal", "-shm"):
        p = Path(str(path) + suffix)
        if p.exists() and p.stat().st_mode & 0o077:
            loose.append(p.name)
    label = f"sessions: {path.name}"  # the file checked (hermes_core.db in an HA home)
    checks.append(
        HealthCheck(
            f"{label} permissions",
            not loose,
            "0600" if not loose else f"readable by others: {', '.join(loose)}",
            ""
            if not loose
            else f"chmod 600 {path}*  (or run any hermes command: it tightens them)",
        )
    )
    try:
        db = SessionDB(path)
    except SessionStoreError as exc:
        detail, _, fix = str(exc).partition(" — ")
        checks.append(HealthCheck(label, False, detail, fix or detail))
        return checks
    except (sqlite3.Error, OSError) as exc:
        checks.append(
            HealthCheck(
                label,
                False,
                f"cannot open {path}: {exc}",
                f"move the damaged file aside (mv {path} {path}.bad) and restart hermes",
            )
        )
        return checks
    if db.read_only_reason is not None:
        detail, _, fix = db.read_only_reason.partition("; ")
        checks.append(HealthCheck(label, False, detail, fix or detail))
    try:
        tighten_permissions(path)
        version = db.schema_version()
        checks.append(
            HealthCheck(
                "sessions: schema",
                version == SCHEMA_VERSION,
                f"version {version} (expected {SCHEMA_VERSION})",
                "" if version == SCHEMA_VERSION else "upgrade hermes-core; this file is newer",
            )
        )
        checks.append(
            HealthCheck(
                "sessions: full-text search (FTS5)",
                db.fts_enabled,
                f"SQLite {sqlite3.sqlite_version}: porter + CJK-split index available"
                if db.fts_enabled
                else f"SQLite {sqlite3.sqlite_version}: {db.fts_error}",
                ""
                if db.fts_enabled
                else "install a Python/SQLite with FTS5, then run `hermes-memory sessions reindex`",
            )
        )
    finally:
        db.close()
    return checks


def postgres_health_checks(sessions: SessionsSettings) -> list[HealthCheck]:
    """The PostgreSQL archive: reachable, schema version, URL shown with its password
    masked."""
    from hermes_core.layers.sessions.pg import PostgresSessionDB, redact_url
    from hermes_core.layers.sessions.pg_schema import PG_SCHEMA_VERSION

    url = sessions.url.get_secret_value() if sessions.url is not None else ""
    shown = redact_url(url) if url else "(unset)"
    try:
        db = PostgresSessionDB(url, statement_timeout_s=sessions.statement_timeout_s, pool_size=1)
    except SessionStoreError as exc:
        detail, _, fix = str(exc).partition("; ")
        return [HealthCheck("sessions: postgresql", False, detail, fix or detail)]
    try:
        version = db.schema_version()
        return [
            HealthCheck("sessions: postgresql", True, f"reachable at {shown}", ""),
            HealthCheck(
                "sessions: schema",
                version == PG_SCHEMA_VERSION,
                f"version {version} (expected {PG_SCHEMA_VERSION})",
                ""
                if version == PG_SCHEMA_VERSION
                else "upgrade hermes-core; this archive is newer",
            ),
        ]
    finally:
        db.close()


def create_plugin() -> SessionsLayer:
    """Called once per plugin manager by :func:`hermes_core.plugins.create_plugin_manager`."""
    return SessionsLayer()
