"""The recall block carries each memory's search score (MemoryContext.scores) when the API
returned one for every memory shown, so the recall trace can show it per memory."""

from __future__ import annotations

from collections.abc import Callable

from hermes_memory_retaindb import RetainDBProvider
from hermes_memory_retaindb.api import Memory


def test_scores_follow_the_lines(make_provider: Callable[..., RetainDBProvider]) -> None:
    provider = make_provider(api_key="k", project="p")
    items = [
        Memory("a", "Alice likes tea", score=0.91),
        Memory("b", "  ", score=0.5),
        Memory("c", "Alice 喜欢乌龙茶", score=0.42),
    ]
    block = provider.format_context(items)
    assert block is not None and block.count == 2
    assert block.scores == (0.91, 0.42)  # the blank memory is not shown, nor its score
    assert [line for line in block.text.splitlines() if line.startswith("- ")] == [
        "- Alice likes tea",
        "- Alice 喜欢乌龙茶",
    ]


def test_no_scores_when_one_is_missing(make_provider: Callable[..., RetainDBProvider]) -> None:
    provider = make_provider(api_key="k", project="p")
    block = provider.format_context([Memory("a", "one", score=0.9), Memory("b", "two")])
    assert block is not None and block.scores == () and block.count == 2
