"""``hermes-memory sessions migrate``: SQLite → PostgreSQL and back, verified, idempotent,
resumable.

Real archives on both sides: a ``state.db`` file and a database of the session's embedded
PostgreSQL server. These tests pick their backends themselves (they are about moving between
the two), so they do not use the ``backend``-parametrised ``home``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from hermes_core.cli.sessions import register
from hermes_core.layers.sessions.archive import SessionStore
from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.migrate import copy_archive
from hermes_core.layers.sessions.pg import PostgresSessionDB
from hermes_core.layers.sessions.ranking import SearchFilters, rank
from hermes_core.layers.sessions.store import open_url
from hermes_core.scope import ALL_USERS


@pytest.fixture
def root() -> click.Group:
    @click.group()
    def group() -> None:
        pass

    register(group)
    return group


def _fill(db: SessionStore) -> None:
    """Two users, lineage, titles, tool calls, compaction flags, CJK, token counts."""
    call = {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
    now = time.time()
    db.create_session("alice-1", user_id="alice", title="部署 nginx", started_at=now - 300)
    ids = db.append_messages(
        "alice-1",
        [
            {"role": "user", "content": "we were deploying nginx 我喜欢喝咖啡"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "name": "terminal", "content": "ok"},
            {"role": "assistant", "content": "deployed"},
        ],
        user_id="alice",
        turn_key="1:abc",
    )
    db.mark_compacted("alice-1", ids[:2])
    db.add_token_usage("alice-1", 120, 40)
    db.create_session("alice-2", user_id="alice", parent_session_id="alice-1", started_at=now)
    db.append_messages(
        "alice-2", [{"role": "user", "content": "continue the rollout"}], user_id=ALL_USERS
    )
    db.create_session("bob-1", user_id="bob", title="Invoices", started_at=now - 100)
    db.append_messages(
        "bob-1", [{"role": "user", "content": "archive the invoices"}], user_id="bob"
    )
    db.create_session("anon", started_at=now - 50)
    for n in range(12):
        db.append_messages(
            "anon", [{"role": "user", "content": f"note {n} about kafka"}], user_id=ALL_USERS
        )


def _snapshot(db: SessionStore) -> dict[str, Any]:
    """Everything a user sees, per session: the record and every message with its id."""
    out: dict[str, Any] = {}
    for sid in sorted(db.iter_all_session_ids()):
        rec = db.get_session(sid, user_id=ALL_USERS)
        assert rec is not None
        out[sid] = (
            rec.to_dict(),
            [m.to_dict() for m in db.get_messages(sid, include_inactive=True)],
            db.lineage(sid, user_id=ALL_USERS),
        )
    return out


def _search(db: SessionStore, query: str, user: str | None) -> list[str]:
    return [s.session_id for s in rank(db, query, SearchFilters(user_id=user)).sessions]


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[SessionDB]:
    (tmp_path / "src").mkdir()
    db = SessionDB(tmp_path / "src" / "state.db")
    yield db
    db.close()


def test_sqlite_to_postgresql_and_back_keeps_everything(
    root: click.Group, sqlite_db: SessionDB, postgres_url: str, tmp_path: Path
) -> None:
    _fill(sqlite_db)
    before = _snapshot(sqlite_db)
    src = f"sqlite://{sqlite_db.path}"
    out = CliRunner().invoke(
        root, ["sessions", "migrate", "--from", src, "--to", postgres_url, "--json"]
    )
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["verified"] is True
    assert report["sessions_copied"] == 4 and report["messages_copied"] == 18
    users = {u["user_id"]: u for u in report["users"]}
    assert users["alice"]["messages"] == {"source": 5, "target": 5}
    assert users[None]["sessions"] == {"source": 1, "target": 1}
    pg = PostgresSessionDB(postgres_url)
    try:
        assert _snapshot(pg) == before
        assert _search(pg, "deployed", "alice") == ["alice-1"]
        assert _search(pg, "咖啡", "alice") == ["alice-1"]
        assert _search(pg, "invoices", "alice") == []  # bob's stays bob's
        assert pg.resolve_session("部署 nginx", user_id="alice") == "alice-1"
        # ids continue after the copied ones
        new = pg.append_messages("bob-1", [{"role": "user", "content": "one more"}], user_id="bob")
        assert new[0] > max(int(m["id"]) for s in before.values() for m in s[1])
    finally:
        pg.close()
    # and back into a new SQLite file
    back_path = tmp_path / "back" / "state.db"
    out = CliRunner().invoke(
        root,
        ["sessions", "migrate", "--from", postgres_url, "--to", f"sqlite://{back_path}", "--json"],
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["verified"] is True
    back = SessionDB(back_path)
    try:
        after = _snapshot(back)
        assert {k: v for k, v in after.items() if k != "bob-1"} == {
            k: v for k, v in before.items() if k != "bob-1"
        }
        assert len(after["bob-1"][1]) == 2
        assert _search(back, "咖", "alice") == ["alice-1"]
    finally:
        back.close()


def test_rerun_copies_nothing_and_stays_verified(
    root: click.Group, sqlite_db: SessionDB, postgres_url: str
) -> None:
    _fill(sqlite_db)
    args = ["sessions", "migrate", "--from", f"sqlite://{sqlite_db.path}", "--to", postgres_url]
    first = CliRunner().invoke(root, [*args, "--json"])
    second = CliRunner().invoke(root, [*args, "--json"])
    assert first.exit_code == 0 and second.exit_code == 0, second.output
    again = json.loads(second.output)
    assert again["verified"] is True
    assert (again["sessions_copied"], again["messages_copied"]) == (0, 0)
    # a flag changed at the source since is carried over by the re-run
    sqlite_db.mark_rewound("anon", [m.id for m in sqlite_db.get_messages("anon")][:3])
    CliRunner().invoke(root, args)
    pg = PostgresSessionDB(postgres_url)
    try:
        assert len(pg.get_messages("anon")) == 9
    finally:
        pg.close()
    table = CliRunner().invoke(root, args)
    assert table.exit_code == 0 and "alice" in table.output and "copied 0 new" in table.output


def test_interrupted_copy_resumes(sqlite_db: SessionDB, postgres_url: str) -> None:
    for n in range(30):
        sqlite_db.create_session(f"s{n:02d}", user_id=f"u{n % 3}")
        sqlite_db.append_messages(
            f"s{n:02d}", [{"role": "user", "content": f"topic {n} rollout"}], user_id=f"u{n % 3}"
        )
    target = PostgresSessionDB(postgres_url)
    calls = 0

    def stop_after_two(_n: int) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise KeyboardInterrupt  # the operator pressed Ctrl-C mid-copy

    try:
        with pytest.raises(KeyboardInterrupt):
            copy_archive(sqlite_db, target, batch=7, progress=stop_after_two)
        assert (
            target.count_sessions(user_id=ALL_USERS) == 14
        )  # two whole batches, nothing half-written
        report = copy_archive(sqlite_db, target, batch=7)
        assert report.verified and report.sessions_copied == 16
        assert target.count_sessions(user_id=ALL_USERS) == 30
        assert _search(target, "rollout", "u1") and all(
            s in {f"s{n:02d}" for n in range(1, 30, 3)} for s in _search(target, "rollout", "u1")
        )
    finally:
        target.close()


def test_copy_into_an_archive_holding_other_rows_is_refused(
    sqlite_db: SessionDB, postgres_url: str
) -> None:
    _fill(sqlite_db)
    target = PostgresSessionDB(postgres_url)
    try:
        target.create_session("bob-1", user_id="mallory")
        with pytest.raises(Exception, match="another user"):
            copy_archive(sqlite_db, target)
        assert target.get_session("bob-1", user_id=ALL_USERS) is not None
        assert target.get_session("bob-1", user_id=ALL_USERS).user_id == "mallory"  # type: ignore[union-attr]
    finally:
        target.close()


def test_bad_urls_name_the_fix(root: click.Group, sqlite_db: SessionDB, tmp_path: Path) -> None:
    src = f"sqlite://{sqlite_db.path}"
    out = CliRunner().invoke(root, ["sessions", "migrate", "--from", src, "--to", "mysql://x"])
    assert out.exit_code != 0 and "postgresql://" in out.output
    dead = "postgresql://hermes:s3cret-pw@127.0.0.1:1/hermes"
    out = CliRunner().invoke(root, ["sessions", "migrate", "--from", src, "--to", dead])
    assert out.exit_code != 0
    assert "unreachable" in out.output and "Start the server" in out.output
    assert "s3cret-pw" not in out.output and "***" in out.output
    out = CliRunner().invoke(root, ["sessions", "migrate", "--from", src, "--to", src])
    assert out.exit_code != 0 and "another one" in out.output


def test_open_url_forms(tmp_path: Path) -> None:
    db = open_url(f"sqlite://{tmp_path}/x/state.db")
    try:
        assert db.backend == "sqlite" and (tmp_path / "x" / "state.db").exists()
    finally:
        db.close()
    with pytest.raises(Exception, match="sqlite:///"):
        open_url("sqlite://")
