"""mem0 in mode oss as an InspectableProvider and ExpiringProvider: memories listed per user
with earlier versions shown as replaced, an expired memory leaves prefetch, and "forget a
subject" / "forget this user" leave no byte of the phrase in the home nor in MEM0_DIR
(mem0's chroma files and its history/messages SQLite included)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hermes_memory_mem0 import Mem0Provider
from mem0_testutil import ctx

from hermes_core import MemoryHost
from hermes_core.host import Session
from hermes_core.providers.inspect import expiring, inspectable
from hermes_core.testing import inspector
from hermes_core.testing.inspector import PHRASE, PHRASE_ZH, seed_memories

FACTS = {
    "alice": [f"Alice plans a trip to {PHRASE} in May.", f"Alice 想去{PHRASE_ZH}。"],
    "bob": ["Bob plays go on Sundays."],
}


def _mem0_add(session: Session, fact: str) -> None:
    """Straight into mem0 (USER.md lines are not recalled twice)."""
    assert json.loads(session.call_tool("mem0_add", {"content": fact}))["success"]


@pytest.fixture
def mem0_home(home: Path) -> Path:
    config = "provider_timeout: 120\nprefetch_timeout: 60"
    return seed_memories(home, "mem0", FACTS, config=config, add=_mem0_add, flush_seconds=60)


def test_local_memories_are_listed_per_user_with_replacements(mem0_home: Path) -> None:
    with MemoryHost.open(mem0_home) as host:
        provider = host.provider
        assert isinstance(provider, Mem0Provider)
        lister = inspectable(provider)
        assert lister is not None and expiring(provider) is not None
        assert set(lister.inspect_users()) == {"alice", "bob"}
        assert sorted(m.text for m in lister.inspect_memories("alice")) == sorted(FACTS["alice"])
        assert [m.text for m in lister.inspect_memories("bob")] == FACTS["bob"]
        bob_go = lister.inspect_memories("bob")[0]
        with host.session(user_id="bob") as s:
            spec = {t.name: t for t in provider.register_tools(s.info)}["mem0_update"]
            done = json.loads(
                spec.handler({"memory_id": bob_go.id, "content": "Bob plays chess."}, ctx(s.info))
            )
            assert done["success"], done
        listed = lister.inspect_memories("bob")
        old = next(m for m in listed if not m.active)
        assert old.text == "Bob plays go on Sundays." and old.superseded_by == bob_go.id
        assert old.replaced_at and old.replaced_at > time.time() - 600
        assert next(m for m in listed if m.active).text == "Bob plays chess."


def test_remote_modes_are_not_listed(home: Path) -> None:
    provider = Mem0Provider(Mem0Provider.Settings(mode="host", host="http://127.0.0.1:9"), home)
    assert inspectable(provider) is None and expiring(provider) is None


def test_an_expired_memory_leaves_prefetch(mem0_home: Path) -> None:
    with MemoryHost.open(mem0_home) as host, host.session(user_id="alice") as s:
        s.before_turn(f"where does Alice travel, {PHRASE}?")
        (recalled,) = s.last_recall
        assert len(recalled.scores) == recalled.count > 0
    inspector.expire_and_prove(
        mem0_home, "alice", "bob", PHRASE, f"where does Alice travel, {PHRASE}?"
    )


@pytest.mark.parametrize("phrase", [PHRASE, PHRASE_ZH])
def test_forget_leaves_no_bytes_in_the_home_or_mem0_dir(mem0_home: Path, phrase: str) -> None:
    inspector.forget_and_prove(mem0_home, "alice", phrase, roots=(Path(os.environ["MEM0_DIR"]),))
    left = inspector.memories_by_user(mem0_home)
    assert len(left["alice"]) == 1 and left["bob"] == FACTS["bob"]


def test_forget_user_removes_every_memory(mem0_home: Path) -> None:
    roots = (Path(os.environ["MEM0_DIR"]),)
    assert inspector.forget_user_and_prove(mem0_home, "alice", PHRASE, roots=roots) == 2
    assert inspector.memories_by_user(mem0_home) == {"bob": FACTS["bob"]}
