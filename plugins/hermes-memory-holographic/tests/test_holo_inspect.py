"""holographic as an InspectableProvider and ExpiringProvider: facts listed per user, an
expired fact leaves prefetch, and "forget a subject" / "forget this user" leave no byte of
the phrase in the home (its FTS5 index, entities and WAL included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core import MemoryHost
from hermes_core.inspector.provider_memories import list_memories
from hermes_core.providers.inspect import expiring, inspectable
from hermes_core.testing.inspector import (
    PHRASE,
    PHRASE_ZH,
    expire_and_prove,
    forget_and_prove,
    forget_user_and_prove,
    memories_by_user,
    seed_memories,
)

FACTS = {
    "alice": [
        f"Alice is planning a trip to {PHRASE} in May.",
        f"Alice 想去{PHRASE_ZH}。",
        "Alice drinks tea.",
    ],
    "bob": ["Bob plays go on Sundays."],
}


@pytest.fixture
def holo_home(home: Path) -> Path:
    return seed_memories(home, "holographic", FACTS)


def test_facts_are_listed_per_user(holo_home: Path) -> None:
    with MemoryHost.open(holo_home) as host:
        lister = inspectable(host.provider)
        assert lister is not None and expiring(host.provider) is not None
        assert set(lister.inspect_users()) == {"alice", "bob"}
        texts = sorted(m.text for m in lister.inspect_memories("alice"))
        assert texts == sorted(FACTS["alice"])
        assert [m.text for m in lister.inspect_memories("bob")] == FACTS["bob"]
        assert list_memories(host, "alice", "zanzi").memories[0].text == FACTS["alice"][0]


def test_an_expired_fact_leaves_prefetch_and_stays_listed(holo_home: Path) -> None:
    expire_and_prove(holo_home, "alice", "bob", PHRASE, f"what do you know about {PHRASE}?")


def test_prefetch_reports_a_score_per_fact(holo_home: Path) -> None:
    with MemoryHost.open(holo_home) as host, host.session(user_id="alice") as s:
        s.before_turn(f"tell me about {PHRASE} and tea")
        (recalled,) = s.last_recall
        assert len(recalled.scores) == recalled.count > 0
        assert list(recalled.scores) == sorted(recalled.scores, reverse=True)


@pytest.mark.parametrize("phrase", [PHRASE, PHRASE_ZH])
def test_forget_reaches_holographic_and_leaves_no_bytes(holo_home: Path, phrase: str) -> None:
    forget_and_prove(holo_home, "alice", phrase)
    left = memories_by_user(holo_home)
    assert len(left["alice"]) == 2 and left["bob"] == FACTS["bob"]


def test_forget_user_removes_every_fact(holo_home: Path) -> None:
    assert forget_user_and_prove(holo_home, "alice", PHRASE) == 3
    assert memories_by_user(holo_home) == {"bob": FACTS["bob"]}


def test_the_cli_lists_and_expires_provider_memories(holo_home: Path) -> None:
    import json

    from click.testing import CliRunner

    from hermes_core.cli.main import cli

    runner = CliRunner()
    listed = runner.invoke(cli, ["memory", "provider-list", "--user", "alice", "--json"])
    assert listed.exit_code == 0, listed.output
    data = json.loads(listed.output)
    assert data["provider"] == "holographic" and data["can_expire"] is True
    assert sorted(m["text"] for m in data["memories"]) == sorted(FACTS["alice"])
    trip = next(m for m in data["memories"] if PHRASE in m["text"])
    bad = runner.invoke(cli, ["memory", "provider-expire", trip["id"], "soon", "--user", "alice"])
    assert bad.exit_code != 0 and "YYYY-MM-DD" in bad.output
    other = runner.invoke(
        cli, ["memory", "provider-expire", trip["id"], "2001-01-01", "--user", "bob"]
    )
    assert other.exit_code != 0 and "no provider memory" in other.output
    done = runner.invoke(
        cli, ["memory", "provider-expire", trip["id"], "2001-01-01", "--user", "alice"]
    )
    assert done.exit_code == 0 and "expired" in done.output
    table = runner.invoke(cli, ["memory", "provider-list", "--user", "alice", "-q", PHRASE])
    assert table.exit_code == 0 and "expired" in table.output and "tea" not in table.output
    cleared = runner.invoke(
        cli, ["memory", "provider-expire", trip["id"], "--clear", "--user", "alice"]
    )
    assert cleared.exit_code == 0 and "cleared" in cleared.output
    data = json.loads(
        runner.invoke(cli, ["memory", "provider-list", "--user", "alice", "--json"]).output
    )
    assert all(m["expires_at"] is None and not m["expired"] for m in data["memories"])
