"""session_search shows the query's sentences of a long message, not only its head and tail."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.search import MESSAGE_CHARS, SessionSearch
from hermes_core.llm.tokens import estimate_tokens

EN_FILLER = " ".join(f"Sentence {i} is about the weather and the garden." for i in range(60))
ZH_FILLER = "".join(f"第{i}句讲天气和花园的事情。" for i in range(160))
CASES = {
    "en": (EN_FILLER, "The ferry to Naxos leaves at 7:40 from gate E2.", "ferry Naxos"),
    "zh": (ZH_FILLER, "去纳克索斯的渡轮七点四十分从东二号口出发。", "纳克索斯渡轮"),
}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_long_message_is_cut_around_the_query(db: SessionDB, add_session: Any, lang: str) -> None:
    filler, needle, query = CASES[lang]
    long_text = f"{filler} {needle} {filler}"
    assert len(long_text) > MESSAGE_CHARS
    add_session(db, "trip", [("user", "plans?"), ("assistant", long_text)])
    found = SessionSearch(db).run({"query": query}, "current")
    shown = [m["content"] for r in found["results"] for m in r["messages"]]
    focused = next(c for c in shown if len(c) > 100)
    assert needle in focused
    # no bigger than the head-and-tail clip it replaces
    assert estimate_tokens(focused) <= estimate_tokens(long_text[:MESSAGE_CHARS]) + 8
    # read mode has no query: head and tail as before
    read = SessionSearch(db).run({"session_id": "trip"}, "current")
    whole = next(m["content"] for m in read["messages"] if len(m["content"]) > 100)
    assert "[truncated]" in whole and needle not in whole
