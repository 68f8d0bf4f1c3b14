"""``hermes-memory sessions migrate --merge`` (issue 27 point 3): a second home's archive
joins a shared PostgreSQL archive that already holds another's, and back into SQLite.

Real archives: ``state.db`` files and databases of the session's embedded PostgreSQL. Both
homes number their messages from 1, so every message id collides; one session id collides
with a *different* session (another user) and has a child whose lineage must follow it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from hermes_core.cli.sessions import register
from hermes_core.layers.sessions.archive import SessionStore
from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.migrate import merged_id
from hermes_core.layers.sessions.pg import PostgresSessionDB
from hermes_core.layers.sessions.ranking import SearchFilters, rank
from hermes_core.scope import ALL_USERS


@pytest.fixture
def root() -> click.Group:
    @click.group()
    def group() -> None:
        pass

    register(group)
    return group


def home_a(path: Path) -> tuple[str, float]:
    db = SessionDB(path)
    try:
        now = time.time()
        db.create_session("shared-1", user_id="alice", title="nginx", started_at=now - 500)
        db.append_messages(
            "shared-1",
            [
                {"role": "user", "content": "we were deploying nginx 我喜欢喝咖啡"},
                {"role": "assistant", "content": "deployed"},
            ],
            user_id="alice",
        )
        db.create_session("a-anon", started_at=now - 400)
        for n in range(3):
            db.append_messages(
                "a-anon", [{"role": "user", "content": f"kafka note {n}"}], user_id=ALL_USERS
            )
        return f"sqlite://{path}", now
    finally:
        db.close()


def home_b(path: Path) -> str:
    db = SessionDB(path)
    try:
        now = time.time()
        # the same id as home A's session, but another user's session: it must be remapped
        db.create_session("shared-1", user_id="bob", title="Invoices", started_at=now - 300)
        db.append_messages(
            "shared-1",
            [{"role": "user", "content": "archive the invoices 发票归档"}],
            user_id="bob",
        )
        db.create_session("b-child", user_id="bob", parent_session_id="shared-1", started_at=now)
        db.append_messages(
            "b-child", [{"role": "user", "content": "continue invoices"}], user_id="bob"
        )
        db.create_session("b-alice", user_id="alice", started_at=now - 200)
        db.append_messages(
            "b-alice", [{"role": "user", "content": "the persimmon config"}], user_id="alice"
        )
        return f"sqlite://{path}"
    finally:
        db.close()


def migrate(root: click.Group, *args: str) -> dict[str, Any]:
    done = CliRunner().invoke(root, ["sessions", "migrate", *args, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.output)  # type: ignore[no-any-return]


def counts(report: dict[str, Any]) -> dict[str | None, tuple[int, int]]:
    return {
        u["user_id"]: (u["sessions"]["target"], u["messages"]["target"]) for u in report["users"]
    }


def found(db: SessionStore, query: str, user: str | None) -> list[str]:
    return [s.session_id for s in rank(db, query, SearchFilters(user_id=user)).sessions]


def test_two_homes_join_one_postgresql_archive(
    root: click.Group, postgres_url: str, tmp_path: Path
) -> None:
    a, _ = home_a(tmp_path / "a.db")
    b = home_b(tmp_path / "b.db")
    first = migrate(root, "--from", a, "--to", postgres_url)
    assert first["verified"] and first["messages_copied"] == 5

    refused = CliRunner().invoke(root, ["sessions", "migrate", "--from", b, "--to", postgres_url])
    assert refused.exit_code != 0 and "--merge" in refused.output  # the fix is named

    merged = migrate(root, "--from", b, "--to", postgres_url, "--merge")
    new_id = merged["renamed"]["shared-1"]
    source_b = SessionDB(tmp_path / "b.db")
    try:
        bob = source_b.get_session("shared-1", user_id=ALL_USERS)
        assert bob is not None
        bob_start = bob.started_at
    finally:
        source_b.close()
    assert new_id == merged_id("shared-1", "bob", bob_start)  # documented, stable
    assert list(merged["renamed"]) == ["shared-1"]
    assert merged["verified"] is True
    assert merged["sessions_copied"] == 3 and merged["messages_copied"] == 3
    assert counts(merged) == {"alice": (1, 1), "bob": (2, 2)}  # B's sessions, all there

    pg = PostgresSessionDB(postgres_url)
    try:
        assert sorted(pg.iter_all_session_ids()) == sorted(
            ["shared-1", "a-anon", new_id, "b-child", "b-alice"]
        )
        assert pg.get_session("b-child", user_id=ALL_USERS).parent_session_id == new_id  # type: ignore[union-attr]
        assert pg.get_session("shared-1", user_id=ALL_USERS).user_id == "alice"  # type: ignore[union-attr]
        assert pg.counts_by_user() == {None: (1, 3), "alice": (2, 3), "bob": (2, 2)}
        ids = [m.id for sid in pg.iter_all_session_ids() for m in pg.get_messages(sid)]
        assert len(ids) == len(set(ids)) == 8  # renumbered, none lost
        # each user finds their own, from either home, in English and Chinese
        assert found(pg, "发票", "bob") == [new_id]
        assert found(pg, "persimmon", "alice") == ["b-alice"]
        assert found(pg, "咖啡", "alice") == ["shared-1"]
        assert found(pg, "invoices", "alice") == []
    finally:
        pg.close()

    again = migrate(root, "--from", b, "--to", postgres_url, "--merge")
    assert (again["sessions_copied"], again["messages_copied"]) == (0, 0)
    assert again["verified"] and again["renamed"] == {"shared-1": new_id}
    # home A merged again (after its plain copy): recognised, nothing added
    a_again = migrate(root, "--from", a, "--to", postgres_url, "--merge")
    assert (a_again["sessions_copied"], a_again["messages_copied"]) == (0, 0)


def test_merge_postgresql_into_a_sqlite_home_and_messages_added_later(
    root: click.Group, postgres_url: str, tmp_path: Path
) -> None:
    a, _ = home_a(tmp_path / "a.db")
    b = home_b(tmp_path / "b.db")
    migrate(root, "--from", b, "--to", postgres_url)
    merged = migrate(root, "--from", postgres_url, "--to", a, "--merge")
    assert merged["verified"] is True and list(merged["renamed"]) == ["shared-1"]
    assert (merged["sessions_copied"], merged["messages_copied"]) == (3, 3)

    pg = PostgresSessionDB(postgres_url)
    try:  # the source goes on: a message added there is added by the next merge, once
        pg.append_messages(
            "b-alice", [{"role": "user", "content": "and the quince"}], user_id="alice"
        )
    finally:
        pg.close()
    more = migrate(root, "--from", postgres_url, "--to", a, "--merge")
    assert (more["sessions_copied"], more["messages_copied"]) == (0, 1) and more["verified"]
    db = SessionDB(tmp_path / "a.db")
    try:
        texts = [m.content for m in db.get_messages("b-alice")]
        assert texts == ["the persimmon config", "and the quince"]
        assert found(db, "quince", "alice") == ["b-alice"]
    finally:
        db.close()
