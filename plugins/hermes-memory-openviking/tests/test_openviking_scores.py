"""The recall block carries each item's ``find`` score (MemoryContext.scores), only for the
items that fit the block, so the recall trace can show it per memory."""

from __future__ import annotations

from pathlib import Path

from hermes_memory_openviking.provider import OpenVikingProvider
from hermes_memory_openviking.settings import OpenVikingSettings


def _provider(home: Path, **settings: object) -> OpenVikingProvider:
    return OpenVikingProvider(OpenVikingSettings(url="http://127.0.0.1:9", **settings), home)


def test_scores_follow_the_lines_that_fit(tmp_path: Path) -> None:
    items = [
        {"uri": "viking://user/alice/memories/a.md", "abstract": "Alice likes tea", "score": 0.8},
        {"uri": "viking://user/alice/memories/b.md", "abstract": "", "score": 0.7},
        {"uri": "viking://user/alice/memories/c.md", "abstract": "Alice 喜欢乌龙茶", "score": 0.6},
    ]
    block = _provider(tmp_path).format_context(items)
    assert block is not None and block.count == 2 and block.scores == (0.8, 0.6)
    long = [{**items[0], "abstract": "Alice likes tea " * 8}, *items[1:]]
    tight = _provider(tmp_path, recall_max_chars=200).format_context(long)
    assert tight is not None and tight.count == 1 and tight.scores == (0.8,)


def test_no_scores_when_one_is_missing(tmp_path: Path) -> None:
    items = [
        {"uri": "viking://user/alice/memories/a.md", "abstract": "one", "score": 0.8},
        {"uri": "viking://user/alice/memories/b.md", "abstract": "two"},
    ]
    block = _provider(tmp_path).format_context(items)
    assert block is not None and block.count == 2 and block.scores == ()
