"""The recall block carries each relevant memory's ``similarity`` (MemoryContext.scores) when
every line of the block has one, so the recall trace shows it per memory; profile facts have
none, so a block that shows them has no scores (all or nothing)."""

from __future__ import annotations

from pathlib import Path

from hermes_memory_supermemory.api import SearchHit, search_hits

from hermes_core import recall_trace
from hermes_core.testing.harness import ProviderHarness, traced_source

QUERY = "which editor do I use every day?"


def test_the_trace_gets_the_similarities(hermes_home: Path, harness: ProviderHarness) -> None:
    session = harness.session
    session.before_turn("Tell me what you know about my tools")
    session.after_turn("I use Helix as my editor every day", "Noted.")
    session.before_turn("And what do I drink with it?")
    session.after_turn("I drink oolong tea, 我喜欢乌龙茶, next to my editor", "Nice.")
    assert harness.host.flush(10)
    source = traced_source(harness, QUERY)  # turn 3: no profile facts
    assert "User Profile" not in source.text and source.count == 2
    best, second = source.scores
    assert 0.5 < second < best <= 1  # the double's similarity, best first
    assert "Helix" in source.text.splitlines()[1]
    with harness.host.session(source="test", user_id="test-user") as fresh:
        fresh.before_turn(QUERY)  # turn 1 of a new session: profile facts shown
    (profiled,) = recall_trace.load(hermes_home, "test-user")[-1].sources
    assert "Recent Context" in profiled.text and profiled.scores == ()


def test_similarity_is_parsed_typed() -> None:
    hits = search_hits(
        [
            {"id": "m1", "memory": "Alice 喜欢乌龙茶", "similarity": 0.8, "updatedAt": "x"},
            {"id": "m2", "chunk": "a chunk", "similarity": None, "updatedAt": "x"},
            {"id": "m3", "memory": "flag", "similarity": True, "updatedAt": "x"},
        ]
    )
    assert hits == [
        SearchHit("m1", "Alice 喜欢乌龙茶", 0.8),
        SearchHit("m2", "a chunk", None),
        SearchHit("m3", "flag", None),
    ]
