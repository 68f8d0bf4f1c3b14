"""The PostgreSQL archive as a shared server: many processes at once, a writer killed
mid-write, a lost connection, a slow query, an unreachable server — against the session's
real embedded PostgreSQL (never a mock)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes_core.layers.sessions.errors import SessionStoreBusy, SessionStoreUnusable
from hermes_core.layers.sessions.pg import PostgresSessionDB, redact_url
from hermes_core.layers.sessions.plugin import postgres_health_checks
from hermes_core.layers.sessions.ranking import SearchFilters, rank
from hermes_core.scope import ALL_USERS
from hermes_core.settings.models import SessionsSettings

WORKERS = 8
TURNS = 60
"""Per worker in the test (the benchmark runs 8 × 500: docs/benchmarks.md)."""


def _writer(url: str, worker: int, turns: int) -> None:
    """One agent process: its own session plus a session shared by every worker."""
    store = PostgresSessionDB(url, pool_size=2)
    user = f"user-{worker % 2}"
    own = f"w{worker}"
    store.create_session(own, user_id=user)
    for i in range(turns):
        sid = own if i % 3 else f"shared-{worker % 2}"
        store.ensure_session(sid, user_id=user)
        text = f"worker{worker} turn {i} token{worker}x{i}" if i % 2 else f"进程{worker} 消息 {i}"
        store.append_messages(
            sid,
            [{"role": "user", "content": text}, {"role": "assistant", "content": f"ack {i}"}],
            user_id=user,
            turn_key=f"{worker}:{i}",
        )
    store.close()


@pytest.mark.slow
def test_eight_processes_write_into_one_server_and_nothing_is_lost(postgres_url: str) -> None:
    PostgresSessionDB(postgres_url).close()  # migrate once up front (they would race anyway)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(postgres_url, w, TURNS)) for w in range(WORKERS)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(300)
        assert proc.exitcode == 0
    db = PostgresSessionDB(postgres_url)
    try:
        assert db.read("SELECT COUNT(*) FROM messages")[0][0] == WORKERS * TURNS * 2
        assert db.read("SELECT COUNT(DISTINCT turn_key) FROM messages")[0][0] == WORKERS * TURNS
        counted = db.read("SELECT SUM(message_count) FROM sessions")[0][0]
        assert counted == WORKERS * TURNS * 2  # no lost update on the shared sessions' counters
        for w in range(WORKERS):
            hits = rank(db, f"token{w}x{TURNS - 1}", SearchFilters(user_id=f"user-{w % 2}"))
            assert hits.sessions and hits.sessions[0].session_id == f"w{w}"
            other = rank(db, f"token{w}x{TURNS - 1}", SearchFilters(user_id=f"user-{(w + 1) % 2}"))
            assert other.sessions == []  # another user never sees it
        assert rank(db, "进程3", SearchFilters(user_id="user-1")).sessions
    finally:
        db.close()


KILLED_WRITER = textwrap.dedent(
    """
    import sys
    from hermes_core.layers.sessions.pg import PostgresSessionDB
    db = PostgresSessionDB(sys.argv[1], pool_size=1)
    db.create_session("k", user_id="u")
    i = 0
    while True:
        db.append_messages(
            "k",
            [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}],
            user="u",
            turn_key=str(i),
        )
        print(i, flush=True)  # only after the turn is committed
        i += 1
        if i == 40:
            with db.transaction():  # a grouped write the kill lands in
                db.append_messages("k", [{"role": "user", "content": "never"}], user_id="u")
                print("in-transaction", flush=True)
                import time
                time.sleep(60)
    """
)


@pytest.mark.slow
def test_sigkill_mid_write_loses_nothing_committed(postgres_url: str, tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(KILLED_WRITER, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(script), postgres_url], stdout=subprocess.PIPE, text=True
    )
    committed: list[int] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "in-transaction":
            break
        committed.append(int(line))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    db = PostgresSessionDB(postgres_url)
    try:
        rows = db.get_messages("k")
        assert [m.content for m in rows] == [
            text for i in committed for text in (f"q{i}", f"a{i}")
        ]  # every committed turn, whole, in order; the open transaction left nothing
        assert db.get_session("k", user_id=ALL_USERS).message_count == len(rows)  # type: ignore[union-attr]
        assert rank(db, "never", SearchFilters(user_id="u")).sessions == []
        # the archive is writable right after (no lock left behind by the dead writer)
        db.append_messages("k", [{"role": "user", "content": "after"}], user_id="u")
    finally:
        db.close()


def test_a_lost_connection_is_retried(postgres_url: str) -> None:
    db = PostgresSessionDB(postgres_url, pool_size=1)
    try:
        db.create_session("s", user_id="u")
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = 'hermes-core' AND pid <> pg_backend_pid()"
            ).fetchone()
        assert killed is not None and killed[0] >= 1
        ids = db.append_messages("s", [{"role": "user", "content": "still here"}], user_id="u")
        assert len(ids) == 1 and db.get_messages("s")[0].content == "still here"
    finally:
        db.close()


def test_a_slow_query_hits_the_statement_timeout_with_the_fix(postgres_url: str) -> None:
    db = PostgresSessionDB(postgres_url, statement_timeout_s=0.2)
    try:
        with pytest.raises(SessionStoreBusy, match="statement_timeout_s"):
            db.read("SELECT pg_sleep(2)")
        assert db.count_sessions(user_id=ALL_USERS) == 0  # the pool is fine afterwards
    finally:
        db.close()


def test_an_unreachable_server_names_the_fix_and_hides_the_password() -> None:
    url = "postgresql://hermes:hunter2-secret@127.0.0.1:1/hermes"
    started = time.monotonic()
    with pytest.raises(SessionStoreUnusable) as err:
        PostgresSessionDB(url)
    text = str(err.value)
    # the wording every PostgreSQL store shares (hermes_core.pg.unavailable) + the archive's fix
    assert "PostgreSQL at postgresql://hermes:***@127.0.0.1:1/hermes is unreachable" in text
    assert "Start the server or fix sessions.url" in text
    assert "HERMES_SESSIONS__URL" in text and "sessions.backend: sqlite" in text
    assert "hunter2-secret" not in text
    assert time.monotonic() - started < 60  # it fails, it does not hang
    with pytest.raises(SessionStoreUnusable, match=r"sessions\.url is empty"):
        PostgresSessionDB("")


def test_redact_url_forms() -> None:
    assert redact_url("postgresql://a:b@h/db") == "postgresql://a:***@h/db"
    assert redact_url("postgresql://a@h/db") == "postgresql://a@h/db"
    assert "pw" not in redact_url("host=h user=a password=pw dbname=d")


def test_doctor_lines_for_the_postgresql_archive(postgres_url: str) -> None:
    ok = SessionsSettings(backend="postgresql", url=postgres_url)  # type: ignore[arg-type]
    checks = {c.name: c for c in postgres_health_checks(ok)}
    assert checks["sessions: postgresql"].ok and "reachable at postgresql://" in (
        checks["sessions: postgresql"].detail
    )
    assert checks["sessions: schema"].ok
    bad = SessionsSettings(
        backend="postgresql",
        url="postgresql://u:topsecret@127.0.0.1:1/x",  # type: ignore[arg-type]
    )
    (check,) = postgres_health_checks(bad)
    assert not check.ok and "topsecret" not in check.detail + check.fix
    assert "start the server" in check.fix.lower()


def test_two_archives_in_two_schemas_of_one_database_are_separate(postgres_url: str) -> None:
    first = PostgresSessionDB(postgres_url, schema="archive_a")
    second = PostgresSessionDB(postgres_url, schema="archive_b")
    try:
        first.append_messages(
            "s", [{"role": "user", "content": "deploying nginx"}], user_id=ALL_USERS
        )
        second.append_messages("t", [{"role": "user", "content": "咖啡 please"}], user_id=ALL_USERS)
        assert [h.session_id for h in rank(first, "deployed").sessions] == ["s"]
        assert rank(first, "咖啡").sessions == []
        first.drop_schema()  # the other archive's text search configuration is its own
        assert [h.session_id for h in rank(second, "咖啡").sessions] == ["t"]
        third = PostgresSessionDB(postgres_url, schema="archive_c")
        third.append_messages("u", [{"role": "user", "content": "rollout"}], user_id=ALL_USERS)
        assert [h.session_id for h in rank(third, "rollout").sessions] == ["u"]
        third.drop_schema()
    finally:
        second.close()
    with pytest.raises(SessionStoreUnusable, match="identifier"):
        PostgresSessionDB(postgres_url, schema="Robert'); DROP TABLE x;--")


def test_a_user_without_rights_and_a_malformed_url_name_the_fix(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("DROP ROLE IF EXISTS hermes_no_create")
        admin.execute("CREATE ROLE hermes_no_create LOGIN")
    try:
        limited = postgres_url.replace("postgresql://postgres:", "postgresql://hermes_no_create:")
        assert limited != postgres_url
        with pytest.raises(SessionStoreUnusable, match="GRANT CREATE"):
            PostgresSessionDB(limited)
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("DROP ROLE IF EXISTS hermes_no_create")
    with pytest.raises(SessionStoreUnusable, match="is not a valid connection URL") as err:
        PostgresSessionDB("postgresql://me:pw-%zz@host/db")
    assert "pw-" not in str(err.value)


def test_a_deadlocked_write_is_retried(postgres_url: str) -> None:
    """Our write locks y then x while another client holds x and then asks for y: the
    server aborts one side (ours waited first, so ours); the write runs again and lands."""
    import threading

    db = PostgresSessionDB(postgres_url)
    try:
        db.create_session("x")
        db.create_session("y")
        holding = threading.Event()
        ours_locked_y = threading.Event()
        attempts: list[int] = []

        def fn(conn: Any) -> None:
            attempts.append(1)
            conn.execute("UPDATE sessions SET model='ours' WHERE id='y'")
            ours_locked_y.set()
            conn.execute("UPDATE sessions SET model='ours' WHERE id='x'")

        def other() -> None:
            with psycopg.connect(postgres_url) as conn:  # one transaction until commit
                conn.execute("UPDATE sessions SET end_reason='other' WHERE id='x'")
                holding.set()
                ours_locked_y.wait(30)
                time.sleep(0.2)  # ours is now waiting for x
                try:
                    conn.execute("UPDATE sessions SET end_reason='other' WHERE id='y'")
                    conn.commit()
                except psycopg.errors.DeadlockDetected:
                    conn.rollback()

        thread = threading.Thread(target=other)
        thread.start()
        assert holding.wait(30)
        db.write(fn)
        thread.join(60)
        assert db.get_session("x", user_id=ALL_USERS).model == "ours"  # type: ignore[union-attr]
        assert db.get_session("y", user_id=ALL_USERS).model == "ours"  # type: ignore[union-attr]
        assert len(attempts) == 2, attempts  # aborted once by the server, then retried
        assert db.get_session("y", user_id=ALL_USERS).end_reason == "other"  # type: ignore[union-attr]
    finally:
        db.close()


def test_index_totals_are_kept_up_to_date_without_recounting(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FTS5's N and average length, used by every ranking: after the first full count only
    the messages added since are read, and the figures equal a fresh full count."""
    db = PostgresSessionDB(postgres_url)
    other = PostgresSessionDB(postgres_url)  # another host writing into the same archive
    try:
        db.append_messages("a", [{"role": "user", "content": "one two three"}], user_id=ALL_USERS)
        first = db._totals_now()
        assert first == (1, 3.0)
        other.append_messages(
            "b", [{"role": "user", "content": "four five six seven eight"}], user_id=ALL_USERS
        )
        db.append_messages("a", [{"role": "user", "content": "nine"}], user_id=ALL_USERS)
        seen: list[str] = []
        real_read = db.read

        def spy(sql: str, params: Any = ()) -> list[Any]:
            seen.append(sql)
            return list(real_read(sql, params))

        monkeypatch.setattr(db, "read", spy)
        assert db._totals_now() == (3, 3.0)
        assert [q for q in seen if "SUM(fts_len)" in q] == [
            "SELECT COUNT(*), COALESCE(SUM(fts_len), 0) FROM messages WHERE id > ? AND id <= ?"
        ]
        fresh = PostgresSessionDB(postgres_url)
        assert fresh._totals_now() == db._totals_now()
        fresh.close()
        monkeypatch.undo()
        db.delete_sessions(["b"])  # a delete here: counted in full again
        assert db._totals_now() == (2, 2.0)
    finally:
        db.close()
        other.close()
