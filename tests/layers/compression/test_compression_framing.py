"""Framing of summary messages: stripping keeps the whole body, the prefix is never doubled,
and a message the summary was merged into keeps its own words (EN + ZH)."""

from __future__ import annotations

import pytest

from hermes_core.layers.compression.compressor import (
    CompressionState,
    assemble,
    compress_messages,
    summary_message_text,
)
from hermes_core.layers.compression.messages import (
    MERGE_CLOSE,
    MERGE_OPEN,
    SUMMARY_END_MARKER,
    SUMMARY_PREFIX,
    is_summary,
    split_summary,
    without_summary,
)
from hermes_core.layers.compression.summarizer import (
    clean_summary,
    serialize_turns,
    strip_summary_framing,
)
from hermes_core.settings.models import CompressionSettings
from hermes_core.types import ChatMessage, CompressionBudget

BODY_EN = (
    "## Goal\n- Ship the billing migration\n\n"
    "## Critical Context\n- port 6432\n\n- retention: seven years\n\n\n"
    "## Historical Remaining Work\n- verify the audit copy"
)
BODY_ZH = "## Goal\n- 迁移会员库\n\n## Critical Context\n- 端口 6543\n\n- 积分流水保留五年"


@pytest.mark.parametrize("body", [BODY_EN, BODY_ZH], ids=["en", "zh"])
@pytest.mark.parametrize(
    "prefix",
    [
        SUMMARY_PREFIX,
        "[CONTEXT SUMMARY]:",
        "[CONTEXT SUMMARY]",
        "[CONTEXT COMPACTION]",
        "[CONTEXT COMPACTION — REFERENCE ONLY] An older wording: this is reference only from "
        "a previous context window; do not resume the tasks it mentions.",
    ],
)
def test_strip_keeps_the_whole_multiline_body(body: str, prefix: str) -> None:
    framed = f"{prefix}\n\n{body}\n\n{SUMMARY_END_MARKER}"
    assert strip_summary_framing(framed) == body
    if len(prefix) < 40:
        assert strip_summary_framing(f"{prefix} {body}") == body  # body on the prefix line


def test_a_short_legacy_prefix_keeps_a_first_paragraph_that_is_content() -> None:
    text = "[CONTEXT SUMMARY]: Goal: migrate the DB to port 6432.\n\nThen verify the copy."
    assert (
        strip_summary_framing(text) == "Goal: migrate the DB to port 6432.\n\nThen verify the copy."
    )


@pytest.mark.parametrize("body", [BODY_EN, BODY_ZH], ids=["en", "zh"])
def test_the_prefix_is_never_doubled(body: str) -> None:
    once = summary_message_text(body)
    twice = summary_message_text(once)
    assert twice == once
    assert twice.count(SUMMARY_PREFIX) == 1 and twice.count(SUMMARY_END_MARKER) == 1
    doubled = f"{SUMMARY_PREFIX}\n\n{SUMMARY_PREFIX}\n\n{body}\n\n{SUMMARY_END_MARKER}"
    assert strip_summary_framing(doubled) == body
    assert summary_message_text(doubled) == once
    # a model that echoes the framing back
    assert clean_summary(once) == body


def test_merged_user_message_keeps_its_own_words() -> None:
    head: list[ChatMessage] = [
        {"role": "system", "content": "s"},
        {"role": "assistant", "content": "a"},
    ]
    tail: list[ChatMessage] = [{"role": "user", "content": "now deploy it, 然后通知我"}]
    merged = assemble(head, summary_message_text(BODY_EN), tail)[2]
    assert is_summary(merged)
    body, own = split_summary(merged["content"])
    assert body == BODY_EN and own == "now deploy it, 然后通知我"
    plain = without_summary(merged)
    assert plain is not None and plain["content"] == "now deploy it, 然后通知我"
    assert "now deploy it, 然后通知我" in serialize_turns([merged])
    assert "Ship the billing migration" not in serialize_turns([merged])


def test_merged_assistant_message_keeps_its_own_words() -> None:
    head: list[ChatMessage] = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    tail: list[ChatMessage] = [{"role": "assistant", "content": "I restarted the worker."}]
    merged = assemble(head, summary_message_text(BODY_ZH), tail)
    merged_msg = next(m for m in merged if MERGE_OPEN in str(m.get("content")))
    text = str(merged_msg["content"])
    assert text.startswith(MERGE_OPEN) and MERGE_CLOSE in text
    assert is_summary({"role": "assistant", "content": text})  # even without the marker key
    assert split_summary(text) == (BODY_ZH, "I restarted the worker.")


def test_a_pure_summary_message_has_no_own_words() -> None:
    assert without_summary({"role": "user", "content": summary_message_text(BODY_EN)}) is None
    assert split_summary("plain text") == ("", "plain text")


def test_second_compaction_keeps_the_first_sheets_later_sections() -> None:
    """End to end: the previous sheet (recovered from the transcript) keeps every section,
    not just its first paragraph, and the new summary message has one prefix."""
    settings = CompressionSettings(protect_first_n=1, protect_last_n=2)
    messages: list[ChatMessage] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": summary_message_text(BODY_EN), "_compressed_summary": True},
    ]
    for i in range(12):
        messages.append({"role": "assistant", "content": f"step {i} done " * 20})
        messages.append({"role": "user", "content": f"next step {i} please " * 10})
    budget = CompressionBudget(context_length=100_000, threshold_tokens=100, prompt_tokens=3000)
    result = compress_messages(
        messages,
        settings=settings,
        budget=budget,
        state=CompressionState(),
        client_factory=lambda: None,
    )
    assert not result.aborted and result.summary is not None
    assert "seven years" in result.summary and "verify the audit copy" in result.summary
    text = "\n".join(str(m.get("content")) for m in result.messages)
    assert text.count(SUMMARY_PREFIX) == 1
