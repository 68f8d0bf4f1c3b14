"""The host records what each turn's recall put in front of the model, per user, bounded."""

from __future__ import annotations

from pathlib import Path

from providers_for_tests import RecordingProvider

from hermes_core import MemoryHost, SessionInfo, hookimpl, recall_trace
from hermes_core.settings.base import load_settings
from hermes_core.types import MemoryContext


class ScoredProvider(RecordingProvider):
    """Recalls one line per query, with scores, naming the user it serves."""

    name = "scored"

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        return MemoryContext(
            f"- {session.user_id} 喜欢 龙井 tea ({query})",
            count=1,
            label="scored",
            scores=(0.875, float("nan")),
        )


def test_before_turn_is_traced_per_user_with_source_scores_and_tokens(hermes_home: Path) -> None:
    with MemoryHost.open(hermes_home) as host:
        host.registry.activate_class(ScoredProvider)
        with host.session(user_id="alice") as s:
            block = s.before_turn("what tea do I like?")
            s.before_turn("ok")  # trivial: no recall, nothing traced
        with host.session(user_id="bob") as s:
            s.before_turn("什么茶?")
    alice = recall_trace.load(hermes_home, "alice")
    assert len(alice) == 1
    turn = alice[0]
    assert turn.query == "what tea do I like?" and turn.turn == 1
    assert turn.tokens > 0 and block
    (source,) = turn.sources
    assert source.layer == "memory-provider:scored" and source.count == 1
    assert source.scores == (0.875,)  # the NaN is dropped
    assert "alice" in source.text and "bob" not in source.text
    bob = recall_trace.load(hermes_home, "bob")
    assert [t.query for t in bob] == ["什么茶?"]
    assert "alice" not in bob[0].sources[0].text


def test_trace_is_bounded_and_off_with_the_setting(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  recall_trace_turns: 3\n")
    with MemoryHost.open(hermes_home) as host:
        host.registry.activate_class(ScoredProvider)
        with host.session(user_id="u") as s:
            for i in range(5):
                s.before_turn(f"question number {i}")
    assert [t.turn for t in recall_trace.load(hermes_home, "u")] == [3, 4, 5]
    (hermes_home / "config.yaml").write_text("memory:\n  recall_trace: false\n")
    assert load_settings(hermes_home).memory.recall_trace is False
    with MemoryHost.open(hermes_home) as host, host.session(user_id="v") as s:
        s.before_turn("anything worth recalling?")
    assert recall_trace.load(hermes_home, "v") == []
    assert not recall_trace.trace_path(hermes_home, "v").exists()


def test_forget_phrase_drops_matching_turns_only(hermes_home: Path) -> None:
    with MemoryHost.open(hermes_home) as host:
        host.registry.activate_class(ScoredProvider)
        with host.session(user_id="u") as s:
            s.before_turn("tell me about Project Falcon")
            s.before_turn("天气怎么样")
    assert len(recall_trace.find_phrase(hermes_home, "u", "project falcon")) == 1
    assert recall_trace.forget_phrase(hermes_home, "u", "PROJECT FALCON") == 1
    assert [t.query for t in recall_trace.load(hermes_home, "u")] == ["天气怎么样"]
    assert b"Falcon" not in recall_trace.trace_path(hermes_home, "u").read_bytes()
    assert recall_trace.forget_user(hermes_home, "u") is True
    assert recall_trace.load(hermes_home, "u") == []


def test_an_unreadable_trace_file_is_ignored(hermes_home: Path) -> None:
    path = recall_trace.trace_path(hermes_home, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not json")
    assert recall_trace.load(hermes_home, None) == []
