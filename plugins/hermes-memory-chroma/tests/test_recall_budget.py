"""prefetch packs its block within the host's memory.recall_max_tokens (EN and ZH)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hermes_core.llm.tokens import estimate_tokens
from hermes_core.settings.models import HermesSettings, MemorySettings
from hermes_core.testing.fakes import make_turn
from hermes_core.types import SessionInfo

from hermes_memory_chroma.provider import ChromaProvider

Make = Callable[..., ChromaProvider]
SessionFor = Callable[..., SessionInfo]
CASES = {
    "en": (
        "We talked about the garden and the weather at length. ",
        ["I like hiking in the Alps.", "My sister lives in Lyon."],
        "My locker code is 4721.",
        "What is my locker code?",
        "4721",
    ),
    "zh": (
        "我们聊了很久花园和天气的事情。",
        ["我喜欢在阿尔卑斯山徒步。", "我姐姐住在里昂。"],
        "我的储物柜密码是四七二一。",
        "我的储物柜密码是多少？",
        "四七二一",
    ),
}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_prefetch_block_fits_the_hosts_recall_budget(
    make_provider: Make, session_for: SessionFor, lang: str
) -> None:
    filler, others, fact, question, answer = CASES[lang]
    provider = make_provider()
    s = session_for("alice")
    for n, user in enumerate([others[0], filler * 40 + fact, others[1]], start=1):
        provider.sync(s, make_turn(user, "OK.", session_id=s.id, number=n))
    provider.configure(HermesSettings(memory=MemorySettings(recall_max_tokens=150)))
    small = provider.prefetch(s, question)
    assert small is not None and estimate_tokens(small.text) <= 150
    assert answer in small.text  # the fact's sentence, not the head of its long memory
    provider.configure(HermesSettings())  # the default, 1,500
    large = provider.prefetch(s, question)
    assert large is not None and estimate_tokens(large.text) > estimate_tokens(small.text)
