"""Whose memory a caller works on: one user's MEMORY.md and USER.md, or the no-user files.

Where the files live is :func:`hermes_core.scope.scope_dir` (``memories/`` for no user,
``memories/users/<key>/`` for a user id). The one rule this module adds is
``memory.shared_agent_memory``: when on, every user reads and writes the agent's no-user
``MEMORY.md`` (one team, one set of notes) while ``USER.md`` stays each user's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hermes_core.scope import check_user_id, scope_dir
from hermes_core.settings.models import MemorySettings
from hermes_core.types import MemoryTarget

from .store import memories_dir


@dataclass(frozen=True)
class MemoryScope:
    """The user a memory engine, archive or tool acts for, and whether MEMORY.md is shared."""

    user_id: str | None = None
    shared_agent_memory: bool = False

    @classmethod
    def of(cls, settings: MemorySettings, user_id: object = None) -> MemoryScope:
        """The scope of ``user_id`` under ``settings`` (``None``/``""``: no user)."""
        return cls(check_user_id(user_id), bool(settings.shared_agent_memory))

    def owner(self, target: MemoryTarget) -> str | None:
        """Whose file ``target`` is: ``None`` (the no-user file) for a shared MEMORY.md or
        without a user, else the user id."""
        if target == "memory" and self.shared_agent_memory:
            return None
        return self.user_id

    def directory(self, home: Path, target: MemoryTarget) -> Path:
        """The directory holding ``target``'s file."""
        return scope_dir(memories_dir(home), self.owner(target))


__all__ = ["MemoryScope"]
