"""The memory layer as a plugin (hook implementations only; logic lives in sibling modules).

Per session (keyed by ``session.id`` *and* ``session.user_id``, so two users can never share
state through a reused session id): the frozen snapshot taken at ``on_session_start`` and
the ``memory`` tool with its per-turn failure counter. The prompt block is ONE
:class:`PromptBlock` at ``PromptOrder.MEMORY`` holding the guidance, then the MEMORY block,
then the USER block.
"""

from __future__ import annotations

import logging
import shlex
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_core.errors import HermesError
from hermes_core.markers import hookimpl
from hermes_core.scope import normalize_user_id
from hermes_core.security.scan import find_threats
from hermes_core.text import plural
from hermes_core.types import (
    HealthCheck,
    MemoryTarget,
    PromptBlock,
    PromptOrder,
    SessionInfo,
    ToolSpec,
)

from .archive import MemoryArchive, db_path
from .archive_tool import MemoryArchiveTool
from .backends import describe, open_pending, pending_users
from .engine import MemoryEngine, limit_for
from .pending import PendingStore
from .snapshot import guidance, render_block
from .store import FILENAMES, DiskState, EntryStore, char_count, has_drift
from .tool import MemoryTool

if TYPE_CHECKING:
    from hermes_core.settings.models import HermesSettings, MemorySettings

log = logging.getLogger(__name__)


def enabled_targets(settings: MemorySettings) -> tuple[MemoryTarget, ...]:
    """The stores switched on, ``memory`` first."""
    targets: list[MemoryTarget] = []
    if settings.memory_enabled:
        targets.append("memory")
    if settings.user_profile_enabled:
        targets.append("user")
    return tuple(targets)


@dataclass
class _SessionState:
    snapshot: str
    tool: MemoryTool
    archive_tool: MemoryArchiveTool


class MemoryLayer:
    """Hook implementations of the memory layer. One instance per host."""

    def __init__(self) -> None:
        self._settings: HermesSettings | None = None
        self._home: Path | None = None
        self._sessions: dict[tuple[str, str | None], _SessionState] = {}
        self._lock = threading.Lock()

    # -- lifecycle

    @hookimpl
    def configure(self, settings: HermesSettings, home: Path) -> None:
        self._settings = settings
        self._home = home

    @hookimpl
    def on_session_start(self, session: SessionInfo) -> None:
        self._state(session)

    @hookimpl
    def on_turn_start(self, session: SessionInfo) -> None:
        state = self._sessions.get(_key(session))
        if state is not None:
            state.tool.failures.reset()

    @hookimpl
    def on_session_end(self, session: SessionInfo) -> None:
        with self._lock:
            self._sessions.pop(_key(session), None)

    # -- prompt and tools

    @hookimpl
    def system_prompt_block(
        self, session: SessionInfo, tool_names: frozenset[str]
    ) -> PromptBlock | None:
        state = self._state(session)
        parts: list[str] = []
        if "memory" in tool_names:
            parts.append(
                guidance(
                    skills=any(name.startswith("skill") for name in tool_names),
                    session_search="session_search" in tool_names,
                )
            )
        if state.snapshot:
            parts.append(state.snapshot)
        if not parts or not state.tool.targets:
            return None
        return PromptBlock(text="\n\n".join(parts), order=PromptOrder.MEMORY, source="memory")

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec]:
        state = self._state(session)
        if not state.tool.targets or "memory" in session.settings.agent.disabled_toolsets:
            return []
        specs = [state.tool.spec()]
        memory = session.settings.memory
        has_rows = db_path(session.home).exists() and _has_archive(state.archive_tool.archive)
        if memory.overflow == "archive" or has_rows:
            specs.append(state.archive_tool.spec())
        return specs

    # -- health

    @hookimpl
    def health_check(self, home: Path) -> list[HealthCheck]:
        settings = self._settings_for(home).memory
        store_check = _store_check(home, settings)
        checks: list[HealthCheck] = [store_check]
        if not store_check.ok:
            return checks  # the server is down: one line with the fix, not one per file
        try:
            engine = MemoryEngine(home, settings)
            for target in enabled_targets(settings):
                checks.append(_file_check(engine.store(target)))
            checks.extend(_users_file_checks(home, settings))
        except HermesError:
            pass  # the store check above says what is wrong
        try:
            pending = len(open_pending(home, settings).list())
            users = {
                uid: len(open_pending(home, settings, uid).list())
                for uid in pending_users(home, settings)
            }
        except HermesError:
            return checks  # the store check says why the store cannot be read
        users = {uid: count for uid, count in users.items() if count}
        total = pending + sum(users.values())
        detail = f"{total} staged write(s) waiting" if total else "no staged writes"
        if users:
            detail += f" ({pending} without a user, {len(users)} user(s) with their own)"
        checks.append(
            HealthCheck(
                name="memory: pending writes",
                ok=not total,
                detail=detail,
                fix="Review them with `hermes-memory memory pending [--user ID]`, then "
                "`hermes-memory memory "
                "approve ID [--user ID]` or `hermes-memory memory reject ID [--user ID]`."
                if total
                else "",
            )
        )
        return checks

    # -- internals

    def _settings_for(self, home: Path) -> HermesSettings:
        if self._settings is not None and self._home == home:
            return self._settings
        from hermes_core.settings.base import load_settings

        return load_settings(home)

    def _state(self, session: SessionInfo) -> _SessionState:
        with self._lock:
            state = self._sessions.get(_key(session))
            if state is None:
                state = self._build(session)
                self._sessions[_key(session)] = state
            return state

    def _build(self, session: SessionInfo) -> _SessionState:
        """The session's frozen snapshot and tools, all of ``session.user_id``'s scope: its
        files, its staged writes, its archive rows (never another user's)."""
        settings = session.settings.memory
        engine = MemoryEngine(session.home, settings, session.user_id)
        targets = enabled_targets(settings)
        blocks: list[str] = []
        for target in targets:
            try:
                disk = engine.store(target).read()
            except HermesError as exc:  # e.g. memory.store: postgresql without a URL
                disk = DiskState(error=str(exc))
            if not disk.readable:
                log.warning(
                    "%s could not be read (%s); it is left out of the prompt",
                    FILENAMES[target],
                    disk.error,
                )
                continue
            live = unexpired(engine, target, disk.entries)
            block = render_block(target, live, limit_for(settings, target))
            if block:
                blocks.append(block)
        pending = _pending_for(session.home, settings, engine.user_id)
        tool = MemoryTool(engine=engine, pending=pending, targets=targets)
        return _SessionState(
            snapshot="\n\n".join(blocks),
            tool=tool,
            archive_tool=MemoryArchiveTool(engine.archive),
        )


def unexpired(engine: MemoryEngine, target: MemoryTarget, entries: list[str]) -> list[str]:
    """``entries`` without those whose expiry (``MemoryArchive.set_expiry``) has passed:
    an expired entry stays in its file but leaves the prompt. When ``state.db`` cannot be
    read, every entry is kept (logged)."""
    try:
        expired = engine.archive.expired(target)
    except sqlite3.Error as exc:
        log.warning("memory expiries unreadable (%s); no entry is treated as expired", exc)
        return entries
    return [e for e in entries if e not in expired] if expired else entries


def _pending_for(home: Path, settings: MemorySettings, user_id: str | None) -> PendingStore:
    """The session's staged-write store; with a PostgreSQL store that has no URL, the local
    files (staging then fails over to them instead of the session failing to start)."""
    try:
        return open_pending(home, settings, user_id)
    except HermesError as exc:
        log.warning("staged memory writes stay on this host: %s", exc)
        return PendingStore(home, user_id)


def _key(session: SessionInfo) -> tuple[str, str | None]:
    return session.id, normalize_user_id(session.user_id)


def _has_archive(archive: MemoryArchive) -> bool:
    try:
        return bool(archive.list(limit=1))
    except Exception as exc:
        log.warning("memory archive unreadable: %s", exc)
        return False


def _store_check(home: Path, settings: MemorySettings) -> HealthCheck:
    """Which store holds MEMORY.md / USER.md, and (PostgreSQL) whether it can be reached."""
    name = "memory: store"
    where = describe(home, settings)
    if settings.store != "postgresql":
        return HealthCheck(name=name, ok=True, detail=where)
    from .backends import store_user_ids

    try:
        users = store_user_ids(home, settings)
    except HermesError as exc:
        from hermes_core.pg import INSTALL_HINT, DriverMissing

        if isinstance(exc, DriverMissing):  # no server to start: the driver is the fix
            fix = f"{INSTALL_HINT}; or set memory.store: files."
        else:
            fix = "Start the server or fix HERMES_MEMORY__URL in $HERMES_HOME/.env; or set "
            fix += "memory.store: files."
        return HealthCheck(name=name, ok=False, detail=f"{where}: {exc}", fix=fix)
    return HealthCheck(
        name=name, ok=True, detail=f"{where}: reachable, {len(users)} user(s) with their own"
    )


def _users_file_checks(home: Path, settings: MemorySettings) -> list[HealthCheck]:
    """Every user's MEMORY.md / USER.md checked like the no-user files, reported as one
    summary line plus one line per failing file (bounded output for any number of users)."""
    from .backends import store_user_ids

    users = store_user_ids(home, settings)
    if not users:
        return []
    failing: list[HealthCheck] = []
    files = 0
    for uid in users:
        engine = MemoryEngine(home, settings, uid)
        for target in enabled_targets(settings):
            files += 1
            check = _file_check(engine.store(target), uid)
            if not check.ok:
                failing.append(check)
    summary = HealthCheck(
        name="memory: users' files",
        ok=not failing,
        detail=f"{len(users)} user(s), {files} file(s) checked, {len(failing)} with problems",
        fix="See the lines below for each file." if failing else "",
    )
    return [summary, *failing]


def _file_check(store: EntryStore, user_id: str | None = None) -> HealthCheck:
    target, limit = store.target, store.limit
    flag = "" if user_id is None else f" --user {shlex.quote(user_id)}"
    name = f"memory: {FILENAMES[target]}" + ("" if user_id is None else f" (user {user_id})")
    state = store.read()
    where = store.location
    if not state.readable:
        return HealthCheck(
            name=name,
            ok=False,
            detail=f"{where} could not be read ({state.error})",
            fix=f"Make {where} readable UTF-8 (or move it aside); memory writes to it are "
            "refused until then."
            if store.kind == "files"
            else "Start the server or fix memory.url; memory writes are refused until then.",
        )
    size = char_count(state.entries)
    if state.raw is not None and has_drift(state.raw, limit):
        return HealthCheck(
            name=name,
            ok=False,
            detail=f"{where} has content that does not round-trip (edited by hand?)",
            fix=f"Run `hermes-memory memory edit --target {target}{flag}` to fix its format "
            f"(entries "
            "separated by a line containing only §).",
        )
    flagged = [
        f"entry {number}: {', '.join(ids)}"
        for number, entry in enumerate(state.entries, start=1)
        if (ids := find_threats(entry, "strict"))
    ]
    if flagged:
        return HealthCheck(
            name=name,
            ok=False,
            detail=f"{where}: blocked pattern(s) in {'; '.join(flagged)} (left out of the prompt)",
            fix=f"Remove or rewrite those entries with `hermes-memory memory edit --target {target}"
            f"{flag}` (store where a secret lives, never the secret).",
        )
    entries = plural(len(state.entries), "entry")
    if limit >= 0 and size > limit:
        return HealthCheck(
            name=name,
            ok=False,
            detail=f"over budget: {size:,}/{limit:,} chars in {entries}",
            fix=f"Consolidate with `hermes-memory memory edit --target {target}{flag}` or raise "
            f"memory.{'memory_char_limit' if target == 'memory' else 'user_char_limit'}.",
        )
    return HealthCheck(
        name=name,
        ok=True,
        detail=f"{entries}, {size:,}/{limit:,} chars",
    )


def create_plugin() -> MemoryLayer:
    """Called once per plugin manager by :func:`hermes_core.plugins.create_plugin_manager`."""
    return MemoryLayer()
