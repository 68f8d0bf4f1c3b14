"""The recall block carries each memory's search score (MemoryContext.scores) when the API
returned one for every memory shown, so the recall trace can show it per memory."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hermes_memory_retaindb import RetainDBProvider
from hermes_memory_retaindb.api import Memory

from hermes_core.testing.harness import SCORE_CASES, ScoreCase


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda case: case.name)
def test_scores_follow_the_lines(
    make_provider: Callable[..., RetainDBProvider], case: ScoreCase
) -> None:
    provider = make_provider(api_key="k", project="p")
    case.check(provider.format_context, lambda id_, text, score: Memory(id_, text, score=score))
