"""The sessions layer inside a real host: every turn lands in state.db, tools, health."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from hermes_core.host import MemoryHost
from hermes_core.layers.sessions.plugin import SessionsLayer, health_checks
from hermes_core.layers.sessions.store import open_configured
from hermes_core.scope import ALL_USERS
from hermes_core.settings.base import load_settings
from hermes_core.types import SessionInfo, Turn


@pytest.fixture
def host(home: Path) -> Any:
    h = MemoryHost.open(home)
    yield h
    h.close()


def test_turns_are_durable_when_after_turn_returns(host: Any, home: Path) -> None:
    with host.session(source="telegram", user_id="u42", model="m1", title="部署") as s:
        s.before_turn("deploy the billing service")
        s.after_turn("deploy the billing service", "Deployed to production.")
        # another connection sees the turn immediately: committed before return
        other = open_configured(home)
        conv = other.get_messages_as_conversation(s.id)
        assert [m["content"] for m in conv] == [
            "deploy the billing service",
            "Deployed to production.",
        ]
        record = other.get_session(s.id, user_id=ALL_USERS)
        assert record is not None
        assert (record.source, record.user_id, record.model, record.title) == (
            "telegram",
            "u42",
            "m1",
            "部署",
        )
        assert record.system_prompt == s.system_prompt()
        other.close()
        sid = s.id
    db = open_configured(home)
    ended = db.get_session(sid, user_id=ALL_USERS)
    assert ended is not None and ended.ended_at is not None and ended.end_reason
    db.close()


def test_session_search_tool_in_host_excludes_current(host: Any) -> None:
    with host.session() as old:
        old.after_turn("我们讨论了向量数据库的设计", "好的，用 FTS5 和 sqlite-vec。")
    with host.session(parent_id=None) as s:
        s.after_turn("数据库 again in this session", "ok")
        assert "session_search" in s.tool_names
        out = json.loads(s.call_tool("session_search", {"query": "数据库"}))
        assert out["success"] is True
        assert [r["session_id"] for r in out["results"]] == [old.id]
        browse = json.loads(s.call_tool("session_search", {}))
        assert s.id not in {r["session_id"] for r in browse["results"]}


def test_tool_messages_are_recorded(host: Any, home: Path) -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "terminal", "arguments": '{"cmd": "make test"}'},
    }
    turn = [
        {"role": "user", "content": "run the tests"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "terminal", "content": "42 passed"},
        {"role": "assistant", "content": "All 42 tests pass."},
    ]
    with host.session() as s:
        s.after_turn("run the tests", "All 42 tests pass.", turn)
        sid = s.id
    db = open_configured(home)
    rows = db.get_messages(sid)
    assert [m.role for m in rows] == ["user", "assistant", "tool", "assistant"]
    assert rows[2].tool_name == "terminal"
    record = db.get_session(sid, user_id=ALL_USERS)
    assert record is not None and record.tool_call_count == 1
    db.close()


def test_sync_is_idempotent_per_turn_number(home: Path) -> None:
    layer = SessionsLayer()
    settings = load_settings(home)
    layer.configure(settings, home)
    info = SessionInfo(id="s1", home=home, settings=settings)
    layer.on_session_start(info)
    turn = Turn(session_id="s1", number=1, user_text="hi", reply="hello")
    layer.sync(info, turn)
    layer.sync(info, turn)  # a resend
    db = layer.db()
    assert db is not None and len(db.get_messages("s1")) == 2
    layer.on_session_end(info, [], "new_session")
    record = db.get_session("s1", user_id=ALL_USERS)
    assert record is not None and record.end_reason == "new_session"
    assert layer.mark_compacted("s1", [m.id for m in db.get_messages("s1")]) == 2
    layer.close()


def test_disabled_layer_records_nothing(home: Path) -> None:
    layer = SessionsLayer()
    settings = load_settings(home, sessions={"enabled": False})
    layer.configure(settings, home)
    info = SessionInfo(id="s1", home=home, settings=settings)
    layer.on_session_start(info)
    layer.sync(info, Turn(session_id="s1", number=1, user_text="hi", reply="yo"))
    assert layer.register_tools(info) is None
    assert not (home / "state.db").exists()


@pytest.mark.sqlite_only  # the SQLite file itself
def test_health_checks(home: Path) -> None:
    open_configured(home).close()
    os.chmod(home / "state.db", 0o644)
    checks = {c.name: c for c in health_checks(home)}
    perm = checks["sessions: state.db permissions"]
    assert not perm.ok and "chmod 600" in perm.fix
    assert stat.S_IMODE((home / "state.db").stat().st_mode) == 0o600  # tightened
    assert checks["sessions: schema"].ok
    assert checks["sessions: full-text search (FTS5)"].ok
    assert all(c.ok for c in health_checks(home))


@pytest.mark.sqlite_only  # the SQLite file itself
def test_health_check_reports_damaged_file(home: Path) -> None:
    (home / "state.db").write_bytes(b"this is not a database" * 100)
    checks = health_checks(home)
    bad = [c for c in checks if not c.ok]
    assert bad and "mv" in bad[-1].fix


@pytest.mark.parametrize("kind", ["directory", "foreign"])
@pytest.mark.sqlite_only  # the SQLite file itself
def test_health_check_names_the_fix_for_unusable_or_foreign_files(home: Path, kind: str) -> None:
    import sqlite3

    if kind == "directory":
        (home / "state.db").mkdir()
    else:
        with sqlite3.connect(home / "state.db") as conn:
            conn.execute("CREATE TABLE kv (k TEXT, v TEXT)")
    check = {c.name: c for c in health_checks(home)}["sessions: state.db"]
    assert not check.ok
    assert ("mv " in check.fix) if kind == "directory" else ("HERMES_HOME" in check.fix)
