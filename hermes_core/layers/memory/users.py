"""Who has memory of their own: the rows of ``hermes-memory memory users``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_core.settings.models import MemorySettings
from hermes_core.types import MemoryTarget

from .backends import backend
from .engine import MemoryEngine

TARGETS: tuple[MemoryTarget, ...] = ("memory", "user")


def memory_users(home: Path, settings: MemorySettings) -> list[dict[str, Any]]:
    """One row per user id with memory files or staged writes of their own, sorted by id:
    ``user_id``, ``directory`` (where their memory lives), ``entries`` per target and
    ``pending``. Raises :class:`~hermes_core.errors.HermesError` when the store is
    misconfigured or cannot be reached."""
    chosen = backend(home, settings)
    ids = sorted(set(chosen.user_ids()) | set(chosen.pending_users()))
    rows: list[dict[str, Any]] = []
    for uid in ids:
        engine = MemoryEngine(home, settings, uid)
        stores = {t: engine.store(t) for t in TARGETS}
        rows.append(
            {
                "user_id": uid,
                "directory": chosen.where(uid, stores["user"]),
                "entries": {t: len(stores[t].entries()) for t in TARGETS},
                "pending": len(chosen.open_pending(uid).list()),
            }
        )
    return rows


__all__ = ["memory_users"]
