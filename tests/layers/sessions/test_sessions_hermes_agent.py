"""layers/sessions/hermes_agent.py on a Hermes Agent-shaped state.db (the real Hermes Agent
0.19.0 drives the same code in tests/compat under `tox -e hermes-agent`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.hermes_agent import (
    HermesAgentHomeError,
    import_hermes_agent,
    index_hermes_agent,
)
from hermes_core.layers.sessions.search import SessionSearch
from hermes_core.layers.sessions.store import open_configured
from hermes_core.scope import ALL_USERS


def _agent_home(home: Path) -> Path:
    path = home / "state.db"
    call = [{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE schema_version (version INTEGER NOT NULL);
            INSERT INTO schema_version VALUES (22);
            CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT,
                session_key TEXT, model TEXT, system_prompt TEXT, parent_session_id TEXT,
                started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, title TEXT);
            CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT,
                role TEXT, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
                timestamp REAL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
                active INTEGER DEFAULT 1, compacted INTEGER DEFAULT 0);
            CREATE TABLE compression_locks (session_id TEXT PRIMARY KEY);
            """
        )
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, title) VALUES ('p', 'cli', 1, 'Plan')"
        )
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, title, parent_session_id) "
            "VALUES ('c', 'cli', 2, '续篇', 'p')"
        )
        rows = [
            ("p", "user", "deploy the mango service", None, None, None, 1.1),
            ("p", "assistant", None, json.dumps(call), None, None, 1.2),
            ("p", "tool", "mango deployed", None, "c1", "terminal", 1.3),
            ("c", "user", "芒果服务已经上线了吗", None, None, None, 2.1),
        ]
        conn.executemany(
            "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, "
            "tool_name, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    conn.close()
    return path


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


@pytest.mark.parametrize(("query", "sid"), [("mango", "p"), ("芒果", "c")])
def test_indexed_for_search_without_writing_its_file(tmp_path: Path, query: str, sid: str) -> None:
    state = _agent_home(tmp_path)
    before = _dump(state)
    db = SessionDB.open(tmp_path)
    try:
        report = index_hermes_agent(db, tmp_path)
        assert report is not None and report.indexed == 2
        again = index_hermes_agent(db, tmp_path)
        assert again is not None and again.indexed == 0 and again.unchanged == 2
        out = SessionSearch(db).run({"query": query}, "current", user_id=None)
        assert sid in json.dumps(out, ensure_ascii=False)
    finally:
        db.close()
    assert _dump(state) == before


def test_import_keeps_titles_lineage_and_tool_calls(tmp_path: Path, home: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    _agent_home(agent)
    ours = tmp_path / "ours"  # a hermes-core state.db: never taken for Hermes Agent's
    ours.mkdir()
    SessionDB.open(ours).close()
    db = open_configured(home)  # the archive under test (either backend)
    try:
        report = import_hermes_agent(db, agent)
        assert [(r.session_id, r.messages, r.status) for r in report] == [
            ("p", 3, "imported"),
            ("c", 1, "imported"),
        ]
        child = db.get_session("c", user_id=ALL_USERS)
        assert child is not None and child.title == "续篇" and child.parent_session_id == "p"
        msgs = db.get_messages("p", include_inactive=True)
        assert msgs[1].tool_calls and "terminal" in json.dumps(msgs[1].tool_calls)
        assert msgs[2].tool_call_id == "c1"
        assert {r.status for r in import_hermes_agent(db, agent / "state.db")} == {
            "already imported"
        }
        with pytest.raises(HermesAgentHomeError, match="hermes-core's"):
            import_hermes_agent(db, ours)
    finally:
        db.close()
