"""Users kept apart in the session archive: the ``session_search`` tool in every mode, through a
real host, and ``hermes-memory sessions --user`` through the CLI (issue 13, point 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import MemoryHost
from hermes_core.host import Session
from hermes_core.layers.sessions.db import ALL_USERS, SessionDB, SessionStoreError

ALICE_EN = ("deploy the payments service to staging", "deployed payments to staging")
ALICE_ZH = ("把支付服务部署到预发布环境", "支付服务已经部署完成")
BOB_EN = ("deploy the payments service to production", "payments deployed to production")
BOB_ZH = ("把支付服务部署到生产环境", "生产环境的支付服务已部署")
NOBODY = ("deploy payments for the shared team box 部署支付", "done for the team 已完成")


def _turns(session: Session, *pairs: tuple[str, str]) -> None:
    for user_text, reply in pairs:
        session.before_turn(user_text)
        session.after_turn(user_text, reply)


@pytest.fixture
def host(hermes_home: Path) -> Any:
    with MemoryHost.open(hermes_home) as opened:
        alice = opened.session(user_id="alice", session_id="alice-0001", source="telegram")
        _turns(alice, ALICE_EN, ALICE_ZH)
        alice.close()
        bob = opened.session(user_id="bob", session_id="bob-0001", source="telegram")
        _turns(bob, BOB_EN, BOB_ZH)
        bob.close()
        anon = opened.session(session_id="anon-0001", title="团队 notes")
        _turns(anon, NOBODY)
        anon.close()
        hidden = opened.session(user_id="alice", session_id="alice-sub-01", source="subagent")
        _turns(hidden, ("subagent deploy payments notes 子代理", "ok"))
        hidden.close()
        titled = opened.session(user_id="bob", session_id="bob-plan-02", title="Bob secret plan")
        _turns(titled, ("bob plan about payments", "noted"))
        titled.close()
        yield opened


def _search(session: Session, **args: Any) -> dict[str, Any]:
    return json.loads(session.call_tool("session_search", args))


def _ids(result: dict[str, Any]) -> set[str]:
    return {item["session_id"] for item in result.get("results", [])}


@pytest.mark.parametrize("query", ["deploy payments", "支付服务 部署", "payments production"])
def test_discover_returns_only_the_callers_sessions(host: MemoryHost, query: str) -> None:
    alice = host.session(user_id="alice")
    bob = host.session(user_id="bob")
    anon = host.session()
    assert _ids(_search(alice, query=query, limit=10)) <= {"alice-0001"}
    assert _ids(_search(bob, query=query, limit=10)) <= {"bob-0001", "bob-plan-02"}
    assert _ids(_search(anon, query=query, limit=10)) <= {"anon-0001"}
    assert _ids(_search(alice, query="支付", limit=10)) == {"alice-0001"}
    assert _ids(_search(anon, query="部署支付", limit=10)) == {"anon-0001"}
    for s in (alice, bob, anon):
        s.close()


def test_browse_returns_only_the_callers_sessions(host: MemoryHost) -> None:
    alice = host.session(user_id="alice")
    anon = host.session()
    stranger = host.session(user_id="carol")
    assert _ids(_search(alice, limit=10)) == {"alice-0001"}  # hidden subagent excluded
    assert _ids(_search(anon, limit=10)) == {"anon-0001"}
    assert _ids(_search(stranger, limit=10)) == set()
    for s in (alice, anon, stranger):
        s.close()


@pytest.mark.parametrize(
    "ref",
    ["bob-0001", "bob-0", "Bob secret plan", "@session:home/bob-0001", "alice-sub-01"],
)
def test_another_users_or_hidden_session_answers_like_a_missing_one(
    host: MemoryHost, ref: str
) -> None:
    """Read by id, id prefix, title or link; scroll too: byte-identical to a missing id."""
    alice = host.session(user_id="alice")
    db = SessionDB.open(host.home)
    foreign_message = db.get_messages("bob-0001")[0].id
    db.close()
    missing = "zzzz-nope" if ref != "bob-0" else "zzzzz"
    for args, other in (
        ({"session_id": ref}, {"session_id": missing}),
        (
            {"session_id": ref, "around_message_id": foreign_message},
            {"session_id": missing, "around_message_id": foreign_message},
        ),
    ):
        got = alice.call_tool("session_search", args)
        baseline = alice.call_tool("session_search", other)
        assert json.loads(got)["success"] is False
        assert got.replace(ref, "<ref>") == baseline.replace(missing, "<ref>")
        assert "支付" not in got and "production" not in got
    alice.close()


def test_scroll_to_a_foreign_message_from_an_own_session_reveals_nothing(
    host: MemoryHost,
) -> None:
    alice = host.session(user_id="alice")
    db = SessionDB.open(host.home)
    bob_msg = db.get_messages("bob-0001")[0].id
    top = max(m.id for sid in db.iter_all_session_ids() for m in db.get_messages(sid))
    db.close()
    foreign = json.loads(
        alice.call_tool(
            "session_search", {"session_id": "alice-0001", "around_message_id": bob_msg}
        )
    )
    absent = json.loads(
        alice.call_tool(
            "session_search", {"session_id": "alice-0001", "around_message_id": top + 1000}
        )
    )
    assert foreign["success"] is absent["success"] is False
    assert foreign["error"].replace(str(bob_msg), "N") == absent["error"].replace(
        str(top + 1000), "N"
    )
    alice.close()


def test_own_sessions_are_readable_by_id_prefix_and_title(host: MemoryHost) -> None:
    bob = host.session(user_id="bob")
    assert _search(bob, session_id="bob-0001")["session_id"] == "bob-0001"
    assert _search(bob, session_id="Bob secret plan")["session_id"] == "bob-plan-02"
    anon = host.session()
    read = _search(anon, session_id="团队 notes")
    assert read["session_id"] == "anon-0001" and "部署支付" in json.dumps(read, ensure_ascii=False)
    bob.close()
    anon.close()


def test_titles_are_unique_per_user_so_a_clash_reveals_nothing(hermes_home: Path) -> None:
    db = SessionDB.open(hermes_home)
    db.create_session("a1", user_id="alice", title="计划 Plan")
    db.create_session("b1", user_id="bob", title="计划 Plan")
    db.create_session("b2", user_id="bob", title="计划 Plan")
    assert db.get_session("b1", user_id=ALL_USERS).title == "计划 Plan"  # type: ignore[union-attr]
    assert db.get_session("b2", user_id=ALL_USERS).title == "计划 Plan #2"  # type: ignore[union-attr]
    db.close()


def test_a_session_id_is_never_shared_across_users(hermes_home: Path) -> None:
    db = SessionDB.open(hermes_home)
    db.create_session("shared", user_id="alice")
    with pytest.raises(SessionStoreError, match="another user scope"):
        db.append_messages("shared", [{"role": "user", "content": "mallory writes"}], user_id="bob")
    with pytest.raises(SessionStoreError, match="another user scope"):
        db.create_session("shared", user_id=None)
    assert db.get_messages("shared") == []
    assert db.get_session("shared", user_id="alice") is not None
    assert db.get_session("shared", user_id=None) is None
    assert db.count_sessions(user_id=ALL_USERS) == 1
    db.close()


def test_the_turns_of_a_user_session_are_stored_under_that_user(host: MemoryHost) -> None:
    db = SessionDB.open(host.home)
    assert db.get_session("alice-0001", user_id=ALL_USERS).user_id == "alice"  # type: ignore[union-attr]
    assert db.get_session("anon-0001", user_id=ALL_USERS).user_id is None  # type: ignore[union-attr]
    assert db.get_session("alice-0001", user_id=ALL_USERS).source == "telegram"  # type: ignore[union-attr]
    db.close()


# --------------------------------------------------------------------------- the CLI


def _cli(cli: click.Group, *args: str) -> Any:
    return CliRunner().invoke(cli, ["sessions", *args], catch_exceptions=False)


def test_cli_defaults_to_the_no_user_scope(cli: click.Group, host: MemoryHost) -> None:
    listed = json.loads(_cli(cli, "list", "--json").output)
    assert [r["id"] for r in listed] == ["anon-0001"]
    found = json.loads(_cli(cli, "search", "支付 deploy", "--json").output)
    assert _ids(found) == {"anon-0001"}
    for args in (["show", "bob-0001"], ["export", "bob-0001"], ["title", "bob-0001", "x"]):
        out = CliRunner().invoke(cli, ["sessions", *args])
        assert out.exit_code != 0 and "no session matches" in out.output
        assert "production" not in out.output and "生产" not in out.output
    stats = json.loads(_cli(cli, "stats", "--json").output)
    assert stats["sessions"] == 1


def test_cli_user_option_scopes_every_command(
    cli: click.Group, host: MemoryHost, tmp_path: Path
) -> None:
    listed = json.loads(_cli(cli, "list", "--json", "--user", "bob").output)
    assert {r["id"] for r in listed} == {"bob-0001", "bob-plan-02"}
    found = json.loads(_cli(cli, "search", "生产环境", "--json", "--user", "bob").output)
    assert _ids(found) == {"bob-0001"}
    assert (
        _ids(json.loads(_cli(cli, "search", "生产环境", "--json", "--user", "alice").output))
        == set()
    )
    shown = json.loads(_cli(cli, "show", "bob-0001", "--json", "--user", "bob").output)
    assert shown["session"]["user_id"] == "bob"
    denied = CliRunner().invoke(cli, ["sessions", "show", "bob-0001", "--user", "alice"])
    assert denied.exit_code != 0 and "生产" not in denied.output
    exported = _cli(cli, "export", "bob-0001", "--user", "bob").output
    assert "生产环境" in exported
    titled = _cli(cli, "title", "bob-0001", "新标题 New", "--user", "bob")
    assert titled.exit_code == 0
    all_users = json.loads(_cli(cli, "list", "--json", "--all-users").output)
    assert {r["id"] for r in all_users} >= {"alice-0001", "bob-0001", "anon-0001"}
    stats = json.loads(_cli(cli, "stats", "--json", "--user", "alice").output)
    assert stats["sessions"] == 2 and stats["by_source"] == {"telegram": 1, "subagent": 1}


def test_cli_prune_only_touches_the_chosen_scope(cli: click.Group, host: MemoryHost) -> None:
    pruned = json.loads(_cli(cli, "prune", "--older-than", "0h", "--yes", "--json").output)
    assert pruned["session_ids"] == ["anon-0001"]
    db = SessionDB.open(host.home)
    assert (
        db.get_session("bob-0001", user_id=ALL_USERS) is not None
        and db.get_session("alice-0001", user_id=ALL_USERS) is not None
    )
    db.close()
    bob = json.loads(
        _cli(cli, "prune", "--older-than", "0h", "--yes", "--json", "--user", "bob").output
    )
    assert sorted(bob["session_ids"]) == ["bob-0001", "bob-plan-02"]


def test_cli_import_goes_into_the_user_scope(
    cli: click.Group, hermes_home: Path, tmp_path: Path
) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps([{"role": "user", "content": "我的猫叫咪咪 my cat"}], ensure_ascii=False),
        encoding="utf-8",
    )
    sid = json.loads(_cli(cli, "import", str(chat), "--user", "dana", "--json").output)[0][
        "session_id"
    ]
    assert _ids(json.loads(_cli(cli, "search", "咪咪", "--json").output)) == set()
    mine = json.loads(_cli(cli, "search", "咪咪", "--json", "--user", "dana").output)
    assert _ids(mine) == {sid}
    # the same file for another user is that user's own copy
    other = json.loads(_cli(cli, "import", str(chat), "--user", "erin", "--json").output)
    assert other[0]["status"] == "imported" and other[0]["session_id"] != sid


def test_naming_another_users_session_as_parent_reveals_nothing(host: MemoryHost) -> None:
    """Mallory opens sessions whose parent is Bob's id or an id that does not exist: browse,
    discover and the lineage answer the same either way (no existence oracle through
    lineage), and Bob's own results do not change."""
    answers = []
    for parent in ("bob-0001", "no-such-0001"):
        for n in (1, 2):
            s = host.session(user_id="mallory", session_id=f"m-{parent}-{n}", parent_id=parent)
            _turns(s, (f"probe 探测 {n}", "ok"))
            s.close()
        probe = host.session(user_id="mallory")
        browse = _ids(_search(probe, limit=10))
        found = _ids(_search(probe, query="探测 probe", limit=10))
        probe.close()
        answers.append(
            (
                {sid.replace(parent, "P") for sid in browse if parent in sid},
                {sid.replace(parent, "P") for sid in found if parent in sid},
            )
        )
    assert answers[0] == answers[1] == ({"m-P-1", "m-P-2"}, {"m-P-1", "m-P-2"})
    db = SessionDB.open(host.home)
    assert db.lineage("m-bob-0001-1", user_id=ALL_USERS) == ["m-bob-0001-1"]
    assert "m-bob-0001-1" not in db.lineage("bob-0001", user_id=ALL_USERS)
    db.close()
    bob = host.session(user_id="bob")
    assert _ids(_search(bob, limit=10)) == {"bob-0001", "bob-plan-02"}
    bob.close()


def test_odd_user_ids_are_one_consistent_scope(hermes_home: Path) -> None:
    """A user id with a lone surrogate (decoded with surrogateescape) or an empty string:
    stored and searched consistently, never an encoding error; "" is the no-user scope."""
    odd = "用户\udcff"
    with MemoryHost.open(hermes_home) as host:
        s = host.session(user_id=odd, session_id="odd-user")
        _turns(s, ("秘密计划 secret plan", "noted"))
        again = host.session(user_id=odd)
        assert _ids(_search(again, query="秘密计划")) == {"odd-user"}
        empty = host.session(user_id="")
        assert _ids(_search(empty, query="秘密计划")) == set()
        for opened in (s, again, empty):
            opened.close()


@pytest.mark.parametrize("bad", ["", " ", "a\nb", "x" * 300, "id\udcff", 42])
def test_unusable_session_ids_are_refused_at_open(memory_host: MemoryHost, bad: Any) -> None:
    from hermes_core.errors import HermesError

    if bad == "":
        memory_host.session(session_id=bad).close()  # empty means "a fresh id"
        return
    with pytest.raises(HermesError, match="printable text"):
        memory_host.session(session_id=bad)
    with pytest.raises(HermesError, match="parent_id"):
        memory_host.session(parent_id=bad)


def test_ids_differing_only_in_undecodable_bytes_are_different_users(hermes_home: Path) -> None:
    one, two = "用户\udcff", "用户\udcfe"
    with MemoryHost.open(hermes_home) as host:
        a = host.session(user_id=one, session_id="one-1")
        _turns(a, ("甲的秘密 first secret", "ok"))
        b = host.session(user_id=two)
        assert _ids(_search(b, query="秘密 secret")) == set()
        assert _search(b, session_id="one-1")["success"] is False
        a.close()
        b.close()


_USER_IDS = st.one_of(
    st.none(),
    st.text(st.characters(blacklist_characters="\x00"), min_size=0, max_size=12),  # NUL: refused
    st.sampled_from(["alice", "Alice", "用户甲", "u\udcff", "u\udcfe", " alice", "0", "None"]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=_USER_IDS, second=_USER_IDS)
def test_any_two_user_ids_never_see_each_others_sessions(
    tmp_path_factory: pytest.TempPathFactory, first: str | None, second: str | None
) -> None:
    from hermes_core.layers.sessions.records import stored_user_id
    from hermes_core.layers.sessions.search import SessionSearch

    if stored_user_id(first) == stored_user_id(second):
        return  # the same scope (None and "" are both the no-user scope)
    db = SessionDB.open(tmp_path_factory.mktemp("iso"))
    db.create_session("first-0001", user_id=first, title="甲 plan")
    db.append_messages(
        "first-0001", [{"role": "user", "content": "机密 confidential 内容XYZ"}], user_id=first
    )
    search = SessionSearch(db)
    for args in (
        {"query": "机密 confidential"},
        {},
        {"session_id": "first-0001"},
        {"session_id": "first"},
        {"session_id": "甲 plan"},
    ):
        mine = json.dumps(search.run(args, user_id=first), ensure_ascii=False)
        theirs = search.run(args, user_id=second)
        assert "内容XYZ" in mine
        assert "内容XYZ" not in json.dumps(theirs, ensure_ascii=False)
        assert theirs.get("count", 0) == 0
    db.close()


def test_cli_users_lists_the_scopes_for_operators(cli: click.Group, host: MemoryHost) -> None:
    rows = json.loads(_cli(cli, "users", "--json").output)
    counts = {r["user_id"]: r["sessions"] for r in rows}
    assert counts == {"alice": 2, "bob": 2, None: 1}
    table = _cli(cli, "users").output
    assert "alice" in table and "(no user)" in table
    listed = _cli(cli, "list", "--all-users").output
    assert "alice" in listed and "bob" in listed
