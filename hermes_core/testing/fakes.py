"""Small builders for hook arguments in tests."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from hermes_core.settings.models import HermesSettings
from hermes_core.types import ChatMessage, SessionInfo, Turn


def make_session_info(
    home: Path,
    *,
    session_id: str = "test-session",
    user_id: str | None = "test-user",
    source: str = "cli",
    settings: HermesSettings | None = None,
) -> SessionInfo:
    """A :class:`SessionInfo` for ``home`` with default settings unless given."""
    return SessionInfo(
        id=session_id,
        home=home,
        settings=settings if settings is not None else HermesSettings(),
        source=source,
        user_id=user_id,
    )


def make_turn(
    user_text: str,
    reply: str = "Noted.",
    *,
    session_id: str = "test-session",
    number: int = 1,
    messages: Sequence[ChatMessage] | None = None,
) -> Turn:
    """A completed :class:`Turn`; ``messages`` default to ``[user, assistant]``."""
    if messages is None:
        messages = [
            {"role": "user", "content": user_text},
            {"role": "assistant", "content": reply},
        ]
    now = time.time()
    return Turn(
        session_id=session_id,
        number=number,
        user_text=user_text,
        reply=reply,
        messages=tuple(messages),
        started_at=now,
        ended_at=now,
    )


__all__ = ["make_session_info", "make_turn"]
