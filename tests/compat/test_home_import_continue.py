"""Issue 27 point 10: ``hermes-memory sessions import --from hermes-agent`` after Hermes Agent
continued an imported session adds the new messages (no second copy), and the first import
after any ``sessions`` command in Hermes Agent's own home reports what it really imported.

Every byte of the homes is written by Hermes Agent 0.19.0's own ``SessionDB``
(hermes_agent_writer.py); our CLI runs as a subprocess (``python -m hermes_core``).
"""

from __future__ import annotations

import json
from pathlib import Path

from home_kit import make_agent_home, run_hermes, run_hermes_agent

from hermes_core.layers.sessions.db import SessionDB
from hermes_core.scope import ALL_USERS


def imported(home: Path, source: Path, *extra: str) -> list[dict[str, object]]:
    done = run_hermes(home, "sessions", "import", "--from", "hermes-agent", str(source), *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in extra else [{"text": done.stdout}]


def statuses(report: list[dict[str, object]]) -> dict[object, tuple[object, object]]:
    return {r["session_id"]: (r["status"], r["messages"]) for r in report}


def test_a_continued_session_gets_its_new_messages(tmp_path: Path) -> None:
    agent_home = make_agent_home(tmp_path)
    ours = tmp_path / "our-home"
    ours.mkdir()
    first = imported(ours, agent_home, "--json")
    assert statuses(first) == {"ha-s1": ("imported", 4), "ha-s2": ("imported", 2)}

    run_hermes_agent(agent_home, "more")  # Hermes Agent continues ha-s1, starts ha-s3
    again = imported(ours, agent_home, "--json")
    assert statuses(again) == {
        "ha-s1": ("continued", 1),
        "ha-s2": ("already imported", 2),
        "ha-s3": ("imported", 1),
    }
    db = SessionDB.open(ours)
    try:
        ids = sorted(s.id for s in db.list_sessions(limit=50, user_id=ALL_USERS))
        assert ids == ["ha-s1", "ha-s2", "ha-s3"]  # no second copy of ha-s1
        texts = [m.content for m in db.get_messages("ha-s1", include_inactive=True)]
        assert len(texts) == 5 and texts[-1] == "And the rollback command for quince?"
        assert db.get_session("ha-s1", user_id=ALL_USERS).title == "Deploy notes"  # type: ignore[union-attr]
    finally:
        db.close()
    hit = run_hermes(ours, "sessions", "search", "quince", "--json")
    assert [h["session_id"] for h in json.loads(hit.stdout)["results"]] == ["ha-s1"]
    # a third run writes nothing; the text report says so in words
    text = imported(ours, agent_home)[0]["text"]
    assert "imported 0 of 3" in str(text) and "0 continued" in str(text)
    assert "3 already imported" in str(text)


def test_first_import_after_a_sessions_command_in_hermes_agents_home(tmp_path: Path) -> None:
    agent_home = make_agent_home(tmp_path)
    listed = run_hermes(agent_home, "sessions", "list", "--json")  # mirrors its sessions
    assert listed.returncode == 0, listed.stderr
    assert {s["id"] for s in json.loads(listed.stdout)} == {"ha-s1"}  # ha-s2 is tg-42's

    text = imported(agent_home, agent_home)[0]["text"]
    assert "imported 2 of 2 Hermes Agent session(s), 6 message(s)" in str(text), text
    again = imported(agent_home, agent_home, "--json")
    assert statuses(again) == {
        "ha-s1": ("already imported", 4),
        "ha-s2": ("already imported", 2),
    }
    everyone = run_hermes(agent_home, "sessions", "list", "--json")
    assert sorted(s["id"] for s in json.loads(everyone.stdout)) == ["ha-s1", "ha-s2"]
