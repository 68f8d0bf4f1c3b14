"""The deterministic extractive handoff sheet (EN + ZH)."""

from __future__ import annotations

from compkit import tool_exchange, transcript

from hermes_core.layers.compression.fallback import FALLBACK_NOTE, build_fallback_summary
from hermes_core.layers.compression.summarizer import HEADINGS
from hermes_core.llm.tokens import estimate_tokens


def _middle_en() -> list[dict]:
    return [
        {"role": "user", "content": "Please migrate the billing DB. Never drop the users table."},
        {"role": "assistant", "content": "We decided to use PostgreSQL 16 for the migration."},
        *tool_exchange(
            7,
            output='Traceback (most recent call last):\n  File "/srv/billing/migrate.py", line 42\n'
            "psycopg.OperationalError: connection refused on port 5433\n",
        ),
        {"role": "user", "content": "What is the backup size?"},
        {"role": "assistant", "content": "The backup is 12.5 GB at /backups/billing-2024.sql.gz."},
        {"role": "assistant", "content": None},
        {"role": "user", "content": "Next step: run `alembic upgrade head` on staging."},
    ]


def test_all_headings_in_order_and_note() -> None:
    text = build_fallback_summary(_middle_en(), budget_tokens=2000)
    assert text.startswith(FALLBACK_NOTE)
    positions = [text.index(h + "\n") for h in HEADINGS]
    assert positions == sorted(positions)


def test_keeps_asks_errors_paths_numbers_decisions_commands() -> None:
    text = build_fallback_summary(_middle_en(), budget_tokens=2000)
    assert "Next step: run `alembic upgrade head` on staging." in text  # latest ask verbatim
    assert "Please migrate the billing DB. Never drop the users table." in text
    assert "psycopg.OperationalError: connection refused on port 5433" in text
    assert "/srv/billing/migrate.py" in text
    assert "/backups/billing-2024.sql.gz" in text
    assert "12.5 GB" in text
    assert "PostgreSQL 16" in text
    assert "`alembic upgrade head`" in text
    assert "terminal pytest -q tests/test_7.py — error:" in text  # action with outcome
    assert "Q: What is the backup size? → A: The backup is 12.5 GB" in text


def test_chinese_transcript() -> None:
    middle = [
        {"role": "user", "content": "请把报告导出到 /srv/报表/二〇二四.csv，不要覆盖旧文件。"},
        {"role": "assistant", "content": "我们决定采用增量导出，预计耗时 45 分钟。"},
        *tool_exchange(3, output="错误：磁盘空间不足 (errno 28)\n"),
        {"role": "user", "content": "预算是多少？"},
        {"role": "assistant", "content": "预算是 4200 元。"},
    ]
    text = build_fallback_summary(middle, budget_tokens=2000)
    assert "/srv/报表/二〇二四.csv" in text
    assert "错误：磁盘空间不足 (errno 28)" in text
    assert "我们决定采用增量导出，预计耗时 45 分钟。" in text
    assert "4200 元" in text
    assert "不要覆盖旧文件" in text
    assert "Q: 预算是多少？" in text


def test_budget_respected_and_critical_first() -> None:
    middle = transcript(200)[1:]
    middle.insert(100, {"role": "user", "content": "FATAL: disk /dev/sda1 full at 99%"})
    text = build_fallback_summary(middle, budget_tokens=600)
    assert estimate_tokens(text) <= 600
    assert "FATAL: disk /dev/sda1 full at 99%" in text


def test_previous_summary_is_carried_over() -> None:
    previous = (
        "## Goal\n- ship v2\n\n## Completed Actions\n1. edit /a.py — ok [tool: edit]\n\n"
        "## Critical Context\n- port 8443"
    )
    text = build_fallback_summary(transcript(2)[1:], budget_tokens=2000, previous_summary=previous)
    assert "- ship v2" in text and "port 8443" in text
    assert "1. edit /a.py — ok [tool: edit]" in text
    assert "2. terminal pytest -q tests/test_0.py" in text  # numbering continues


def test_focus_and_notes_and_secrets() -> None:
    middle = [
        {"role": "user", "content": "my token=abcd1234efgh5678ijkl, deploy the cache layer"},
        {"role": "assistant", "content": "ok"},
    ]
    text = build_fallback_summary(middle, budget_tokens=2000, focus="cache", notes='likes "tea"')
    assert "abcd1234efgh5678ijkl" not in text and "[REDACTED]" in text
    assert '<memory-provider-context>"likes \\"tea\\""</memory-provider-context>' in text


def test_odd_input_never_raises() -> None:
    middle = [
        {"role": "user", "content": None},
        {"role": "weird"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "part"}],
            "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": "{not json"}}],
        },
        {"role": "tool", "tool_call_id": "x", "content": None},
    ]
    text = build_fallback_summary(middle, budget_tokens=2000)
    assert "## Goal" in text
