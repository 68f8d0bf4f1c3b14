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

    def file(self, target: MemoryTarget = "memory") -> Path:
        return self.home / "memories" / FILES[target]

    def write_raw(self, text: str | bytes, target: MemoryTarget = "memory") -> Path:
        path = self.file(target)
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def entries(self, target: MemoryTarget = "memory") -> list[str]:
        from hermes_core.layers.memory.store import read_state

        return read_state(self.file(target)).entries

    def prompt(self, session: SessionInfo | None = None) -> str | None:
        session = session or self.session
        names = frozenset(self.tools(session))
        block = self.layer.system_prompt_block(session, names)
        return None if block is None else block.text

    def turn(self, number: int = 2) -> None:
        self.layer.on_turn_start(self.session)
