"""Small builders for hook arguments in tests."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from hermes_core.settings.models import HermesSettings
from hermes_core.types import ChatMessage, MemoryWrite, SessionInfo, Turn


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


def resend(
    sync: Callable[[Turn], object],
    user_text: str = "My favourite editor is Helix.",
    reply: str = "Noted.",
    *,
    session_id: str = "s1",
    number: int = 1,
) -> Turn:
    """Sync one turn twice through ``sync`` (say ``lambda t: provider.sync(session, t)``),
    as a host that retries after a crash does; returns the turn. A provider must store it
    once."""
    turn = make_turn(user_text, reply, session_id=session_id, number=number)
    sync(turn)
    sync(turn)
    return turn


MIRRORED_WRITES: Sequence[tuple[MemoryWrite, tuple[str, ...]]] = (
    (MemoryWrite(action="add", target="user", content="Prefers tea."), ("Prefers tea.",)),
    (
        MemoryWrite(
            action="replace",
            target="user",
            content="Prefers 乌龙茶.",
            previous_content="Prefers tea.",
        ),
        ("Prefers 乌龙茶.",),
    ),
    (
        MemoryWrite(action="remove", target="user", content="", previous_content="Prefers 乌龙茶."),
        (),
    ),
)
"""The built-in memory tool adding, replacing (with Chinese text) and removing one user
fact, each with what a mirroring provider must hold afterwards."""


def mirrored_writes(
    write: Callable[[MemoryWrite], object], stored: Callable[[], Sequence[str]]
) -> Iterator[str]:
    """Send :data:`MIRRORED_WRITES` through ``write`` (say ``lambda w:
    provider.on_memory_write(session, w)``) and assert after each that ``stored()`` lists
    exactly what should be there; yields each write's action after its check, so the test
    can check more at that point::

        for action in mirrored_writes(write, lambda: [f.text for f in double.facts()]):
            ...
    """
    for memory_write, expected in MIRRORED_WRITES:
        write(memory_write)
        assert tuple(stored()) == expected, f"after {memory_write.action}: {list(stored())}"
        yield memory_write.action


__all__ = ["MIRRORED_WRITES", "make_session_info", "make_turn", "mirrored_writes", "resend"]
