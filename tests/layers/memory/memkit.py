"""MemoryKit: a real memory layer on a real home, called the way the host calls it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_core.layers.memory.plugin import MemoryLayer
from hermes_core.settings.base import load_settings
from hermes_core.settings.models import HermesSettings
from hermes_core.types import MemoryTarget, MemoryWrite, SessionInfo, ToolContext, WriteOrigin

FILES = {"memory": "MEMORY.md", "user": "USER.md"}


def pending_of(home: Path, user_id: str | None = None) -> Any:
    """``user_id``'s staged writes where the home's ``memory.store`` keeps them."""
    from hermes_core.layers.memory.backends import open_pending

    return open_pending(home, load_settings(home).memory, user_id)


def copy_record(home: Path, pending_id: str, owner: str | None, other: str | None) -> None:
    """Copy ``owner``'s staged record into ``other``'s scope by hand, bypassing the API: the
    JSON file into the other user's directory, or the row under the other owner key."""
    source, dest = pending_of(home, owner), pending_of(home, other)
    if not hasattr(source, "server"):
        dest.directory.mkdir(parents=True, exist_ok=True)
        (dest.directory / f"{pending_id}.json").write_bytes(source.path(pending_id).read_bytes())
        return
    import psycopg

    from hermes_core.layers.memory.pgstore import PENDING_TABLE

    with psycopg.connect(source.server.url, autocommit=True) as conn:
        conn.execute(
            f"INSERT INTO {PENDING_TABLE} (owner_key, id, user_id, record, created_at) "
            f"SELECT %s, id, user_id, record, created_at FROM {PENDING_TABLE} "
            "WHERE owner_key = %s AND id = %s",
            (dest.key, source.key, pending_id),
        )


def make_settings(home: Path, **memory: Any) -> HermesSettings:
    """Settings of ``home`` with ``memory.*`` overrides applied *without* validation (so raw
    config values such as strings reach the layer exactly as written)."""
    base = load_settings(home)
    return base.model_copy(update={"memory": base.memory.model_copy(update=memory)})


class MemoryKit:
    """One memory layer + one session; ``call`` runs the ``memory`` tool like the host."""

    def __init__(self, home: Path, session_id: str = "s1", **memory: Any) -> None:
        self.home = home
        self.settings = make_settings(home, **memory)
        self.layer = MemoryLayer()
        self.layer.configure(self.settings, home)
        self.writes: list[MemoryWrite] = []
        self.session = self.open(session_id)

    def open(self, session_id: str) -> SessionInfo:
        session = SessionInfo(id=session_id, home=self.home, settings=self.settings)
        self.layer.on_session_start(session)
        return session

    def tools(self, session: SessionInfo | None = None) -> dict[str, Any]:
        specs = self.layer.register_tools(session or self.session)
        return {spec.name: spec for spec in specs}

    def call(
        self,
        args: Any = None,
        *,
        origin: WriteOrigin = "foreground",
        session: SessionInfo | None = None,
        tool: str = "memory",
        **kwargs: Any,
    ) -> dict[str, Any]:
        session = session or self.session
        ctx = ToolContext(session=session, origin=origin, notify_memory_write=self.writes.append)
        handler = self.tools(session)[tool].handler
        raw = handler(args if args is not None else kwargs, ctx)
        assert isinstance(raw, str)
        result = json.loads(raw)
        assert isinstance(result, dict)
        return result

    def add(self, content: str, target: MemoryTarget = "memory", **kw: Any) -> dict[str, Any]:
        return self.call(action="add", content=content, target=target, **kw)

    @property
    def store_kind(self) -> str:
        return str(self.settings.memory.store)

    def store(self, target: MemoryTarget = "memory", user_id: str | None = None) -> Any:
        """The no-user (or ``user_id``'s) store of ``target`` as the layer opens it."""
        from hermes_core.layers.memory.engine import MemoryEngine

        return MemoryEngine(self.home, self.settings.memory, user_id).store(target)

    def file(self, target: MemoryTarget = "memory") -> Path:
        """The file of the file store (``files_only`` tests)."""
        return self.home / "memories" / FILES[target]

    def write_raw(self, text: str | bytes, target: MemoryTarget = "memory") -> Path:
        """Put ``text`` into the store as-is, bypassing the tool: the file written by hand,
        or the database row updated by hand (same bytes)."""
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        if self.store_kind == "postgresql":
            store = self.store(target)
            store.replace_bytes_if_unchanged(store.read_original(), data)
            return self.file(target)
        path = self.file(target)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def raw(self, target: MemoryTarget = "memory") -> bytes | None:
        """The stored bytes (``None``: nothing stored yet), whichever the store."""
        if self.store_kind == "postgresql":
            from hermes_core.layers.memory.pgstore import list_files

            store = self.store(target)
            rows = list_files(store.server, [None])
            found = [r.content for r in rows if r.target == target]
            return found[0] if found else None
        path = self.file(target)
        return path.read_bytes() if path.exists() else None

    def stamp(self, target: MemoryTarget = "memory") -> object:
        """When the stored text was last written: the file's mtime, or the row's
        ``updated_at`` (equal stamps = nothing was written in between)."""
        if self.store_kind == "postgresql":
            import psycopg

            from hermes_core.layers.memory.pgstore import TABLE

            url = self.settings.memory.url
            assert url is not None
            with psycopg.connect(url.get_secret_value()) as conn:
                row = conn.execute(
                    f"SELECT updated_at FROM {TABLE} WHERE owner_key = '' AND target = %s",
                    (target,),
                ).fetchone()
            return None if row is None else row[0]
        return self.file(target).stat().st_mtime_ns

    def text(self, target: MemoryTarget = "memory") -> str | None:
        """The stored text (UTF-8), ``None`` when nothing is stored."""
        raw = self.raw(target)
        return None if raw is None else raw.decode("utf-8")

    def entries(self, target: MemoryTarget = "memory") -> list[str]:
        return list(self.store(target).entries())

    def prompt(self, session: SessionInfo | None = None) -> str | None:
        session = session or self.session
        names = frozenset(self.tools(session))
        block = self.layer.system_prompt_block(session, names)
        return None if block is None else block.text

    def turn(self, number: int = 2) -> None:
        self.layer.on_turn_start(self.session)
