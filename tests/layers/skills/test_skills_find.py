"""skills_find ranking (sample library + 20 honest tasks) and skill_feedback outcomes."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from skillkit import SAMPLE_LIBRARY, TASKS, call, write_skill

from hermes_core.layers.skills.find import build_match_query, split_cjk
from hermes_core.layers.skills.tools import SkillsService
from hermes_core.types import ToolContext

AGENT_TOOLS = ("terminal", "memory", "session_search", "skills_list", "skill_view", "skill_manage")


@pytest.fixture
def library_service(make_service: Callable[..., SkillsService], home: Path) -> SkillsService:
    shutil.rmtree(home / "skills")
    shutil.copytree(SAMPLE_LIBRARY, home / "skills")
    return make_service(tools=AGENT_TOOLS, toolsets=("memory", "skills"), platform="linux")


def test_expected_skill_ranks_first_for_at_least_18_of_20_tasks(
    library_service: SkillsService, ctx: ToolContext
) -> None:
    tasks = yaml.safe_load(TASKS.read_text(encoding="utf-8"))
    assert len(tasks) == 20
    assert sum(1 for t in tasks if any("\u4e00" <= c <= "\u9fff" for c in t["task"])) >= 3
    misses = []
    for item in tasks:
        out = call(library_service.skills_find, ctx, task=item["task"])
        assert out["success"]
        top = out["results"][0]["name"] if out["results"] else None
        if top != item["expected"]:
            misses.append((item["task"], item["expected"], top))
    assert len(misses) <= 2, misses


def test_no_match_returns_empty_results(library_service: SkillsService, ctx: ToolContext) -> None:
    out = call(library_service.skills_find, ctx, task="the and of to")
    assert out["success"] and out["results"] == []
    out = call(library_service.skills_find, ctx, task="xylophone quaternion")
    assert out["results"] == []


def test_hidden_skills_are_not_found(library_service: SkillsService, ctx: ToolContext) -> None:
    out = call(library_service.skills_find, ctx, task="homebrew brew doctor on my mac", limit=20)
    assert "homebrew-maintenance" not in [r["name"] for r in out["results"]]


def test_query_building() -> None:
    assert build_match_query("How do I fix the Docker network?") == '"fix" OR "docker" OR "network"'
    assert (
        build_match_query("整理会议纪要") == '"整 理" OR "理 会" OR "会 议" OR "议 纪" OR "纪 要"'
    )
    assert build_match_query("怎么") == ""
    assert build_match_query('"; DROP TABLE x; --') == '"drop" OR "table"'
    assert split_cjk("ab中文") == "ab 中 文"


def test_short_chinese_query_matches(
    home: Path, make_service: Callable[..., SkillsService], ctx: ToolContext
) -> None:
    write_skill(home / "skills", "coffee-zh", description="记录用户喜欢喝的咖啡。")
    write_skill(home / "skills", "tea-zh", description="泡茶的步骤。")
    out = call(make_service().skills_find, ctx, task="咖啡")
    assert [r["name"] for r in out["results"]] == ["coffee-zh"]


def test_feedback_records_and_reorders_close_candidates(
    home: Path, make_service: Callable[..., SkillsService], ctx: ToolContext
) -> None:
    write_skill(home / "skills", "deploy-a", description="Deploy the web service to production.")
    write_skill(home / "skills", "deploy-b", description="Deploy the web service to production.")
    service = make_service()
    first = call(service.skills_find, ctx, task="deploy the web service")["results"]
    assert [r["name"] for r in first] == ["deploy-a", "deploy-b"]  # tie broken by name
    for _ in range(3):
        out = call(
            service.skill_feedback, ctx, name="deploy-a", outcome="failure", note="broke prod"
        )
    assert out["success"] and out["failures"] == 3 and out["success_rate"] == 0.2
    out = call(service.skill_feedback, ctx, name="deploy-b", outcome="success")
    assert out["successes"] == 1 and out["success_rate"] == pytest.approx(0.667, abs=0.001)
    second = call(service.skills_find, ctx, task="deploy the web service")["results"]
    assert [r["name"] for r in second] == ["deploy-b", "deploy-a"]
    assert second[0]["successes"] == 1 and second[1]["failures"] == 3


def test_track_record_never_beats_relevance_by_itself(
    home: Path, make_service: Callable[..., SkillsService], ctx: ToolContext
) -> None:
    write_skill(
        home / "skills", "nginx-proxy", description="Configure nginx as a reverse proxy with TLS."
    )
    write_skill(
        home / "skills", "proxy-notes", description="Notes.", body="Mentions a proxy once.\n"
    )
    service = make_service()
    for _ in range(20):
        call(service.skill_feedback, ctx, name="proxy-notes", outcome="success")
        call(service.skill_feedback, ctx, name="nginx-proxy", outcome="failure")
    out = call(service.skills_find, ctx, task="nginx reverse proxy with tls")
    assert out["results"][0]["name"] == "nginx-proxy"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"outcome": "success"}, "'name' is required"),
        ({"name": "s", "outcome": "meh"}, "'outcome' must be 'success' or 'failure'"),
        ({"name": "s", "outcome": "success", "note": 5}, "'note' must be a string"),
        ({"name": "s", "outcome": "success", "note": "x" * 2001}, "the limit is 2000"),
        ({"name": "ghost", "outcome": "success"}, "Skill 'ghost' not found"),
    ],
)
def test_feedback_errors(
    service: SkillsService, ctx: ToolContext, home: Path, args: dict[str, object], error: str
) -> None:
    write_skill(home / "skills", "s")
    out = call(service.skill_feedback, ctx, **args)
    assert out["success"] is False and error in out["error"]


def test_find_argument_errors(service: SkillsService, ctx: ToolContext) -> None:
    assert "'task' is required" in call(service.skills_find, ctx)["error"]
    assert "'limit' must be" in call(service.skills_find, ctx, task="x", limit=0)["error"]
    assert "'limit' must be" in call(service.skills_find, ctx, task="x", limit=True)["error"]


def test_state_db_is_shared_politely(home: Path, service: SkillsService, ctx: ToolContext) -> None:
    db = home / "state.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT)")
    conn.execute("INSERT INTO sessions VALUES ('a', 'other layer data')")
    conn.execute("PRAGMA user_version = 7")
    conn.commit()
    conn.close()
    write_skill(home / "skills", "s")
    call(service.skill_feedback, ctx, name="s", outcome="success", note="worked, 很好")
    call(service.skill_feedback, ctx, name="s", outcome="success")  # idempotent schema
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT title FROM sessions").fetchall() == [("other layer data",)]
    assert conn.execute("PRAGMA user_version").fetchone() == (7,)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    rows = conn.execute("SELECT skill, outcome, note, session_id FROM skill_outcomes").fetchall()
    assert rows[0] == ("s", "success", "worked, 很好", "s1") and len(rows) == 2
    conn.close()


def test_stats_store_closes_its_connection_when_state_db_is_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_core.layers.skills import find

    opened: list[sqlite3.Connection] = []
    closed: list[sqlite3.Connection] = []

    class Tracking(sqlite3.Connection):
        def close(self) -> None:
            closed.append(self)
            super().close()

    real_connect = sqlite3.connect

    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = real_connect(*args, factory=Tracking, **kwargs)  # type: ignore[call-overload]
        opened.append(conn)
        return conn  # type: ignore[no-any-return]

    monkeypatch.setattr(find.sqlite3, "connect", connect)
    (tmp_path / "state.db").write_bytes("not a database, 不是数据库".encode() * 200)
    store = find.SkillStatsStore(tmp_path)
    with pytest.raises(sqlite3.DatabaseError):
        store.record_view("deploy-site")
    assert opened and closed == opened


def test_find_ranks_without_track_record_when_state_db_is_damaged(
    home: Path, service: SkillsService, ctx: ToolContext
) -> None:
    write_skill(home / "skills", "deploy-site", description="Deploy the website to nginx 部署网站")
    write_skill(home / "skills", "weekly-report", description="Write the weekly report 写周报")
    (home / "state.db").write_text("not a database " * 100, encoding="utf-8")
    out = call(service.skills_find, ctx, task="部署网站到服务器")
    assert out["success"] is True and out["results"][0]["name"] == "deploy-site"
    feedback = call(service.skill_feedback, ctx, name="deploy-site", outcome="success")
    assert feedback["success"] is False  # recording needs the database: a JSON error
