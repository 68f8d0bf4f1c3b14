"""The salience-ranked fallback sheet: what it keeps when the budget is tight (EN + ZH)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from compkit import tool_exchange

from hermes_core.layers.compression.fallback import build_fallback_summary
from hermes_core.layers.compression.salience import is_filler, score_line
from hermes_core.llm.tokens import estimate_tokens
from hermes_core.types import ChatMessage


def section(sheet: str, heading: str) -> str:
    return sheet.split(heading + "\n", 1)[1].split("\n\n## ", 1)[0]


def call(i: int, command: str, output: str) -> list[ChatMessage]:
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"c{i}",
                    "type": "function",
                    "function": {"name": "terminal", "arguments": json.dumps({"command": command})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": f"c{i}", "content": output},
    ]


def migration(chinese: bool) -> list[ChatMessage]:
    """The issue's shape: a port, a path, an error code and a retention rule, restated in a
    long session full of identical polling calls and "ok, continue"."""
    if chinese:
        asks = [
            "把会员库迁到新集群，新主库只能走 6543 端口。",
            "备份用 /data/backup/members-0118.dump，后面几份不一致。",
            "记住：积分流水必须保留五年。",
        ]
        acks = ["继续", "好的", "嗯"]
        error = "ERROR: duplicate key value (SQLSTATE 23505)"
    else:
        asks = [
            "Move the orders DB to the new cluster; the primary only takes port 6432.",
            "Restore from /var/backups/orders-0222.dump, the later dumps are inconsistent.",
            "Remember: audit rows must be kept for seven years.",
        ]
        acks = ["ok", "continue", "ok, continue"]
        error = "pg_restore: error: permission denied for schema audit (SQLSTATE 42501)"
    middle: list[ChatMessage] = [{"role": "user", "content": asks[0]}]
    index = 0
    for round_ in range(3):
        for _ in range(20):
            index += 1
            middle += call(index, "pg_isready -h db-02 -p 6432", "db-02:6432 - accepting")
        middle.append({"role": "user", "content": acks[round_]})
        middle.append({"role": "assistant", "content": "Continuing." if not chinese else "继续。"})
        if round_ < 2:
            middle.append({"role": "user", "content": asks[round_ + 1]})
            middle.append({"role": "assistant", "content": "OK." if not chinese else "好。"})
    middle += call(999, "pg_restore -d orders", "restoring...\n" * 30 + error + "\n")
    middle.append({"role": "user", "content": acks[0]})
    return middle


@pytest.mark.parametrize("chinese", [False, True], ids=["en", "zh"])
def test_the_issues_migration_keeps_all_four_facts_in_a_small_sheet(chinese: bool) -> None:
    middle = migration(chinese)
    sheet = build_fallback_summary(middle, budget_tokens=450)
    assert estimate_tokens(sheet) <= 450
    needles = ["6543", "/data/backup/members-0118.dump", "23505", "五年"]
    if not chinese:
        needles = ["6432", "/var/backups/orders-0222.dump", "42501", "seven years"]
    assert [n for n in needles if n not in sheet] == []
    goal = section(sheet, "## Goal")
    assert ("Move the orders DB" in goal) if not chinese else ("把会员库迁到新集群" in goal)
    for ack in ("ok, continue", "继续"):
        assert f"- {ack}\n" not in sheet + "\n"
    assert "ok" not in section(sheet, "## Historical Task Snapshot").lower().split()


@pytest.mark.parametrize("chinese", [False, True], ids=["en", "zh"])
def test_sixty_identical_calls_become_one_line_with_a_count(chinese: bool) -> None:
    sheet = build_fallback_summary(migration(chinese), budget_tokens=3000)
    actions = section(sheet, "## Completed Actions")
    assert actions.count("pg_isready") == 1
    assert "×60" in actions


def test_distinct_arguments_of_a_collapsed_group_are_listed() -> None:
    middle: list[ChatMessage] = [{"role": "user", "content": "Check every shard of the cluster."}]
    for i in range(12):
        middle += call(i, f"kubectl get pods -n shard-{i}", "Running")
    sheet = build_fallback_summary(middle, budget_tokens=3000)
    line = next(x for x in sheet.splitlines() if "×12" in x)
    assert "kubectl get pods -n shard-0" in line and "kubectl get pods -n shard-5" in line
    assert "6 more" in line


def test_goal_is_the_first_substantive_request_and_refinements_follow() -> None:
    middle: list[ChatMessage] = [
        {"role": "user", "content": "hey, morning"},
        {"role": "assistant", "content": "Morning!"},
        {"role": "user", "content": "Write a CLI that converts CSV files to Parquet."},
        {"role": "assistant", "content": "Sure."},
        {"role": "user", "content": "ok"},
        {"role": "user", "content": "Actually, make it read from stdin as well."},
        {"role": "user", "content": "继续"},
    ]
    sheet = build_fallback_summary(middle, budget_tokens=2000)
    goal = section(sheet, "## Goal")
    assert goal.startswith("- Write a CLI that converts CSV files to Parquet.")
    assert "refined: Actually, make it read from stdin as well." in goal
    snapshot = section(sheet, "## Historical Task Snapshot")
    assert "stdin" in snapshot and "继续" not in snapshot


def test_goal_can_come_from_the_head() -> None:
    head: list[ChatMessage] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "帮我把周报自动化，每周一早上九点发出去。"},
        {"role": "assistant", "content": "好的。"},
    ]
    middle: list[ChatMessage] = [{"role": "user", "content": "数据从 dw.sales_daily 出。"}]
    sheet = build_fallback_summary(middle, budget_tokens=2000, head=head)
    assert "帮我把周报自动化" in section(sheet, "## Goal")


def test_budget_is_filled_by_salience_not_position() -> None:
    noise = [
        {"role": "user", "content": f"random thought number {i} about nothing in particular"}
        for i in range(40)
    ]
    fact = {"role": "user", "content": "Never deploy on Fridays; the freeze starts at 16:00."}
    early = [fact, *noise]
    late = [*noise, fact]
    for middle in (early, late):
        sheet = build_fallback_summary(middle, budget_tokens=300)
        assert "Never deploy on Fridays" in sheet


@pytest.mark.parametrize(
    ("text", "source", "kinds"),
    [
        ("Remember: the staging DB listens on port 5433.", "user", {"marked", "port"}),
        ("记住：预算上限是 4200 元。", "user", {"marked", "quantity"}),
        ("We decided to go with httpx instead of requests.", "assistant", {"decision"}),
        ("我们决定改用 Redis 做幂等。", "user", {"decision"}),
        ("psql: error: connection refused (SQLSTATE 08006)", "tool", {"error", "code"}),
        ("错误：磁盘空间不足 (errno 28)", "tool", {"error", "code"}),
        ("Upgrade to v2.14.3 and open https://example.org/x", "user", {"version", "url"}),
        ("The deadline is Thursday, keep it under four minutes.", "user", {"date", "quantity"}),
        ("总共只有二十万，一周最多四次。", "user", {"quantity"}),
    ],
)
def test_signals_en_zh(text: str, source: Any, kinds: set[str]) -> None:
    salience = score_line(text, source)
    assert kinds <= set(salience.kinds)
    assert salience.score > score_line("the weather is nice today", source).score


def test_prose_about_errors_is_not_an_error_line() -> None:
    assert "error" not in score_line("A survey found a 12% drop in errors.", "tool").kinds
    assert "error" not in score_line("内部测评提到了错误率百分之零点七。", "tool").kinds


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "continue",
        "ok, continue",
        "继续",
        "好的",
        "嗯，继续",
        "hey, morning",
        "hi there",
        "在吗",
        "sounds good, thanks!",
        "好的，谢谢",
        "  ",
        "/compress",
    ],
)
def test_filler_is_never_a_request(text: str) -> None:
    assert is_filler(text)
    assert score_line(text, "user").score == 0


@pytest.mark.parametrize(
    "text", ["ok so deploy to eu-west-2", "继续用 6543 端口", "note: port 80", "no, use tabs"]
)
def test_short_requests_are_not_filler(text: str) -> None:
    assert not is_filler(text)


def test_tool_prose_ranks_below_the_users_words() -> None:
    user = score_line("I'd rather keep the old schema around for a while.", "user")
    page = score_line("The 2019 cohort study reports a 12% improvement in 3 regions.", "tool")
    assert user.score > page.score


def test_output_within_budget_on_odd_input() -> None:
    middle: list[ChatMessage] = [
        *tool_exchange(1, output=None),  # type: ignore[arg-type]
        {"role": "user", "content": [{"type": "text", "text": "important: keep /etc/x.conf"}]},
        {"role": "assistant", "content": None},
    ]
    for budget in (120, 300, 2000):
        sheet = build_fallback_summary(middle, budget_tokens=budget)
        assert "## Critical Context" in sheet
        assert estimate_tokens(sheet) <= max(budget, estimate_tokens(sheet.split("- ")[0]) + 200)


def test_reads_of_many_files_in_one_directory_collapse() -> None:
    middle: list[ChatMessage] = [{"role": "user", "content": "看一下 widgets 目录里的每个文件。"}]
    for i in range(25):
        middle += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"r{i}",
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "arguments": json.dumps({"path": f"app/widgets/w_{chr(97 + i)}.py"}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"r{i}", "content": "x = 1\n" * 50},
        ]
    sheet = build_fallback_summary(middle, budget_tokens=3000)
    actions = section(sheet, "## Completed Actions").splitlines()
    assert len(actions) == 1 and "read_file ×25: app/widgets/w_a.py" in actions[0]
    assert "19 more" in actions[0]


@pytest.mark.parametrize(
    "ask",
    [
        "请把日志保留三十天，千万别删审计表。",
        "Remember: never drop the audit table, keep logs 30 days.",
    ],
)
def test_goal_and_snapshot_are_never_empty_when_the_ask_is_also_a_constraint(ask: str) -> None:
    middle: list[ChatMessage] = [
        {"role": "user", "content": ask},
        {"role": "assistant", "content": "好的。"},
        {"role": "user", "content": "继续"},
    ]
    sheet = build_fallback_summary(middle, budget_tokens=800)
    assert section(sheet, "## Goal") == f"- {ask}"
    assert section(sheet, "## Historical Task Snapshot") == f"- {ask}"
    assert section(sheet, "## Historical In-Progress State") == "- (none)"  # "好的" is filler


def test_a_contentless_opener_in_the_head_is_not_the_goal() -> None:
    head: list[ChatMessage] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "hey, got a nasty one"},
        {"role": "assistant", "content": "Sure, what's going on?"},
    ]
    middle: list[ChatMessage] = [
        {"role": "user", "content": "Pods in payments-prod keep restarting; find out why."},
        {"role": "user", "content": "ok"},
    ]
    sheet = build_fallback_summary(middle, budget_tokens=1500, head=head)
    assert section(sheet, "## Goal").startswith("- Pods in payments-prod keep restarting")
