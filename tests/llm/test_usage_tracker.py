"""UsageTracker prefers API-reported usage over estimates."""

from __future__ import annotations

from hermes_core.llm.tokens import Usage, UsageTracker, estimate_messages_tokens, estimate_tokens


def test_usage_from_api_tolerates_missing() -> None:
    assert Usage.from_api(None) is None
    assert Usage.from_api({"prompt_tokens": 5}) == Usage(5, 0, 5)
    assert Usage.from_api({"prompt_tokens": "x", "completion_tokens": 2}) == Usage(0, 2, 2)


def test_tracker_estimates_before_first_report() -> None:
    msgs = [{"role": "user", "content": "你好世界 hello"}]
    tracker = UsageTracker()
    assert tracker.prompt_tokens(msgs) == estimate_messages_tokens(msgs)


def test_tracker_prefers_reported_usage_plus_new_messages() -> None:
    msgs = [{"role": "user", "content": "a" * 40}]
    tracker = UsageTracker()
    tracker.record(Usage(1000, 20, 1020), messages_sent=1)
    assert tracker.prompt_tokens(msgs) == 1000
    grown = [*msgs, {"role": "assistant", "content": "r"}, {"role": "user", "content": "q" * 8}]
    assert tracker.prompt_tokens(grown) == 1000 + 20 + estimate_tokens("q" * 8) + 4
    assert tracker.total_prompt_tokens == 1000 and tracker.calls == 1


def test_tracker_falls_back_when_transcript_shrank_or_usage_missing() -> None:
    tracker = UsageTracker()
    msgs = [{"role": "user", "content": "x" * 80}] * 3
    tracker.record(Usage(5000, 10, 5010), messages_sent=3)
    assert tracker.prompt_tokens(msgs[:1]) == estimate_messages_tokens(msgs[:1])
    tracker.record(None, messages_sent=3)
    assert tracker.prompt_tokens(msgs) == estimate_messages_tokens(msgs)
    assert tracker.last_prompt_tokens == 0
