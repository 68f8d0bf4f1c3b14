"""The People list: every user a home knows, with counts and last activity."""

from __future__ import annotations

from pathlib import Path

from hermes_core import MemoryHost
from hermes_core.inspector.people import list_people


def test_people_lists_both_users_with_their_own_counts(seeded: Path, backend: str) -> None:
    with MemoryHost.open(seeded, load_entrypoints=False) as host:
        people = {p.user_id: p for p in list_people(host)}
    assert set(people) == {"alice", "bob"}
    alice, bob = people["alice"], people["bob"]
    assert (alice.user_entries, bob.user_entries) == (3, 1)
    assert (alice.sessions, bob.sessions) == (1, 1)
    assert alice.traced_turns == 2 and bob.traced_turns == 0
    assert alice.last_active is not None and bob.last_active is not None
    assert alice.provider_memories is None  # no provider


def test_an_empty_home_knows_nobody(home: Path) -> None:
    with MemoryHost.open(home, load_entrypoints=False) as host:
        assert list_people(host) == []
