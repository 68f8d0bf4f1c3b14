"""Head/tail boundaries and tool-pair repair."""

from __future__ import annotations

from compkit import SYSTEM, tool_exchange, transcript

from hermes_core.layers.compression.boundaries import (
    STUB_RESULT,
    find_boundaries,
    sanitize_tool_pairs,
)


def test_head_is_system_plus_first_exchange() -> None:
    msgs = transcript(10)
    b = find_boundaries(msgs, protect_first_n=3, protect_last_n=4, tail_budget_tokens=1)
    assert b.head_end >= 3
    assert msgs[b.head_end]["role"] != "tool"


def test_head_extends_over_tool_results() -> None:
    msgs = [dict(SYSTEM), {"role": "user", "content": "go"}, *tool_exchange(1), *transcript(6)[1:]]
    b = find_boundaries(msgs, protect_first_n=3, protect_last_n=2, tail_budget_tokens=1)
    assert b.head_end == 4  # system, user, assistant call, tool result


def test_tail_never_starts_with_tool_result() -> None:
    msgs = transcript(12)
    for budget in range(1, 2000, 37):
        for last_n in (1, 2, 3, 5, 8):
            b = find_boundaries(
                msgs, protect_first_n=3, protect_last_n=last_n, tail_budget_tokens=budget
            )
            if not b.empty:
                assert msgs[b.tail_start]["role"] != "tool"


def test_newest_user_message_forced_into_tail() -> None:
    msgs = [*transcript(3), {"role": "user", "content": "the newest ask"}]
    for i in range(10):
        msgs.extend(tool_exchange(100 + i, output="x" * 2000))
    b = find_boundaries(msgs, protect_first_n=3, protect_last_n=1, tail_budget_tokens=10)
    assert b.tail_start <= msgs.index({"role": "user", "content": "the newest ask"})


def test_min_tail_user_messages() -> None:
    msgs = transcript(10)
    b = find_boundaries(
        msgs, protect_first_n=3, protect_last_n=1, tail_budget_tokens=1, min_tail_user_messages=3
    )
    assert sum(m["role"] == "user" for m in msgs[b.tail_start :]) == 3


def test_budget_respected_when_floor_allows() -> None:
    msgs = transcript(30)
    b = find_boundaries(msgs, protect_first_n=3, protect_last_n=1, tail_budget_tokens=300)
    from hermes_core.llm.tokens import estimate_messages_tokens

    assert estimate_messages_tokens(msgs[b.tail_start :]) <= 1.5 * 300 + 200


def test_too_few_messages_is_empty() -> None:
    msgs = transcript(1)
    b = find_boundaries(msgs, protect_first_n=3, protect_last_n=20, tail_budget_tokens=10_000)
    assert b.empty


def test_sanitize_drops_orphans_and_stubs_missing() -> None:
    call, result = tool_exchange(1)
    call2, _ = tool_exchange(2)
    orphan = {"role": "tool", "tool_call_id": "gone", "content": "lost"}
    msgs = [
        dict(SYSTEM),
        {"role": "user", "content": "hi"},
        orphan,
        call,
        result,
        dict(result),
        call2,
        {"role": "user", "content": "next"},
    ]
    out = sanitize_tool_pairs(msgs)
    roles = [m["role"] for m in out]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "user"]
    assert out[5] == {"role": "tool", "tool_call_id": "call_2", "content": STUB_RESULT}
    assert all(m.get("tool_call_id") != "gone" for m in out)
