"""A small third-party provider that opts into the inspector's optional capabilities.

``notebook`` keeps each user's memories in a JSON file under ``<home>/notebook/`` and
implements what a third party would: listing and deletion
(:class:`~hermes_core.providers.inspect.InspectableProvider`), expiry dates
(:class:`~hermes_core.providers.inspect.ExpiringProvider`, with the shared
:class:`~hermes_core.providers.expiry.ExpiryLedger` and :func:`drop_expired` in
``prefetch``) and a score per recalled memory (``MemoryContext.scores``). ``plain`` lists
nothing and returns plain text: the page must say what it cannot do.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from hermes_core import MemoryContext, MemoryProvider, ProviderSettings, SessionInfo, hookimpl
from hermes_core.fsutil import atomic_write_text
from hermes_core.providers.expiry import ExpiryLedger, drop_expired
from hermes_core.providers.inspect import ProviderMemory


class NotebookProvider(MemoryProvider):
    name = "notebook"

    def __init__(self, settings: ProviderSettings, home: Path) -> None:
        super().__init__(settings, home)
        self.expiry = ExpiryLedger(home, self.name)
        self.path = self.home / "notebook.json"

    def _all(self) -> dict[str, dict[str, str]]:
        return json.loads(self.path.read_text("utf-8")) if self.path.is_file() else {}

    def notes(self, user_id: str) -> dict[str, str]:
        return self._all().get(user_id, {})

    def write(self, user_id: str, notes: dict[str, str]) -> None:
        everyone = {**self._all(), user_id: notes}
        atomic_write_text(self.path, json.dumps({k: v for k, v in everyone.items() if v}))

    def add(self, user_id: str, text: str) -> str:
        notes = self.notes(user_id)
        memory_id = f"n{len(notes) + 1}"
        self.write(user_id, {**notes, memory_id: text})
        return memory_id

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        uid = session.user_id or ""
        words = set(query.casefold().split())
        hits = [
            (mid, text, len(words & set(text.casefold().split())))
            for mid, text in self.notes(uid).items()
        ]
        hits = drop_expired(
            sorted((h for h in hits if h[2]), key=lambda h: -h[2]),
            self.expiry.expired(uid),
            lambda h: h[0],
        )
        if not hits:
            return None
        text = "\n".join(f"- {t}" for _, t, _ in hits)
        return MemoryContext(
            text=text, count=len(hits), label="notebook", scores=tuple(float(s) for *_, s in hits)
        )

    def inspect_users(self) -> list[str]:
        return sorted(self._all())

    def inspect_memories(self, user_id: str) -> list[ProviderMemory]:
        dates = self.expiry.expiries(user_id)
        return [
            ProviderMemory(id=mid, text=text, expires_at=dates.get(mid))
            for mid, text in self.notes(user_id).items()
        ]

    def inspect_forget(self, user_id: str, memory_ids: Sequence[str]) -> int:
        notes = self.notes(user_id)
        gone = [m for m in memory_ids if m in notes]
        self.write(user_id, {k: v for k, v in notes.items() if k not in gone})
        self.expiry.forget(user_id, gone)
        return len(gone)

    def inspect_forget_user(self, user_id: str) -> int:
        count = len(self.notes(user_id))
        self.write(user_id, {})
        self.expiry.forget_user(user_id)
        return count

    def inspect_set_expiry(self, user_id: str, memory_id: str, expires_at: float | None) -> bool:
        if memory_id not in self.notes(user_id):
            return False
        self.expiry.set_date(user_id, memory_id, expires_at)
        return True


class PlainProvider(MemoryProvider):
    """Recalls plain text, lists nothing (like most service providers)."""

    name = "plain"

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        return MemoryContext(text="- the plain provider's note", count=1, label="plain")
