"""Nothing dropped silently (issue 13, point 2): odd values are sanitised and stored, turns are
never merged, the archive's failures reach the caller, unusable or foreign files are refused."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core import MemoryHost, hookimpl
from hermes_core.layers.sessions.db import (
    DB_FILE,
    SCHEMA_VERSION,
    SessionDB,
    SessionStoreReadOnly,
    SessionStoreUnusable,
)
from hermes_core.layers.sessions.sanitize import INT_MAX
from hermes_core.layers.sessions.search import SessionSearch
from hermes_core.scope import ALL_USERS
from hermes_core.types import SessionInfo, Turn

# --------------------------------------------------------------------------- sanitising


def test_surrogates_and_undecodable_bytes_become_replacement_characters(db: SessionDB) -> None:
    tool_output = b"ok \xff\xfe caf\xc3\xa9 \xe4\xbd\xa0".decode("utf-8", "surrogateescape")
    pair = "emoji \ud83d\ude00 and lone \ud800 中文"
    db.append_messages(
        "s",
        [
            {"role": "user", "content": pair},
            {"role": "tool", "tool_call_id": "c1", "name": "terminal", "content": tool_output},
            {"role": "assistant", "content": b"bytes \x80 reply \xe5\xae\x8c"},
        ],
        user_id=ALL_USERS,
    )
    stored = [m.content for m in db.get_messages("s")]
    assert stored[0] == "emoji 😀 and lone \ufffd 中文"
    assert stored[1] == "ok \ufffd\ufffd café 你"
    assert stored[2] == "bytes \ufffd reply 完"
    found = SessionSearch(db).run({"query": "中文"})
    assert [r["session_id"] for r in found["results"]] == ["s"]


def test_non_string_fields_are_stored_as_strings(db: SessionDB) -> None:
    call = {"id": 7, "type": "function", "function": {"name": "读取", "arguments": {"p": 1}}}
    db.append_messages(
        "s",
        [
            {"role": "assistant", "content": None, "tool_calls": [call], "finish_reason": 3},
            {"role": "tool", "tool_call_id": 12345, "name": "读取", "content": "内容 content"},
            {"role": "assistant", "content": "done", "finish_reason": {"type": "stop"}},
        ],
        user_id=ALL_USERS,
    )
    rows = db.get_messages("s")
    assert rows[0].finish_reason == "3"
    assert rows[0].tool_calls == [
        {"id": 7, "type": "function", "function": {"name": "读取", "arguments": {"p": 1}}}
    ]
    assert rows[1].tool_call_id == "12345" and rows[1].tool_name == "读取"
    assert json.loads(rows[2].finish_reason or "") == {"type": "stop"}


@pytest.mark.parametrize(
    "content",
    [
        {"answer": 42, "说明": "字典内容"},
        [{"kind": "audio", "data": "xyz"}, "文本 text"],
        ["纯文本", {"type": "text", "text": "part two"}],
    ],
)
def test_dict_and_list_content_is_kept_whole(db: SessionDB, content: Any) -> None:
    db.append_messages("s", [{"role": "tool", "content": content}], user_id=ALL_USERS)
    stored = db.get_messages("s")[0].content
    if isinstance(content, list) and all(isinstance(p, str) or "text" in p for p in content):
        assert stored == "纯文本\npart two"
    else:
        assert json.loads(stored) == content


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "yesterday", 1e300, -5.0, True])
def test_bad_timestamps_become_now(db: SessionDB, bad: Any) -> None:
    before = time.time()
    db.append_messages(
        "s", [{"role": "user", "content": "时间 time", "timestamp": bad}], user_id=ALL_USERS
    )
    db.append_messages("t", [{"role": "user", "content": "base"}], timestamp=bad, user_id=ALL_USERS)
    for sid in ("s", "t"):
        ts = db.get_messages(sid)[0].timestamp
        assert math.isfinite(ts) and before - 1 <= ts <= time.time() + 1


def test_out_of_range_integers_are_clamped(db: SessionDB) -> None:
    db.append_messages(
        "s",
        [
            {"role": "user", "content": "big", "token_count": 10**30},
            {"role": "user", "content": "negative", "token_count": -4},
            {"role": "user", "content": "nan", "token_count": math.nan},
        ],
        user_id=ALL_USERS,
    )
    counts = [m.token_count for m in db.get_messages("s")]
    assert counts[0] == INT_MAX and counts[1] == 0 and isinstance(counts[2], int)
    db.add_token_usage("s", 10**40, -3)
    record = db.get_session("s", user_id=ALL_USERS)
    assert record is not None and record.input_tokens == 2**53 and record.output_tokens == 0


def test_something_that_is_not_a_message_raises_and_writes_nothing(db: SessionDB) -> None:
    with pytest.raises(Exception, match="message 1 is a int"):
        db.append_messages("s", [{"role": "user", "content": "first"}, 42], user_id=ALL_USERS)
    assert db.get_messages("s") == []


# --------------------------------------------------------------------------- redaction


SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"


def test_secrets_are_redacted_by_default(db: SessionDB) -> None:
    db.append_messages(
        "s",
        [
            {"role": "user", "content": f"my key is {SECRET} 请记住"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "env", "arguments": json.dumps({"key": SECRET})}}
                ],
            },
        ],
        user_id=ALL_USERS,
    )
    dump = json.dumps([m.to_dict() for m in db.get_messages("s")], ensure_ascii=False)
    assert SECRET not in dump and "[redacted]" in dump and "请记住" in dump
    assert SessionSearch(db).run({"query": "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"})["count"] == 0


def test_redaction_can_be_turned_off(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("sessions:\n  redact_secrets: false\n", "utf-8")
    with MemoryHost.open(hermes_home) as host, host.session(session_id="v1") as session:
        session.after_turn(f"keep {SECRET} verbatim 原样", "ok")
    db = SessionDB.open(hermes_home)
    assert SECRET in db.get_messages("v1")[0].content
    db.close()


# --------------------------------------------------------------------------- turns


def test_after_turn_without_before_turn_is_a_new_turn_each_time(memory_host: MemoryHost) -> None:
    session = memory_host.session(session_id="loop")
    first = session.after_turn("同一句话 same words", "reply")
    second = session.after_turn("同一句话 same words", "reply")
    session.before_turn("third")
    third = session.after_turn("third", "reply 3")
    assert (first.number, second.number, third.number) == (1, 2, 3)
    db = SessionDB.open(memory_host.home)
    assert [m.content for m in db.get_messages("loop")] == [
        "同一句话 same words",
        "reply",
        "同一句话 same words",
        "reply",
        "third",
        "reply 3",
    ]
    db.close()
    session.close()


def test_a_resent_turn_is_stored_once_but_distinct_turns_never_merge(home: Path) -> None:
    from hermes_core.layers.sessions.plugin import SessionsLayer
    from hermes_core.settings.base import load_settings

    settings = load_settings(home)
    layer = SessionsLayer()
    layer.configure(settings, home)
    info = SessionInfo(id="s", home=home, settings=settings)
    turn = Turn(session_id="s", number=1, user_text="你好", reply="hi")
    layer.sync(info, turn)
    layer.sync(info, turn)  # a resend
    other = SessionsLayer()  # a second instance (another host on the same home)
    other.configure(settings, home)
    other.sync(info, turn)
    # the same number with other content (e.g. a resumed session restarting at 1): kept
    layer.sync(info, Turn(session_id="s", number=1, user_text="你好", reply="hi again"))
    db = layer.db()
    assert db is not None
    assert [m.content for m in db.get_messages("s")] == ["你好", "hi", "你好", "hi again"]
    layer.close()
    other.close()


class Exploding:
    """A third-party plugin whose sync always fails: isolated, never fails the turn."""

    calls = 0

    @hookimpl
    def sync(self) -> None:
        Exploding.calls += 1
        raise RuntimeError("third-party bug")


def test_archive_failure_reaches_the_caller_third_party_failure_does_not(
    memory_host: MemoryHost,
) -> None:
    memory_host.facade.register(Exploding(), name="exploding")
    session = memory_host.session(session_id="s1")
    session.after_turn("fine 没问题", "ok")  # the third-party failure is isolated
    assert Exploding.calls == 1
    db = SessionDB.open(memory_host.home)
    db.create_session("s-other", user_id="someone-else")
    db.close()
    other = memory_host.session(session_id="s-other")  # id owned by another user scope
    with pytest.raises(Exception, match="another user scope"):
        other.after_turn("lost? 丢失?", "no: the caller knows")
    assert Exploding.calls == 2  # the other hooks still ran
    session.close()
    other.close()


def test_archive_unavailable_at_turn_time_raises_with_the_fix(memory_host: MemoryHost) -> None:
    session = memory_host.session(session_id="s1")
    layer = memory_host.facade.pm.get_plugin("hermes_core.layers.sessions.plugin")
    layer.close()
    (memory_host.home / DB_FILE).unlink()
    (memory_host.home / DB_FILE).mkdir()
    with pytest.raises(SessionStoreUnusable, match="is a directory"):
        session.after_turn("where does this go? 去哪里", "nowhere")
    os.rmdir(memory_host.home / DB_FILE)
    session.close()


# --------------------------------------------------------------------------- unusable files


def test_a_directory_or_fifo_is_refused_at_open(tmp_path: Path) -> None:
    (tmp_path / DB_FILE).mkdir()
    with pytest.raises(SessionStoreUnusable, match=r"is a directory.*mv "):
        SessionDB.open(tmp_path)
    other = tmp_path / "fifo-home"
    other.mkdir()
    os.mkfifo(other / DB_FILE)
    with pytest.raises(SessionStoreUnusable, match=r"is a FIFO.*mv "):
        SessionDB.open(other)


def test_an_unreadable_file_is_refused_with_the_fix(tmp_path: Path) -> None:
    SessionDB.open(tmp_path).close()
    os.chmod(tmp_path / DB_FILE, 0o000)
    try:
        if os.access(tmp_path / DB_FILE, os.R_OK):
            pytest.skip("running as root: permissions are not enforced")
        with pytest.raises(SessionStoreUnusable, match="chmod 600"):
            SessionDB.open(tmp_path)
    finally:
        os.chmod(tmp_path / DB_FILE, 0o600)


def test_a_truncated_file_is_refused_and_kept(tmp_path: Path) -> None:
    db = SessionDB.open(tmp_path)
    for i in range(200):
        db.append_messages(
            f"s{i}", [{"role": "user", "content": f"消息 message {i} " * 20}], user_id=ALL_USERS
        )
    db.close()
    path = tmp_path / DB_FILE
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(SessionStoreUnusable, match=r"truncated.*restore"):
        SessionDB.open(tmp_path)
    assert path.read_bytes() == data[: len(data) // 2]


def test_a_file_growing_under_a_checkpoint_is_not_called_truncated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process checkpointing its WAL writes page 1 (the new size) before the pages
    that extend the file: opening in that instant must wait, not refuse (seen with 8
    concurrent writers); a file that stays short is still refused."""
    import threading

    from hermes_core.layers.sessions import files

    db = SessionDB.open(tmp_path)
    for i in range(50):
        db.append_messages(
            f"s{i}", [{"role": "user", "content": f"message {i} " * 40}], user_id=ALL_USERS
        )
    db.close()
    path = tmp_path / DB_FILE
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 4096])  # header promises one page more
    Path(str(path) + "-wal").write_bytes(b"")  # a writer is active

    def finish_checkpoint() -> None:
        with open(path, "ab") as fh:  # the last page lands; nothing before it changes
            fh.write(data[len(data) - 4096 :])

    grower = threading.Timer(0.2, finish_checkpoint)
    grower.start()
    files.check_file(path)  # waits for the checkpoint to finish writing
    grower.join()
    path.write_bytes(data[: len(data) - 4096])
    monkeypatch.setattr(files, "CHECKPOINT_GRACE_S", 0.2)
    with pytest.raises(SessionStoreUnusable, match="truncated"):
        files.check_file(path)  # still short after the grace: really truncated


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    (tmp_path / DB_FILE).write_text("这不是数据库 not a database\n" * 40, encoding="utf-8")
    with pytest.raises(SessionStoreUnusable, match="not a readable SQLite database"):
        SessionDB.open(tmp_path)


# --------------------------------------------------------------------------- not ours


def _snapshot(path: Path) -> tuple[bytes, list[Any]]:
    with sqlite3.connect(path) as conn:
        schema = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    return path.read_bytes(), schema


def test_a_newer_schema_is_read_but_never_written(tmp_path: Path) -> None:
    db = SessionDB.open(tmp_path)
    db.append_messages("s", [{"role": "user", "content": "旧的 old words"}], user_id=ALL_USERS)
    db.close()
    path = tmp_path / DB_FILE
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("UPDATE schema_version SET version=?", (SCHEMA_VERSION + 1,))
    before = _snapshot(path)
    store = SessionDB.open(tmp_path)
    assert store.read_only and "newer" in (store.read_only_reason or "")
    assert [m.content for m in store.get_messages("s")] == ["旧的 old words"]
    with pytest.raises(SessionStoreReadOnly, match="upgrade hermes-core"):
        store.append_messages("s", [{"role": "user", "content": "new"}], user_id=ALL_USERS)
    with pytest.raises(SessionStoreReadOnly):
        store.create_session("x")
    store.close()
    assert _snapshot(path) == before


def test_another_programs_state_db_is_never_written(tmp_path: Path) -> None:
    """A Hermes Agent-style state.db: same file name, its own tables, triggers and columns."""
    path = tmp_path / DB_FILE
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT,
                started_at REAL NOT NULL, billing_provider TEXT, cache_read_tokens INTEGER);
            CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT,
                role TEXT, content TEXT, timestamp REAL, reasoning_details TEXT);
            CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram');
            CREATE TABLE schema_version (version INTEGER NOT NULL);
            INSERT INTO schema_version VALUES (6);
            INSERT INTO sessions(id, source, started_at) VALUES ('agent-1', 'cli', 1.0);
            """
        )
    before = _snapshot(path)
    store = SessionDB(path)  # the file itself: read-only, with the fix
    assert store.read_only and "another program" in (store.read_only_reason or "")
    assert "messages_fts_trigram" in (store.read_only_reason or "")
    with pytest.raises(SessionStoreReadOnly, match="HERMES_HOME"):
        store.append_messages("x", [{"role": "user", "content": "写入 write"}], user_id=ALL_USERS)
    store.close()
    # The home: our archive goes to hermes_core.db beside it (homefiles.own_db_path).
    ours = SessionDB.open(tmp_path)
    assert ours.path == tmp_path / "hermes_core.db" and not ours.read_only
    ours.create_session("x")
    ours.append_messages("x", [{"role": "user", "content": "写入 write"}], user_id=ALL_USERS)
    ours.close()
    assert _snapshot(path) == before


def test_host_on_a_foreign_state_db_raises_at_the_turn(hermes_home: Path) -> None:
    """The archive refuses the turn with the fix and adds none of its tables. (Other layers'
    own tables are their business; see docs/sessions.md.)"""
    path = hermes_home / DB_FILE
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)")
    with (
        MemoryHost.open(hermes_home) as host,
        host.session() as session,
        pytest.raises(SessionStoreReadOnly, match="another program"),
    ):
        session.after_turn("hello 你好", "hi")
    with sqlite3.connect(path) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "kv" in names
    assert not names & {"sessions", "messages", "messages_fts", "schema_version", "state_meta"}


def test_legacy_archives_are_migrated_and_marked(tmp_path: Path) -> None:
    from hermes_core.layers.sessions import schema

    path = tmp_path / DB_FILE
    conn = sqlite3.connect(path, isolation_level=None)
    for step in schema.MIGRATIONS[:5]:
        step(conn)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (5)")
    conn.execute("INSERT INTO sessions(id, source, started_at) VALUES ('old', 'cli', 1.0)")
    conn.close()
    store = SessionDB.open(tmp_path)
    assert not store.read_only and store.schema_version() == SCHEMA_VERSION
    record = store.get_session("old", user_id=None)
    assert record is not None and record.user_id is None
    assert store.read("SELECT value FROM state_meta WHERE key='owner'")[0][0] == "hermes-core"
    store.close()


class SdkMessage:
    """Stands in for an OpenAI SDK message object (pydantic: ``model_dump()``)."""

    def __init__(self, **fields: Any) -> None:
        self.fields = fields

    def model_dump(self) -> dict[str, Any]:
        return dict(self.fields)


def test_odd_turns_through_the_session_api_are_stored_whole(memory_host: MemoryHost) -> None:
    """Surrogates, NaN timestamps, dict content, non-string ids and SDK objects, in EN and ZH,
    handed to ``after_turn``: all stored, nothing raised."""
    session = memory_host.session(session_id="odd", user_id="u1")
    escaped = b"\xff\xfe \xe6\x97\xa5\xe5\xbf\x97 log".decode("utf-8", "surrogateescape")
    messages: list[Any] = [
        {"role": "user", "content": "看看日志 check the log \udcff", "timestamp": math.nan},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": 1, "function": {"name": "terminal", "arguments": "{}"}}],
            "finish_reason": None,
        },
        {"role": "tool", "tool_call_id": 1, "name": "terminal", "content": escaped},
        {"role": "tool", "tool_call_id": 2, "content": {"rows": [1, 2], "注": "字典"}},
        SdkMessage(role="assistant", content="日志已检查 log checked", finish_reason=0),
    ]
    turn = session.after_turn("看看日志 check the log \udcff", "日志已检查 log checked", messages)
    assert turn.tool_names == ("terminal",)
    db = SessionDB.open(memory_host.home)
    rows = db.get_messages("odd")
    assert len(rows) == 5
    assert rows[0].content == "看看日志 check the log \ufffd" and math.isfinite(rows[0].timestamp)
    assert rows[2].content == "\ufffd\ufffd 日志 log" and rows[2].tool_call_id == "1"
    assert json.loads(rows[3].content) == {"rows": [1, 2], "注": "字典"}
    assert rows[4].content == "日志已检查 log checked" and rows[4].finish_reason == "0"
    db.close()
    session.close()


def test_an_item_that_is_not_a_message_raises_naming_it(memory_host: MemoryHost) -> None:
    from hermes_core.errors import HermesError

    session = memory_host.session(session_id="bad")
    with pytest.raises(HermesError, match="message 1 of the turn is a int"):
        session.after_turn("hi 你好", "ok", [{"role": "user", "content": "hi 你好"}, 7])
    db = SessionDB.open(memory_host.home)
    assert db.get_messages("bad") == []
    db.close()
    session.close()
