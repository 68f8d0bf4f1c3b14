"""The people a home knows: every user id found in the memory store, the staged writes, the
memory archive, the session archive, the provider and the recall trace, with counts and the
time of their last activity. For operators (``hermes-memory ui``'s People page); every other view
is for one user at a time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from hermes_core import recall_trace
from hermes_core.layers.memory.archive import MemoryArchive
from hermes_core.layers.memory.backends import open_pending, pending_users, store_user_ids
from hermes_core.layers.memory.engine import MemoryEngine
from hermes_core.providers.inspect import inspectable

from .forget import open_archive

if TYPE_CHECKING:
    from hermes_core.host import MemoryHost


@dataclass(frozen=True)
class Person:
    """One user id (``None``: the no-user scope) and what the home holds of them."""

    user_id: str | None
    memory_entries: int
    user_entries: int
    pending: int
    archived: int
    sessions: int
    provider_memories: int | None
    traced_turns: int
    last_active: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_people(host: MemoryHost) -> list[Person]:
    """Every user the home knows, the no-user scope first when it holds anything."""
    home, settings = host.home, host.settings
    ids: set[str | None] = set(store_user_ids(home, settings.memory))
    ids |= set(pending_users(home, settings.memory))
    archived = {(uid or None): (n, at) for uid, n, at in MemoryArchive(home).users()}
    ids |= set(archived)
    sessions: dict[str | None, tuple[int, float | None]] = {}
    archive = open_archive(host)
    if archive is not None:
        try:
            for row in archive.user_scopes():
                sessions[row["user_id"]] = (int(row["sessions"]), row["last_active"])
        finally:
            archive.close()
    ids |= set(sessions)
    lister = inspectable(host.provider)
    provider_users = set(lister.inspect_users()) if lister is not None else set()
    ids |= provider_users
    ids |= set(recall_trace.traced_users(home))
    people: list[Person] = []
    for uid in sorted(ids, key=lambda u: (u is not None, u or "")):
        engine = MemoryEngine(home, settings.memory, uid)
        trace = recall_trace.load(home, uid)
        times = [
            t
            for t in (
                sessions.get(uid, (0, None))[1],
                archived.get(uid, (0, None))[1],
                trace[-1].at if trace else None,
            )
            if t
        ]
        provider_count = None
        if lister is not None and uid in provider_users:
            provider_count = len([m for m in lister.inspect_memories(uid) if m.active])
        person = Person(
            user_id=uid,
            memory_entries=len(engine.store("memory").entries()),
            user_entries=len(engine.store("user").entries()),
            pending=len(open_pending(home, settings.memory, uid).list()),
            archived=archived.get(uid, (0, 0.0))[0],
            sessions=sessions.get(uid, (0, None))[0],
            provider_memories=provider_count,
            traced_turns=len(trace),
            last_active=max(times) if times else None,
        )
        if uid is not None or any(
            (person.memory_entries, person.user_entries, person.sessions, person.archived)
        ):
            people.append(person)
    return people


__all__ = ["Person", "list_people"]
