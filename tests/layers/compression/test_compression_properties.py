"""Hypothesis: compression output is always valid for the OpenAI API and fits.

Transcripts are generated with tool calls (1-3 per round, 0-3 rounds per turn), EN and ZH
text, ``None`` contents and images. Properties after a compaction with the deterministic
fallback: tool results follow their calls with no orphans or missing results, no two
consecutive user/assistant messages, the system message and the newest user message
survive, the estimate is below the threshold, and the input is not mutated.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

from compkit import assert_valid_openai, newest_user, session, settings
from hypothesis import HealthCheck, assume, example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from hermes_core.layers.compression.boundaries import sanitize_tool_pairs
from hermes_core.layers.compression.plugin import CompressionLayer
from hermes_core.llm.tokens import estimate_messages_tokens
from hermes_core.testing.fake_llm import FakeLLMServer
from hermes_core.types import CompressionBudget

EN = [
    *(["deploy", "the", "service", "check", "/srv/app/main.py", "port", "8443", "error", "retry"]),
    *(["budget", "4200", "decided", "use", "postgres"]),
]
ZH = [
    *[
        "部署",
        "服务",
        "检查",
        "端口",
        "错误",
        "重试",
        "预算",
        "决定",
        "使用",
        "数据库",
        "迁移",
        "完成",
    ]
]
TOOLS = ["terminal", "read_file", "web_search", "memory"]
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}


def _text(rng: random.Random, words: int, chinese: bool) -> str:
    pool = ZH if chinese else EN
    sep = "" if chinese else " "
    return sep.join(rng.choice(pool) for _ in range(words)) + ("。" if chinese else ".")


def build(seed: int, turns: int, chinese_share: float, max_words: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are Hermes."}]
    call = 0
    for t in range(turns):
        zh = rng.random() < chinese_share
        content: Any = f"ask {t}: " + _text(rng, rng.randint(1, max_words), zh)
        if rng.random() < 0.05:
            content = [{"type": "text", "text": content}, IMAGE]
        msgs.append({"role": "user", "content": content})
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
            calls = []
            for _ in range(rng.randint(1, 3)):
                call += 1
                name = rng.choice(TOOLS)
                args = (
                    {"command": _text(rng, 3, zh)}
                    if name == "terminal"
                    else {"path": f"/p/{call}.py"}
                )
                calls.append(
                    {
                        "id": f"c{call}",
                        "type": "function",
                        "function": {
                            "name": name,
                            "arguments": json.dumps(args, ensure_ascii=False),
                        },
                    }
                )
            msgs.append({"role": "assistant", "content": None, "tool_calls": calls})
            for c in calls:
                out = _text(rng, rng.randint(1, max_words), zh)
                if rng.random() < 0.2:
                    out += "\nError: boom exit code 2"
                msgs.append({"role": "tool", "tool_call_id": c["id"], "content": out})
        reply = _text(rng, rng.randint(1, max_words), zh) if rng.random() > 0.1 else None
        msgs.append({"role": "assistant", "content": reply})
    return msgs


@hsettings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    turns=st.integers(30, 90),
    chinese_share=st.sampled_from([0.0, 0.5, 1.0]),
    protect_last_n=st.integers(1, 20),
    target_ratio=st.sampled_from([0.1, 0.2, 0.3]),
    protect_first_n=st.integers(1, 4),
    ratio=st.floats(1.3, 4.0),
)
# found by hypothesis: all-Chinese transcript whose newest user message is text + image
@example(
    seed=2057,
    turns=42,
    chinese_share=1.0,
    protect_last_n=1,
    target_ratio=0.1,
    protect_first_n=3,
    ratio=2.0,
)
def test_compressed_transcript_is_valid_and_fits(
    tmp_path: Path,
    seed: int,
    turns: int,
    chinese_share: float,
    protect_last_n: int,
    target_ratio: float,
    protect_first_n: int,
    ratio: float,
) -> None:
    msgs = build(seed, turns, chinese_share, max_words=80)
    before = estimate_messages_tokens(msgs)
    threshold = int(before / ratio)
    assume(threshold >= 6_000)
    context = threshold * 2
    s = settings(
        compression={
            "protect_last_n": protect_last_n,
            "protect_first_n": protect_first_n,
            "target_ratio": target_ratio,
        }
    )
    assert s.compression.trigger_tokens(context) == threshold
    pristine = copy.deepcopy(msgs)
    budget = CompressionBudget(
        context_length=context, threshold_tokens=threshold, prompt_tokens=before
    )
    result = CompressionLayer().compress(session(tmp_path, s), msgs, budget, "")
    assert msgs == pristine
    assert not result.aborted, result.error
    out = list(result.messages)
    assert_valid_openai(out)
    assert out[0] == msgs[0]
    newest = newest_user(msgs)
    last_content = next(x["content"] for x in reversed(msgs) if x["role"] == "user")
    assert any(
        newest == m.get("content")
        or (isinstance(m.get("content"), str) and newest in m["content"])
        or m.get("content") == last_content
        # the summary merged into a multimodal newest user message: every original part
        # (text and image) kept, in order, after the summary part
        or (
            isinstance(m.get("content"), list)
            and isinstance(last_content, list)
            and m["content"][-len(last_content) :] == last_content
        )
        for m in out
        if m.get("role") == "user"
    )
    assert estimate_messages_tokens(out) < threshold
    assert result.tokens_after == estimate_messages_tokens(out)


@hsettings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), drop=st.lists(st.integers(0, 400), max_size=30))
def test_tool_pair_repair_after_arbitrary_deletions(seed: int, drop: list[int]) -> None:
    msgs = build(seed, 15, 0.5, max_words=5)
    keep = [m for i, m in enumerate(msgs) if i not in set(drop)]
    out = sanitize_tool_pairs(keep)
    pending: list[str] = []
    for m in out:
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending
            pending.remove(m["tool_call_id"])
        else:
            assert not pending
            pending = [c["id"] for c in m.get("tool_calls") or []]
    assert not pending
    # nothing but tool messages is ever removed
    assert [m for m in out if m["role"] != "tool"] == [m for m in keep if m["role"] != "tool"]


@hsettings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    turns=st.integers(30, 80),
    summary_lines=st.integers(0, 3000),
    protect_last_n=st.integers(1, 20),
    ratio=st.floats(1.3, 4.0),
)
def test_llm_summary_path_is_valid_and_fits(
    tmp_path: Path,
    llm_server: FakeLLMServer,
    seed: int,
    turns: int,
    summary_lines: int,
    protect_last_n: int,
    ratio: float,
) -> None:
    msgs = build(seed, turns, 0.5, max_words=80)
    before = estimate_messages_tokens(msgs)
    threshold = int(before / ratio)
    assume(threshold >= 6_000)
    # a model that may ignore the budget entirely (or answer almost nothing)
    llm_server.responder = lambda _body: "## Goal\n" + "- 事实 fact 42\n" * summary_lines
    s = settings(
        llm={"base_url": llm_server.base_url, "model": llm_server.model},
        compression={"protect_last_n": protect_last_n},
    )
    budget = CompressionBudget(
        context_length=threshold * 2, threshold_tokens=threshold, prompt_tokens=before
    )
    result = CompressionLayer().compress(session(tmp_path, s, f"s{seed}"), msgs, budget, "")
    assert not result.aborted and not result.fallback_used, result.error
    out = list(result.messages)
    assert_valid_openai(out)
    assert out[0] == msgs[0]
    assert estimate_messages_tokens(out) < threshold
