"""``hermes-memory sessions import --from hermes-agent PATH``: every session Hermes Agent wrote,
with titles, lineage and tool calls; a re-run writes nothing; its file is only read."""

from __future__ import annotations

import json
from pathlib import Path

from home_kit import make_agent_home, run_hermes, run_hermes_agent, snapshot

from hermes_core.layers.sessions.db import SessionDB
from hermes_core.scope import ALL_USERS


def test_import_copies_every_session_with_titles_lineage_and_tool_calls(tmp_path: Path) -> None:
    agent_home = make_agent_home(tmp_path)
    run_hermes_agent(agent_home, "more")  # three sessions, one continued after a while
    before = snapshot(agent_home / "state.db")
    ours = tmp_path / "our-home"
    ours.mkdir()

    done = run_hermes(
        ours, "sessions", "import", "--from", "hermes-agent", str(agent_home), "--json"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(r["session_id"] for r in report) == ["ha-s1", "ha-s2", "ha-s3"]
    assert all(r["status"] == "imported" for r in report)
    assert {r["session_id"]: r["messages"] for r in report} == {
        "ha-s1": 5,
        "ha-s2": 2,
        "ha-s3": 1,
    }

    db = SessionDB.open(ours)
    try:
        s1, s2 = (
            db.get_session("ha-s1", user_id=ALL_USERS),
            db.get_session("ha-s2", user_id=ALL_USERS),
        )
        assert s1 is not None and s2 is not None
        assert s1.title == "Deploy notes" and s2.title == "部署笔记 #2"
        assert s2.parent_session_id == "ha-s1"  # lineage
        assert db.lineage("ha-s2", user_id=ALL_USERS)[0] == "ha-s1"
        rows = db.get_messages("ha-s1", include_inactive=True)
        call = next(r for r in rows if r.role == "assistant" and r.tool_calls)
        calls = (
            call.tool_calls
            if isinstance(call.tool_calls, list)
            else json.loads(str(call.tool_calls))
        )
        assert calls[0]["id"] == "call_1" and calls[0]["function"]["name"] == "terminal"
        assert json.loads(calls[0]["function"]["arguments"]) == {"command": "make deploy"}
        result = next(r for r in rows if r.role == "tool")
        assert result.tool_call_id == "call_1" and result.content == "deployed kumquat to staging"
        assert s1.system_prompt == "You are Hermes."
        assert s1.model == "gpt-test"
    finally:
        db.close()

    # The imported copies are searchable (EN and ZH), and a re-run writes nothing.
    hit = run_hermes(ours, "sessions", "search", "kumquat", "--json")
    assert [h["session_id"] for h in json.loads(hit.stdout)["results"]] == ["ha-s1"]
    zh = run_hermes(ours, "sessions", "search", "数据库备份", "--json")
    assert [h["session_id"] for h in json.loads(zh.stdout)["results"]] == ["ha-s2"]
    again = run_hermes(
        ours, "sessions", "import", "--from", "hermes-agent", str(agent_home / "state.db"), "--json"
    )
    assert {r["status"] for r in json.loads(again.stdout)} == {"already imported"}

    assert snapshot(agent_home / "state.db") == before
    assert run_hermes_agent(agent_home, "check")["sessions"]["ha-s1"]["messages"] == 5


def test_import_refuses_what_is_not_a_hermes_agent_home(tmp_path: Path) -> None:
    ours = tmp_path / "ours"
    ours.mkdir()
    empty = tmp_path / "empty"
    empty.mkdir()
    done = run_hermes(ours, "sessions", "import", "--from", "hermes-agent", str(empty))
    assert done.returncode != 0
    assert "no Hermes Agent state.db" in done.stderr and "~/.hermes" in done.stderr
    # our own archive is not Hermes Agent's either: the message says whose it is
    run_hermes(ours, "sessions", "list")
    mine = run_hermes(empty, "sessions", "import", "--from", "hermes-agent", str(ours))
    assert mine.returncode != 0 and "hermes-core's" in mine.stderr
