"""Helpers shared by the holographic tests (a module name unique across plugin test dirs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_memory_holographic import HolographicProvider

from hermes_core import SessionInfo, ToolContext
from hermes_core.settings.models import HermesSettings


def make_session(home: Path, user_id: str | None = "alice", sid: str = "s1") -> SessionInfo:
    return SessionInfo(id=sid, home=home, settings=HermesSettings(), user_id=user_id)


def call(
    provider: HolographicProvider, session: SessionInfo, tool: str, **args: Any
) -> dict[str, Any]:
    import json

    spec = {t.name: t for t in provider.register_tools(session)}[tool]
    return json.loads(spec.handler(args, ToolContext(session=session)))  # type: ignore[no-any-return]
