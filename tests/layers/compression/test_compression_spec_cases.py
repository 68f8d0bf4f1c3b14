"""The upstream acceptance cases of context compression (baseline and current behaviour)."""

from __future__ import annotations

from pathlib import Path

from compkit import assert_valid_openai, session, settings, tool_exchange, transcript

from hermes_core.layers.compression.compressor import CompressionState, compress_messages
from hermes_core.layers.compression.plugin import CompressionLayer
from hermes_core.llm.tokens import Usage, UsageTracker, estimate_messages_tokens
from hermes_core.settings.models import HermesSettings
from hermes_core.types import CompressionBudget


def compression_threshold(s: HermesSettings, context: int, model: str | None = None) -> int:
    return s.compression.trigger_tokens(context, model)


def should_compress(s: HermesSettings, tokens: int, context: int) -> bool:
    return s.compression.should_compress(tokens, context)


def _budget(threshold: int = 2000, context: int = 100_000) -> CompressionBudget:
    return CompressionBudget(
        context_length=context, threshold_tokens=threshold, prompt_tokens=threshold
    )


def test_should_compress_below_at_above_threshold() -> None:
    s = settings()
    threshold = compression_threshold(s, 200_000)
    assert threshold == 100_000  # worked example: 200K window -> 100,000
    assert not should_compress(s, threshold - 1, 200_000)
    assert should_compress(s, threshold, 200_000)  # exact equality triggers
    assert should_compress(s, threshold + 1, 200_000)
    assert not should_compress(settings(compression={"enabled": False}), 10**9, 200_000)


def test_threshold_cap_and_model_overrides() -> None:
    s = settings(
        compression={
            "threshold_tokens": 50_000,
            "model_thresholds": {"qwen": 0.3, "qwen2.5-coder": 0.9, "tiny": 1.0},
        }
    )
    assert compression_threshold(s, 200_000) == 50_000
    assert compression_threshold(s, 100_000, "Qwen2.5-7B") == 30_000
    assert compression_threshold(s, 40_000, "qwen2.5-coder:32b") == 36_000  # longest key wins
    assert (
        compression_threshold(
            settings(compression={"model_thresholds": {"tiny": 1.0}}), 8_000, "tiny"
        )
        == 6_800
    )


def test_preflight_large_message_triggers() -> None:
    msgs = [{"role": "user", "content": "x" * 400_000}]
    assert should_compress(settings(), estimate_messages_tokens(msgs), 128_000)


def test_update_from_response_and_missing_usage() -> None:
    tracker = UsageTracker()
    tracker.record(
        Usage.from_api({"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}), 1
    )
    assert (tracker.last_usage.prompt_tokens, tracker.last_usage.completion_tokens) == (10, 2)  # type: ignore[union-attr]
    assert Usage.from_api({}) == Usage(0, 0, 0)


def test_too_few_messages_unchanged(tmp_path: Path) -> None:
    msgs = transcript(2)
    result = CompressionLayer().compress(session(tmp_path, settings()), msgs, _budget(), "")
    assert result.aborted and list(result.messages) == msgs


def test_no_client_fallback_shrinks_keeps_system_and_last_n(tmp_path: Path) -> None:
    s = settings(compression={"protect_last_n": 5, "target_ratio": 0.1})
    state = CompressionState()
    msgs = transcript(40)
    result = compress_messages(
        msgs,
        settings=s.compression,
        budget=_budget(),
        state=state,
        client_factory=lambda: None,
    )
    out = list(result.messages)
    assert len(out) < len(msgs)
    assert out[0] == msgs[0]
    assert out[-5:] == msgs[-5:]
    assert state.compressions == 1 and state.summarizations == 0
    assert result.fallback_used


def test_summary_path_counts_summarizations(tmp_path: Path) -> None:
    from hermes_core.llm.client import LLMClient
    from hermes_core.testing.fake_llm import FakeLLMServer

    state = CompressionState()
    with FakeLLMServer() as server:
        server.script_chat("## Goal\n- x")
        result = compress_messages(
            transcript(40),
            settings=settings().compression,
            budget=_budget(),
            state=state,
            client_factory=lambda: LLMClient(server.base_url, None, server.model),
        )
    assert not result.fallback_used
    assert (state.compressions, state.summarizations) == (1, 1)


def test_tool_pairs_never_split_and_tail_never_starts_with_orphan(tmp_path: Path) -> None:
    msgs = transcript(3)
    for i in range(30):
        msgs.append({"role": "user", "content": f"run batch {i}"})
        msgs.extend(tool_exchange(100 + i, output="r" * 900))
        msgs.extend(tool_exchange(200 + i, output="s" * 900))
        msgs.append({"role": "assistant", "content": f"batch {i} ok"})
    for last_n in (1, 2, 3, 4, 7):
        s = settings(compression={"protect_last_n": last_n, "target_ratio": 0.1})
        result = CompressionLayer().compress(session(tmp_path, s), msgs, _budget(3000), "")
        out = list(result.messages)
        assert_valid_openai(out)
        first_tail = next(i for i, m in enumerate(out) if m.get("_compressed_summary")) + 1
        assert out[first_tail]["role"] != "tool"
