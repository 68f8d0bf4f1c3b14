"""Helpers shared by the mem0 tests (a module name unique across plugin test dirs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_core import SessionInfo, ToolContext
from hermes_core.settings.models import HermesSettings


def make_session(
    home: Path, user_id: str | None = None, llm_url: str | None = None, sid: str = "s1"
) -> SessionInfo:
    llm: dict[str, Any] = {}
    if llm_url:
        llm = {"base_url": llm_url, "model": "fake-model", "api_key": "sk-test"}
    return SessionInfo(
        id=sid, home=home, settings=HermesSettings(llm=llm), source="cli", user_id=user_id
    )


def ctx(session: SessionInfo) -> ToolContext:
    return ToolContext(session=session)
