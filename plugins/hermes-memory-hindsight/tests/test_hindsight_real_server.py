"""Against Hindsight's own server (hindsight-api-slim 1.1.0, chunks mode, no LLM), started by
the `real_server` fixture; skipped unless HERMES_TEST_HINDSIGHT_SERVER=1
(`tox -e providers-hindsight-server`)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_memory_hindsight import HindsightProvider

from hermes_core import MemoryWrite
from hermes_core.testing.fakes import make_session_info, make_turn
from hermes_core.testing.harness import tool_result as tool

Make = Callable[..., HindsightProvider]


@pytest.fixture
def real(make_provider: Make, real_server: str) -> Callable[..., HindsightProvider]:
    bank = f"real-{uuid.uuid4().hex[:8]}"

    def build(**extra: Any) -> HindsightProvider:
        settings: dict[str, Any] = {
            "api_url": real_server,
            "bank_id": bank,
            "recall_types": "world,experience,observation",
            "retain_async": False,
            "prefetch_wait": 10.0,
        }
        settings.update(extra)
        return make_provider(**settings)

    return build


@pytest.mark.parametrize("template", ["{bank}-{user}", "{bank}"])
@pytest.mark.parametrize(
    ("fact", "query", "expect"),
    [
        ("My locker code is 4417 and my cat is called Pixel.", "What is my locker code?", "4417"),
        ("我的储物柜密码是九三七二，我的猫叫墨墨。", "我的储物柜密码是什么？", "九三七二"),
    ],
)
def test_two_users_never_share_on_the_real_server(
    real: Callable[..., HindsightProvider],
    hermes_home: Path,
    template: str,
    fact: str,
    query: str,
    expect: str,
) -> None:
    p = real(bank_id_template=template)
    alice = make_session_info(hermes_home, session_id="sa", user_id="alice")
    bob = make_session_info(hermes_home, session_id="sb", user_id="bob")
    p.sync(alice, make_turn(fact, "OK", session_id="sa"))
    mine = p.prefetch(alice, query)
    assert mine is not None and expect in mine.text
    theirs = p.prefetch(bob, query)
    assert theirs is None or expect not in theirs.text
    assert expect not in json.dumps(
        tool(p, bob, "hindsight_recall", query=query), ensure_ascii=False
    )


def test_tools_and_mirrored_writes_on_the_real_server(
    real: Callable[..., HindsightProvider], hermes_home: Path
) -> None:
    p = real()
    s = make_session_info(hermes_home, session_id="s1", user_id="carol")
    assert tool(p, s, "hindsight_retain", content="Carol's bike has carbon wheels.")["success"]
    found = tool(p, s, "hindsight_recall", query="What wheels does the bike have?")
    assert any("carbon wheels" in r["text"] for r in found["results"])
    p.on_memory_write(s, MemoryWrite(action="add", target="user", content="Carol drinks 乌龙茶."))
    p.on_memory_write(
        s,
        MemoryWrite(
            action="replace",
            target="user",
            content="Carol drinks coffee.",
            previous_content="Carol drinks 乌龙茶.",
        ),
    )
    drinks = json.dumps(
        tool(p, s, "hindsight_recall", query="What does Carol drink?"), ensure_ascii=False
    )
    assert "coffee" in drinks and "乌龙茶" not in drinks


def test_reflect_without_a_server_llm_is_a_clear_json_error(
    real: Callable[..., HindsightProvider], hermes_home: Path
) -> None:
    p = real()
    s = make_session_info(hermes_home, session_id="s1", user_id="dave")
    answer = tool(p, s, "hindsight_reflect", query="What do I like?")
    assert answer["success"] is False
    assert "LLM" in answer["error"], answer
