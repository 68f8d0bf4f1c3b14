"""The archive's user scope is a REQUIRED keyword ``user_id`` (no default that widens to every
user): omitting it is a ``TypeError`` at run time and an error for mypy; operator paths say
:data:`~hermes_core.scope.ALL_USERS` out loud. Runs on SQLite and PostgreSQL."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core.layers.sessions.archive import SessionStore
from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.pg import PostgresSessionDB
from hermes_core.scope import ALL_USERS

SCOPED = (
    "resolve_session",
    "get_session",
    "list_sessions",
    "count_sessions",
    "lineage",
    "sessions_titled",
    "append_messages",
    "sessions_older_than",
    "stats",
    "speaker_names",
)
"""The methods that once defaulted to every user when the scope was left out."""

CALLS: dict[str, Callable[[SessionStore, dict[str, Any]], Any]] = {
    "resolve_session": lambda db, kw: db.resolve_session("alice-1", **kw),
    "get_session": lambda db, kw: db.get_session("alice-1", **kw),
    "list_sessions": lambda db, kw: db.list_sessions(**kw),
    "count_sessions": lambda db, kw: db.count_sessions(**kw),
    "lineage": lambda db, kw: db.lineage("alice-1", **kw),
    "sessions_titled": lambda db, kw: db.sessions_titled(["旅行"], **kw),
    "append_messages": lambda db, kw: db.append_messages(
        "alice-1", [{"role": "user", "content": "again"}], **kw
    ),
    "sessions_older_than": lambda db, kw: db.sessions_older_than(float("inf"), **kw),
    "stats": lambda db, kw: db.stats(**kw),
    "speaker_names": lambda db, kw: db.speaker_names(**kw),
}


@pytest.fixture
def two_users(db: SessionStore) -> SessionStore:
    db.create_session("alice-1", user_id="alice", title="旅行 plans")
    db.append_messages("alice-1", [{"role": "user", "content": "hello"}], user_id="alice")
    db.create_session("bob-1", user_id="bob", title="旅行 budget")
    db.append_messages("bob-1", [{"role": "user", "content": "你好"}], user_id="bob")
    return db


@pytest.mark.parametrize("name", SCOPED)
def test_every_backend_declares_user_id_required(name: str) -> None:
    for cls in (SessionStore, SessionDB, PostgresSessionDB):
        method = getattr(cls, name)
        param = inspect.signature(method).parameters.get("user_id")
        assert param is not None, f"{cls.__name__}.{name} has no user_id"
        assert param.kind is inspect.Parameter.KEYWORD_ONLY
        assert param.default is inspect.Parameter.empty, f"{cls.__name__}.{name} has a default"
        assert "user" not in inspect.signature(method).parameters


@pytest.mark.parametrize("name", SCOPED)
def test_omitting_the_scope_is_a_type_error(two_users: SessionStore, name: str) -> None:
    before = two_users.count_sessions(user_id=ALL_USERS)
    with pytest.raises(TypeError, match="user_id"):
        CALLS[name](two_users, {})
    with pytest.raises(TypeError):
        CALLS[name](two_users, {"user": ALL_USERS})  # the old name is gone too
    assert two_users.count_sessions(user_id=ALL_USERS) == before
    assert len(two_users.get_messages("alice-1")) == 1  # nothing was written


def test_explicit_scopes_see_their_users_only(two_users: SessionStore) -> None:
    db = two_users
    assert db.count_sessions(user_id=ALL_USERS) == 2
    assert db.count_sessions(user_id="alice") == 1
    assert db.count_sessions(user_id=None) == 0
    assert [r.id for r in db.list_sessions(user_id="bob")] == ["bob-1"]
    assert db.get_session("alice-1", user_id="bob") is None
    assert db.resolve_session("bob-1", user_id="alice") is None
    assert [s for s, _ in db.sessions_titled(["旅行"], user_id="alice")] == ["alice-1"]
    assert {s for s, _ in db.sessions_titled(["旅行"], user_id=ALL_USERS)} == {"alice-1", "bob-1"}
    assert db.sessions_older_than(float("inf"), user_id="bob") == ["bob-1"]
    assert db.stats(user_id="alice")["sessions"] == 1
    assert db.stats(user_id=ALL_USERS)["sessions"] == 2
    from hermes_core.layers.sessions.errors import SessionStoreError

    with pytest.raises(SessionStoreError):  # bob cannot write into alice's session
        db.append_messages("alice-1", [{"role": "user", "content": "x"}], user_id="bob")


@pytest.mark.slow
@pytest.mark.sqlite_only
def test_mypy_rejects_a_call_without_the_scope(tmp_path: Path) -> None:
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "caller.py"
    snippet.write_text(
        textwrap.dedent(
            """
            from hermes_core.layers.sessions.archive import SessionStore
            from hermes_core.scope import ALL_USERS

            def scoped(db: SessionStore) -> object:
                return db.get_session("s", user_id=ALL_USERS)

            def unscoped(db: SessionStore) -> object:
                return db.count_sessions()
            """
        ),
        encoding="utf-8",
    )
    out, err, status = api.run(
        [
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(snippet),
        ]
    )
    assert status == 1, out + err
    assert 'Missing named argument "user_id" for "count_sessions"' in out
    assert "caller.py:6" not in out  # the scoped call is fine
