"""session_search: every mode, exclusions, filters, summaries, schema and fuzzing."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.search import (
    NO_MATCH_HINT,
    PARAMETERS,
    RAW_PREVIEW_LABEL,
    SessionSearch,
    build_tool,
    llm_summarizer,
)
from hermes_core.scope import ALL_USERS
from hermes_core.settings.base import load_settings
from hermes_core.types import SessionInfo, ToolContext

DAY = 86400.0
NOW = time.time()


@pytest.fixture
def archive(db: SessionDB, add_session: Any) -> SessionDB:
    """Five sessions: two about docker (EN + ZH), one cron, one hidden, one current."""
    filler = [("user", f"filler line {i} about nothing") for i in range(12)]
    add_session(
        db,
        "docker-old",
        [
            ("user", "How do I fix the docker build cache?"),
            ("assistant", "Use docker builder prune and rebuild with --no-cache."),
            *filler,
            ("user", "Thanks, the build works now."),
        ],
        started_at=NOW - 30 * DAY,
        title="Docker cache",
    )
    add_session(
        db,
        "docker-zh",
        [("user", "我们讨论了容器镜像的缓存问题"), ("assistant", "可以用 docker 重新构建镜像")],
        started_at=NOW - 2 * DAY,
    )
    add_session(db, "cron-job", [("user", "nightly docker cleanup ran")], source="cron")
    add_session(db, "hidden", [("user", "docker subagent chatter")], source="subagent")
    add_session(db, "current", [("user", "docker is on my mind right now")], started_at=NOW)
    return db


def _search(db: SessionDB, current: str | None = "current", **args: Any) -> dict[str, Any]:
    return SessionSearch(db).run(args, current)


def test_browse_lists_recent_roots_without_current_or_hidden(archive: SessionDB) -> None:
    out = _search(archive, limit=10)
    assert out["mode"] == "browse" and out["success"] is True
    ids = [r["session_id"] for r in out["results"]]
    assert "current" not in ids and "hidden" not in ids
    assert ids[0] == "cron-job"  # newest first (created last, no explicit start)
    assert ids[-1] == "docker-old"
    old = next(r for r in out["results"] if r["session_id"] == "docker-old")
    assert old["title"] == "Docker cache"
    assert old["preview"].startswith("Thanks, the build")
    assert _search(archive, limit=10, sort="oldest")["results"][0]["session_id"] == "docker-old"


def test_discover_ranks_and_hydrates_adaptively(archive: SessionDB) -> None:
    out = _search(archive, query="docker build cache", limit=5)
    assert out["mode"] == "discover"
    ids = [r["session_id"] for r in out["results"]]
    assert ids[0] == "docker-old"
    assert "current" not in ids and "hidden" not in ids
    top, rest = out["results"][0], out["results"][1:]
    assert top["detail"] == "full"
    assert any("docker builder prune" in m["content"] for m in top["messages"])
    assert top["bookend_start"] and top["bookend_end"]
    assert top["bookend_end"][-1]["content"].startswith("Thanks, the build")
    assert ">>>" in top["snippet"]
    assert top["link"].endswith("/docker-old")
    for item in rest:
        assert item["detail"] == "compact"
        assert len(item["messages"]) == 1
        assert item["messages"][0]["id"] == item["match_message_id"]


def test_full_detail_is_much_larger_than_adaptive(archive: SessionDB, add_session: Any) -> None:
    for n in range(3):
        add_session(
            archive,
            f"extra-{n}",
            [("user", f"docker compose question {n}")]
            + [("assistant", f"long answer {i} " * 20) for i in range(8)],
        )
    adaptive = json.dumps(_search(archive, query="docker", limit=4))
    full = json.dumps(_search(archive, query="docker", limit=4, detail="full"))
    assert len(full) >= 1.7 * len(adaptive)


def test_current_session_is_never_returned_but_compacted_rows_are(
    archive: SessionDB, add_session: Any
) -> None:
    archive.create_session("current-child", parent_session_id="current")
    archive.append_messages(
        "current-child", [{"role": "user", "content": "docker again"}], user_id=ALL_USERS
    )
    out = _search(archive, current="current-child", query="docker", limit=10)
    ids = {r["session_id"] for r in out["results"]}
    assert not ids & {"current", "current-child"}
    # rows the compressor archived are out of the live context: they may be found
    mid = archive.get_messages("current")[0].id
    archive.mark_compacted("current", [mid])
    out = _search(archive, current="current", query="mind", limit=10)
    assert [r["session_id"] for r in out["results"]] == ["current"]
    assert out["results"][0]["messages"][0]["compacted"] is True


def test_lineage_is_deduplicated(archive: SessionDB) -> None:
    archive.create_session("docker-old-2", parent_session_id="docker-old")
    archive.append_messages(
        "docker-old-2", [{"role": "user", "content": "docker build cache 2"}], user_id=ALL_USERS
    )
    ids = [r["session_id"] for r in _search(archive, query="docker build cache")["results"]]
    assert len({i for i in ids if i.startswith("docker-old")}) == 1


def test_zero_results_is_empty_with_hint(archive: SessionDB) -> None:
    out = _search(archive, query="kubernetes helm chart")
    assert out == {
        "success": True,
        "mode": "discover",
        "query": "kubernetes helm chart",
        "sessions_searched": 0,
        "results": [],
        "count": 0,
        "hint": NO_MATCH_HINT,
    }


def test_unsearchable_query_is_empty_not_error(archive: SessionDB) -> None:
    out = _search(archive, query='"((( ---')
    assert out["success"] is True and out["results"] == []


def test_chinese_discovery(archive: SessionDB) -> None:
    for query in ("缓存", "镜", "容器镜像的缓存"):
        out = _search(archive, query=query)
        assert [r["session_id"] for r in out["results"]] == ["docker-zh"], query


def test_sort_newest_and_oldest(archive: SessionDB) -> None:
    newest = [r["session_id"] for r in _search(archive, query="docker", sort="newest")["results"]]
    oldest = [r["session_id"] for r in _search(archive, query="docker", sort="oldest")["results"]]
    assert newest == list(reversed(oldest))
    assert oldest[0] == "docker-old"


def test_time_filters(archive: SessionDB) -> None:
    recent = _search(archive, query="docker", after="7d", limit=10)["results"]
    assert "docker-old" not in {r["session_id"] for r in recent}
    assert "docker-zh" in {r["session_id"] for r in recent}
    older = _search(archive, query="docker", before="7d", limit=10)["results"]
    assert [r["session_id"] for r in older] == ["docker-old"]
    iso = time.strftime("%Y-%m-%d", time.localtime(NOW - 10 * DAY))
    assert [r["session_id"] for r in _search(archive, query="docker", before=iso)["results"]] == [
        "docker-old"
    ]
    bad = _search(archive, query="docker", after="last tuesday")
    assert bad["success"] is False and "7d" in bad["error"]


def test_role_filter(archive: SessionDB) -> None:
    out = _search(archive, query="prune", role_filter="user")
    assert out["results"] == []
    out = _search(archive, query="prune", role_filter="assistant")
    assert [r["session_id"] for r in out["results"]] == ["docker-old"]
    bad = _search(archive, query="prune", role_filter="wizard")
    assert bad["success"] is False and "wizard" in bad["error"]


def test_tool_filter(db: SessionDB) -> None:
    call = {"id": "1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
    db.append_messages(
        "with-tool",
        [
            {"role": "assistant", "content": "running deploy script", "tool_calls": [call]},
            {"role": "tool", "name": "terminal", "tool_call_id": "1", "content": "deploy ok"},
        ],
        user_id=ALL_USERS,
    )
    db.append_messages("no-tool", [{"role": "user", "content": "deploy later"}], user_id=ALL_USERS)
    out = _search(db, query="deploy", tool="terminal", limit=10)
    assert [r["session_id"] for r in out["results"]] == ["with-tool"]


def test_scroll(archive: SessionDB) -> None:
    msgs = archive.get_messages("docker-old")
    anchor = msgs[7].id
    out = _search(archive, session_id="docker-old", around_message_id=anchor, window=2)
    assert out["mode"] == "scroll"
    assert [m["id"] for m in out["messages"]] == [m.id for m in msgs[5:10]]
    assert out["messages_before"] == 5 and out["messages_after"] == len(msgs) - 10
    # re-anchor on the last id to keep scrolling
    nxt = _search(archive, session_id="docker-old", around_message_id=out["last_message_id"])
    assert nxt["messages"][0]["id"] < out["last_message_id"] < nxt["messages"][-1]["id"]
    wrong = _search(archive, session_id="docker-zh", around_message_id=anchor)
    assert wrong["success"] is False and "not in session" in wrong["error"]


def test_read_whole_and_large(archive: SessionDB, add_session: Any) -> None:
    small = _search(archive, session_id="docker-zh")
    assert small["mode"] == "read" and len(small["messages"]) == 2 and not small["truncated"]
    add_session(archive, "big", [("user", f"line {i}") for i in range(50)])
    big = _search(archive, session_id="big")
    assert big["truncated"] and len(big["messages"]) == 30 and big["omitted"] == 20
    assert big["messages"][0]["content"] == "line 0" and big["messages"][-1]["content"] == "line 49"
    by_title = _search(archive, session_id="Docker cache")
    assert by_title["session_id"] == "docker-old"
    missing = _search(archive, session_id="nope")
    assert missing["success"] is False and "no session" in missing["error"]


def test_bad_arguments_never_raise(archive: SessionDB) -> None:
    for args in (
        {"limit": "many"},
        {"limit": True},
        {"sort": "sideways", "query": "x"},
        {"detail": "everything", "query": "x"},
        {"around_message_id": 3},
        {"session_id": 5},
        {"role_filter": 7, "query": "x"},
    ):
        out = SessionSearch(archive).run(args, "current")
        assert out["success"] is False and out["error"], args


def test_results_never_write_back(archive: SessionDB) -> None:
    before = archive.read("SELECT COUNT(*), MAX(id) FROM messages")[0]
    sessions = archive.count_sessions(user_id=ALL_USERS)
    _search(archive, query="docker", detail="full", limit=10)
    _search(archive)
    _search(archive, session_id="docker-old")
    assert archive.read("SELECT COUNT(*), MAX(id) FROM messages")[0] == before
    assert archive.count_sessions(user_id=ALL_USERS) == sessions


def test_summarize_without_model_falls_back_labelled(archive: SessionDB, home: Path) -> None:
    searcher = SessionSearch(archive, summarizer=llm_summarizer(load_settings(home)))
    out = searcher.run({"query": "docker build cache", "summarize": True}, "current")
    assert out["results"]
    for item in out["results"]:
        assert item["summary"].startswith(RAW_PREVIEW_LABEL)


def test_summarize_with_auxiliary_model(archive: SessionDB, home: Path, fake_llm: Any) -> None:
    fake_llm.responder = lambda req: "Recap: the user fixed the docker cache with prune."
    settings = load_settings(home, llm={"base_url": fake_llm.base_url, "model": fake_llm.model})
    searcher = SessionSearch(archive, summarizer=llm_summarizer(settings))
    out = searcher.run({"query": "docker build cache", "summarize": True, "limit": 1}, "current")
    assert out["results"][0]["summary"].startswith("Recap:")
    body = json.dumps(fake_llm.chat_requests[-1], ensure_ascii=False)
    assert "docker builder prune" in body


def test_summarize_llm_error_falls_back(archive: SessionDB, home: Path, fake_llm: Any) -> None:
    for _ in range(10):
        fake_llm.script_error(400)
    settings = load_settings(home, llm={"base_url": fake_llm.base_url, "model": fake_llm.model})
    searcher = SessionSearch(archive, summarizer=llm_summarizer(settings))
    out = searcher.run({"query": "docker", "summarize": True, "limit": 1}, "current")
    assert out["results"][0]["summary"].startswith(RAW_PREVIEW_LABEL)


def test_schema_shape() -> None:
    assert PARAMETERS["type"] == "object"
    assert not {"oneOf", "anyOf", "allOf"} & set(PARAMETERS)
    assert "mode" not in PARAMETERS["properties"]
    assert list(PARAMETERS["properties"])[:8] == [
        "query",
        "limit",
        "sort",
        "detail",
        "session_id",
        "around_message_id",
        "window",
        "role_filter",
    ]
    assert PARAMETERS["properties"]["sort"]["enum"] == ["newest", "oldest"]
    assert PARAMETERS["properties"]["detail"]["enum"] == ["adaptive", "full"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "query",
                "limit",
                "sort",
                "detail",
                "session_id",
                "around_message_id",
                "window",
                "role_filter",
                "after",
                "before",
                "tool",
                "summarize",
                "junk",
            ]
        ),
        st.one_of(st.none(), st.text(max_size=12), st.integers(), st.booleans(), st.floats()),
    )
)
def test_tool_handler_never_raises(archive: SessionDB, home: Path, args: dict[str, Any]) -> None:
    searcher = SessionSearch(archive)
    spec = build_tool(lambda: searcher)
    info = SessionInfo(id="current", home=home, settings=load_settings(home))
    out = json.loads(spec.handler(args, ToolContext(session=info)))
    assert isinstance(out["success"], bool)
    if not out["success"]:
        assert out["error"]


def test_cron_sessions_are_demoted(db: SessionDB, add_session: Any) -> None:
    add_session(db, "cron-1", [("user", "nightly backup report: backup ok")], source="cron")
    add_session(db, "chat-1", [("user", "where do the backup files go?")])
    ids = [r["session_id"] for r in SessionSearch(db).run({"query": "backup"})["results"]]
    assert ids == ["chat-1", "cron-1"]
    plain = SessionSearch(db, demoted_sources=()).run({"query": "backup"})["results"]
    assert [r["session_id"] for r in plain] == ["cron-1", "chat-1"]


def test_snippet_marks_chinese_phrase(archive: SessionDB) -> None:
    out = _search(archive, query="缓存问题")
    assert ">>>缓存问题<<<" in out["results"][0]["snippet"]


def test_browse_honours_the_tool_filter_across_lineage(db: SessionDB, add_session: Any) -> None:
    """session_search(tool="terminal") with no query lists only sessions that used the tool;
    a root is listed when its continuation (compression / /new child) used it."""
    call = {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
    add_session(db, "chat-only", [("user", "聊聊天气"), ("assistant", "今天晴天")])
    db.create_session("root", source="cli", started_at=NOW - DAY)
    db.append_messages("root", [{"role": "user", "content": "部署服务"}], user_id=ALL_USERS)
    db.create_session("child", source="cli", parent_session_id="root")
    db.append_messages(
        "child",
        [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "name": "terminal", "content": "ok"},
        ],
        user_id=ALL_USERS,
    )
    out = _search(db, current=None, tool="terminal", limit=10)
    assert out["mode"] == "browse"
    assert [r["session_id"] for r in out["results"]] == ["root"]
    assert _search(db, current=None, tool="web_search", limit=10)["results"] == []
    everything = _search(db, current=None, limit=10)
    assert {r["session_id"] for r in everything["results"]} == {"chat-only", "root"}


def test_summarize_closes_every_client_it_opens(
    archive: SessionDB, home: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One LLM client per summary, success or failure: each is closed (no leaked pools)."""
    from hermes_core.llm.client import LLMClient

    opened: list[LLMClient] = []
    closed: list[LLMClient] = []
    real_init, real_close = LLMClient.__init__, LLMClient.close

    def init(self: LLMClient, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        opened.append(self)

    def close(self: LLMClient) -> None:
        closed.append(self)
        real_close(self)

    monkeypatch.setattr(LLMClient, "__init__", init)
    monkeypatch.setattr(LLMClient, "close", close)
    fake_llm.responder = lambda req: "回顾：用户修好了 docker 缓存。"
    fake_llm.script_error(400)  # the first summary fails, the next succeed
    settings = load_settings(home, llm={"base_url": fake_llm.base_url, "model": fake_llm.model})
    searcher = SessionSearch(archive, summarizer=llm_summarizer(settings))
    out = searcher.run({"query": "docker", "summarize": True, "limit": 3}, "current")
    assert len(out["results"]) >= 2
    assert len(opened) == len(out["results"]) and sorted(map(id, closed)) == sorted(map(id, opened))


def test_discover_finds_a_session_by_its_title_and_scroll_flags_the_anchor(
    hermes_home: Path,
) -> None:
    """A session titled with the query's words comes first even when no message says
    them; scroll marks the message it is anchored on."""
    from hermes_core import MemoryHost

    with MemoryHost.open(hermes_home) as host:
        with host.session(user_id="u1", title="Kubernetes 迁移计划") as s:
            s.after_turn("let's plan the move", "first, inventory the services")
            s.after_turn("and then?", "then the databases")
        with host.session(user_id="u2", title="Kubernetes secrets") as other:
            other.after_turn("private stuff", "ok")
        with host.session(user_id="u1") as later:
            found = json.loads(later.call_tool("session_search", {"query": "kubernetes 迁移计划"}))
            assert found["count"] >= 1
            top = found["results"][0]
            assert top["title"] == "Kubernetes 迁移计划"
            assert all(r["title"] != "Kubernetes secrets" for r in found["results"])  # u2's
            scrolled = json.loads(
                later.call_tool(
                    "session_search",
                    {"session_id": top["session_id"], "around_message_id": top["match_message_id"]},
                )
            )
            flagged = [m for m in scrolled["messages"] if m.get("anchor")]
            assert [m["id"] for m in flagged] == [top["match_message_id"]]


def test_discover_reads_relative_times_against_its_clock(db: SessionDB, add_session: Any) -> None:
    asked = 1_700_000_000.0  # the searcher's "now"
    add_session(
        db, "old", [("user", "the kettle broke, the kettle leaks")], started_at=asked - 90 * DAY
    )
    add_session(db, "recent", [("user", "the kettle broke")], started_at=asked - 14 * DAY)
    args = {"query": "kettle two weeks ago", "limit": 2}
    found = SessionSearch(db, clock=lambda: asked).run(args)
    assert [r["session_id"] for r in found["results"]] == ["recent", "old"]
    later = SessionSearch(db, clock=lambda: asked + 365 * DAY).run(args)
    assert [r["session_id"] for r in later["results"]] == ["old", "recent"]
