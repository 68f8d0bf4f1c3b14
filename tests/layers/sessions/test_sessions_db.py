"""state.db: schema, migrations, permissions, titles, lineage, concurrency, flags."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from hermes_core.layers.sessions import db as dbmod
from hermes_core.layers.sessions.db import (
    SCHEMA_VERSION,
    SessionDB,
    SessionStoreError,
    migrate,
    read_schema_version,
    sanitize_title,
)
from hermes_core.scope import ALL_USERS


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_are_private_even_under_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0o000)
    try:
        store = SessionDB.open(tmp_path)
        store.create_session("s1")
        store.append_messages("s1", [{"role": "user", "content": "hello"}], user_id=ALL_USERS)
        for suffix in ("", "-wal", "-shm"):
            path = Path(str(tmp_path / "state.db") + suffix)
            assert path.exists(), suffix
            assert _mode(path) == 0o600, (suffix, oct(_mode(path)))
        store.close()
    finally:
        os.umask(old)


def test_loose_permissions_are_tightened_on_open(tmp_path: Path) -> None:
    SessionDB.open(tmp_path).close()
    os.chmod(tmp_path / "state.db", 0o644)
    SessionDB.open(tmp_path).close()
    assert _mode(tmp_path / "state.db") == 0o600


@pytest.mark.sqlite_only  # the SQLite file itself
def test_wal_mode_and_schema_version(db: SessionDB) -> None:
    assert db.read("PRAGMA journal_mode")[0][0] == "wal"
    assert db.schema_version() == SCHEMA_VERSION


def test_migrations_are_idempotent_and_keep_foreign_tables(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    conn = sqlite3.connect(path, isolation_level=None)
    # someone else's tables live in the same file
    conn.execute(
        "CREATE TABLE compression_events (id INTEGER PRIMARY KEY, session_id TEXT, "
        "created_at REAL, tokens_before INT, tokens_after INT, summary_tokens INT, "
        "fallback_used INT, aborted INT, error TEXT)"
    )
    conn.execute("CREATE TABLE memory_archive (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO memory_archive(body) VALUES ('keep me')")
    # only the first migration step has run (an old file)
    dbmod.MIGRATIONS[0](conn)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (1)")
    conn.execute("INSERT INTO sessions(id, source, started_at) VALUES ('old', 'cli', 1.0)")
    conn.execute(
        "INSERT INTO messages(session_id, role, content, timestamp) "
        "VALUES ('old', 'user', 'deployed the old service', 1.0)"
    )
    assert migrate(conn) == SCHEMA_VERSION
    assert migrate(conn) == SCHEMA_VERSION  # second run: nothing to do, no error
    # each step again on an up-to-date schema is harmless
    for step in dbmod.MIGRATIONS:
        step(conn)
    assert read_schema_version(conn) == SCHEMA_VERSION
    assert conn.execute("SELECT body FROM memory_archive").fetchone()[0] == "keep me"
    conn.close()
    store = SessionDB(path)
    # the pre-existing message was indexed by the FTS migration
    from hermes_core.layers.sessions.ranking import rank

    assert [h.session_id for h in rank(store, "deploying").sessions] == ["old"]
    assert store.stats(user_id=ALL_USERS)["compression"]["events"] == 0
    store.close()


@pytest.mark.sqlite_only  # the SQLite file itself
def test_stats_reads_compression_events(db: SessionDB) -> None:
    db.write(
        lambda c: c.execute(
            "CREATE TABLE compression_events (id INTEGER PRIMARY KEY, session_id TEXT, "
            "created_at REAL, tokens_before INT, tokens_after INT, summary_tokens INT, "
            "fallback_used INT, aborted INT, error TEXT)"
        )
    )
    db.write(
        lambda c: c.executemany(
            "INSERT INTO compression_events(session_id, created_at, tokens_before, "
            "tokens_after, summary_tokens, fallback_used, aborted) VALUES (?,?,?,?,?,?,?)",
            [("a", 1.0, 1000, 200, 50, 0, 0), ("a", 2.0, 900, 300, 60, 1, 0)],
        )
    )
    comp = db.stats(user_id=ALL_USERS)["compression"]
    assert comp == {
        "events": 2,
        "tokens_before": 1900,
        "tokens_after": 500,
        "fallback_used": 1,
        "aborted": 0,
    }


def test_messages_round_trip_with_tool_calls(db: SessionDB) -> None:
    calls = [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "terminal", "arguments": '{"cmd": "ls"}'},
        }
    ]
    db.create_session("s", source="telegram", user_id="u1", model="m")
    ids = db.append_messages(
        "s",
        [
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c1", "name": "terminal", "content": "a.txt"},
            {"role": "assistant", "content": [{"type": "text", "text": "one file"}]},
        ],
        user_id=ALL_USERS,
    )
    assert len(ids) == 4 and ids == sorted(ids)
    conv = db.get_messages_as_conversation("s")
    assert conv[1]["tool_calls"] == calls
    assert conv[2] == {"role": "tool", "content": "a.txt", "name": "terminal", "tool_call_id": "c1"}
    assert conv[3]["content"] == "one file"
    record = db.get_session("s", user_id=ALL_USERS)
    assert record is not None
    assert (record.message_count, record.tool_call_count) == (4, 1)
    assert (record.source, record.user_id, record.model) == ("telegram", "u1", "m")


def test_end_session_and_system_prompt(db: SessionDB) -> None:
    db.create_session("s")
    db.record_system_prompt("s", "You are Hermes.\n记忆")
    db.end_session("s", "new_session")
    db.end_session("s", "exit")  # first reason kept
    record = db.get_session("s", user_id=ALL_USERS)
    assert record is not None
    assert record.system_prompt == "You are Hermes.\n记忆"
    assert record.end_reason == "new_session" and record.ended_at is not None
    db.reopen_session("s")
    record = db.get_session("s", user_id=ALL_USERS)
    assert record is not None and record.ended_at is None


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("  Fix   the\tbuild \n", "Fix the build"),
        ("zero\u200bwidth\u202eevil", "zerowidthevil"),
        ("\x00\x07", None),
        ("部署 服务", "部署 服务"),
        ("x" * 300, "x" * 100),
    ],
)
def test_sanitize_title(raw: str, clean: str | None) -> None:
    assert sanitize_title(raw) == clean


def test_titles_are_unique(db: SessionDB) -> None:
    db.create_session("a", title="Deploy")
    db.create_session("b", title="Deploy")
    db.create_session("c")
    assert db.set_title("c", " Deploy ") == "Deploy #3"
    titles = [db.get_session(s, user_id=ALL_USERS).title for s in ("a", "b", "c")]  # type: ignore[union-attr]
    assert titles == ["Deploy", "Deploy #2", "Deploy #3"]
    assert db.resolve_session("Deploy", user_id=ALL_USERS) == "c"  # the newest numbered variant
    with pytest.raises((sqlite3.IntegrityError, SessionStoreError), match=r"(?i)unique"):
        db.write(lambda c: c.execute("UPDATE sessions SET title='Deploy' WHERE id='b'"))


def test_lineage(db: SessionDB) -> None:
    db.create_session("root", started_at=1)
    db.create_session("child", parent_session_id="root", started_at=2)
    db.create_session("grandchild", parent_session_id="child", started_at=3)
    db.create_session("other", started_at=4)
    assert db.lineage("child", user_id=ALL_USERS) == ["root", "child", "grandchild"]
    assert db.lineage_root("grandchild") == "root"
    assert db.lineage_root("other") == "other"
    roots = [r.id for r in db.list_sessions(roots_only=True, user_id=ALL_USERS)]
    assert roots == ["other", "root"]


def test_lineage_tolerates_cycles(db: SessionDB) -> None:
    db.create_session("a", parent_session_id="b")
    db.create_session("b", parent_session_id="a")
    assert set(db.lineage("a", user_id=ALL_USERS)) == {"a", "b"}
    assert db.lineage_root("a") in {"a", "b"}


def test_mark_compacted_and_rewound(db: SessionDB, add_session: Any) -> None:
    ids = add_session(db, "s", [("user", "one"), ("assistant", "two"), ("user", "three")])
    assert db.mark_compacted("s", ids[:2]) == 2
    assert db.mark_rewound("s", ids[2:]) == 1
    assert db.get_messages("s") == []
    rows = db.get_messages("s", include_inactive=True)
    assert [(m.active, m.compacted) for m in rows] == [(False, True), (False, True), (False, False)]


def test_delete_and_prune(db: SessionDB, add_session: Any) -> None:
    add_session(db, "old", [("user", "ancient deployment notes")], started_at=1000.0)
    add_session(db, "new", [("user", "fresh deployment notes")])
    assert db.sessions_older_than(2000.0, user_id=ALL_USERS) == ["old"]
    assert db.delete_sessions(["old"]) == 1
    assert db.get_session("old", user_id=ALL_USERS) is None
    from hermes_core.layers.sessions.ranking import rank

    assert [s.session_id for s in rank(db, "deployment").sessions] == ["new"]


def _writer(home: str, worker: int, count: int) -> None:
    store = SessionDB.open(Path(home))
    sid = f"proc-{worker}"
    store.create_session(sid)
    for i in range(count):
        text = f"worker {worker} message {i}" if i % 2 else f"进程 {worker} 消息 {i}"
        store.append_messages(sid, [{"role": "user", "content": text}], user_id=ALL_USERS)
    store.close()


@pytest.mark.slow
def test_four_processes_write_concurrently(tmp_path: Path) -> None:
    SessionDB.open(tmp_path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 500)) for w in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(180)
        assert proc.exitcode == 0
    store = SessionDB.open(tmp_path)
    assert store.read("SELECT COUNT(*) FROM messages")[0][0] == 2000
    for w in range(4):
        record = store.get_session(f"proc-{w}", user_id=ALL_USERS)
        assert record is not None and record.message_count == 500
    assert store.read("SELECT COUNT(*) FROM messages_fts")[0][0] == 2000
    store.close()


def test_threads_share_one_store(db: SessionDB) -> None:
    import threading

    db.create_session("t")
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(50):
                db.append_messages(
                    "t", [{"role": "user", "content": f"thread {n} {i}"}], user_id=ALL_USERS
                )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert db.get_session("t", user_id=ALL_USERS).message_count == 200  # type: ignore[union-attr]
