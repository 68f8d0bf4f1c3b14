"""A home Hermes Agent 0.19.0 wrote: searched here, its state.db left intact (its own tables,
schema version and bytes), its own ``SessionDB`` still reads it."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from home_kit import WRITER, make_agent_home, run_hermes, run_hermes_agent, snapshot

from hermes_core import MemoryHost
from hermes_core.homefiles import OWN_DB, inspect_state_db, own_db_path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_home_is_recognised_and_our_tables_go_elsewhere(tmp_path: Path) -> None:
    agent_home = make_agent_home(tmp_path)
    found = inspect_state_db(agent_home)
    assert found.is_hermes_agent and found.schema == 22 and found.sessions == 2
    assert found.describe().startswith("this state.db was written by Hermes Agent, schema 22")
    assert own_db_path(agent_home) == agent_home / OWN_DB


def test_searching_and_using_the_home_never_changes_its_state_db(tmp_path: Path) -> None:
    agent_home = make_agent_home(tmp_path)
    state = agent_home / "state.db"
    before, sha = snapshot(state), _sha(state)

    listed = run_hermes(agent_home, "sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "written by Hermes Agent, schema 22" in listed.stderr
    assert {row["id"] for row in json.loads(listed.stdout)} == {"ha-s1"}  # no-user scope
    everyone = run_hermes(agent_home, "sessions", "list", "--all-users", "--json")
    assert {row["id"] for row in json.loads(everyone.stdout)} == {"ha-s1", "ha-s2"}

    found = run_hermes(agent_home, "sessions", "search", "kumquat", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["results"]
    assert [hit["session_id"] for hit in hits] == ["ha-s1"]

    # ZH, and per-user isolation: the Telegram user's session is theirs alone.
    zh = run_hermes(agent_home, "sessions", "search", "数据库备份", "--user", "tg-42", "--json")
    assert [h["session_id"] for h in json.loads(zh.stdout)["results"]] == ["ha-s2"]
    other = run_hermes(agent_home, "sessions", "search", "数据库备份", "--json")
    assert json.loads(other.stdout)["results"] == []

    doctor = run_hermes(agent_home, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)}
    home_check = checks["sessions: Hermes Agent home"]
    assert home_check["ok"]
    assert home_check["detail"].startswith("this state.db was written by Hermes Agent, schema 22")
    assert all(c["ok"] for c in checks.values() if c["name"].startswith("sessions"))
    assert "upgrade hermes-core" not in doctor.stdout

    # A whole session of ours: memory tool (archive tables), session_search tool, a turn.
    host = MemoryHost.open(agent_home, load_entrypoints=False, activate_provider=False)
    try:
        with host.session(source="cli") as s:
            s.system_prompt()
            out = json.loads(s.call_tool("session_search", {"query": "kumquat staging"}))
            assert out["success"] and "ha-s1" in json.dumps(out, ensure_ascii=False)
            wrote = json.loads(
                s.call_tool(
                    "memory", {"action": "add", "target": "memory", "content": "Quince is fine."}
                )
            )
            assert wrote["success"], wrote
            s.after_turn("remember quince", "Noted.", [])
    finally:
        host.close()

    after = snapshot(state)
    assert after == before  # every table, row, schema version, journal mode
    assert _sha(state) == sha  # and every byte of the file
    own = sqlite3.connect(agent_home / OWN_DB)
    tables = {r[0] for r in own.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    own.close()
    assert {"sessions", "messages", "hermes_agent_mirror"} <= tables

    # Hermes Agent's own SessionDB still reads (and searches) its file.
    check = run_hermes_agent(agent_home, "check")
    assert check["schema"] == 22 and check["hits"] >= 1
    assert check["sessions"]["ha-s1"] == {"title": "Deploy notes", "messages": 4}
    assert check["sessions"]["ha-s2"]["messages"] == 2


def test_sessions_hermes_agent_writes_later_are_indexed_incrementally(tmp_path: Path) -> None:
    agent_home = make_agent_home(tmp_path)
    first = run_hermes(agent_home, "sessions", "search", "kumquat", "--json")
    assert first.returncode == 0, first.stderr
    run_hermes_agent(agent_home, "more")  # Hermes Agent keeps writing to its home
    quince = run_hermes(agent_home, "sessions", "search", "quince rollback", "--json")
    assert [h["session_id"] for h in json.loads(quince.stdout)["results"]] == ["ha-s1"]
    persimmon = run_hermes(agent_home, "sessions", "search", "persimmon", "--json")
    assert [h["session_id"] for h in json.loads(persimmon.stdout)["results"]] == ["ha-s3"]
    shown = run_hermes(agent_home, "sessions", "show", "ha-s1", "--json")
    assert shown.returncode == 0, shown.stderr
    assert len(json.loads(shown.stdout)["messages"]) == 5  # re-copied once, not duplicated


def test_search_runs_while_hermes_agent_holds_a_write_transaction(tmp_path: Path) -> None:
    """WAL readers: our search neither waits for nor blocks Hermes Agent's writer, sees only
    what it committed, and picks the row up once it commits."""
    agent_home = make_agent_home(tmp_path)
    run_hermes(agent_home, "sessions", "list")  # first index
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(agent_home)
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), "hold"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "ready"
        during = run_hermes(agent_home, "sessions", "search", "tamarind", "--json")
        assert during.returncode == 0, during.stderr
        assert json.loads(during.stdout)["results"] == []  # uncommitted: not seen
        kumquat = run_hermes(agent_home, "sessions", "search", "kumquat", "--json")
        assert [h["session_id"] for h in json.loads(kumquat.stdout)["results"]] == ["ha-s1"]
        writer.stdin.write("go\n")
        writer.stdin.flush()
        assert json.loads(writer.stdout.readline())["committed"] is True
    finally:
        writer.wait(timeout=60)
    assert writer.returncode == 0, writer.stderr.read() if writer.stderr else ""
    after = run_hermes(agent_home, "sessions", "search", "tamarind", "--json")
    assert [h["session_id"] for h in json.loads(after.stdout)["results"]] == ["ha-s1"]
