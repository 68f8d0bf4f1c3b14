"""Hostile ids, the same on SQLite and PostgreSQL: an id no backend can keep exactly (one
holding NUL) is refused with a message naming the fix — by the archive, the host (the
way in of the library, MCP and the bridges) and the CLI; every other id (control characters,
bidi marks, Chinese, very long) is stored exactly and keeps working turn after turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core import MemoryHost
from hermes_core.errors import HermesError
from hermes_core.layers.sessions.archive import SessionStore
from hermes_core.scope import ALL_USERS, InvalidUserId, check_user_id

REFUSED = ["a\x00b", "\x00", "用户\x00"]
EXACT = ["用户\x01甲", "\u202eevil", " spaced ", "a" * 5000, "tab\tand\nnewline", "😀"]


@pytest.mark.parametrize("uid", REFUSED)
def test_the_archive_refuses_an_id_it_cannot_keep(db: SessionStore, uid: str) -> None:
    with pytest.raises(InvalidUserId, match="user id"):
        db.create_session("s-refused", user_id=uid)
    assert db.get_session("s-refused", user_id=ALL_USERS) is None


@pytest.mark.parametrize("uid", EXACT)
def test_other_ids_are_stored_exactly(db: SessionStore, uid: str) -> None:
    db.create_session("s-exact", user_id=uid)
    record = db.get_session("s-exact", user_id=ALL_USERS)
    assert record is not None and record.user_id == uid
    db.ensure_session("s-exact", user_id=uid)  # the same user again: no scope clash


@pytest.mark.parametrize("uid", [*REFUSED, EXACT[0]])
def test_the_host_refuses_or_keeps_the_id_for_every_turn(home: Path, uid: str) -> None:
    with MemoryHost.open(home, load_entrypoints=False) as host:
        if uid in REFUSED:
            with pytest.raises(HermesError, match="no store can keep it exactly"):
                host.session(user_id=uid)
            return
        session = host.session(user_id=uid)
        for turn in range(3):  # was: every later turn failed with a scope clash
            session.before_turn(f"turn {turn}")
            session.after_turn(f"turn {turn}", "ok")
        session.close()


@pytest.mark.parametrize("uid", REFUSED)
def test_the_cli_names_the_fix_for_a_hostile_user(home: Path, uid: str) -> None:
    result = CliRunner().invoke(cli_main(), ["memory", "show", "--user", uid])
    assert result.exit_code != 0
    assert "no store can keep it exactly" in result.output


def cli_main():  # type: ignore[no-untyped-def]
    from hermes_core.cli.main import cli

    return cli


def test_check_user_id_rule() -> None:
    assert check_user_id(None) is None and check_user_id("") is None
    assert check_user_id(42) == "42"
    with pytest.raises(InvalidUserId):
        check_user_id("x" * 1_000_001)
