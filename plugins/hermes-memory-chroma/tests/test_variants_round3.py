"""Issue 28, round 3: the arithmetic of ``bench_variants.py``'s re-fusion and session
aggregation, and its question-scaffolding stripper (EN and ZH), on tiny hand-made data."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_variants as bv
from hermes_memory_chroma.bench import SPEAKER_BOOST
from hermes_memory_chroma.retriever import Hit
from hermes_memory_chroma.store import Memory


@pytest.mark.parametrize(
    ("question", "stripped"),
    [
        ("What kind of pottery did Melanie make?", "pottery did Melanie make"),
        ("When did Caroline go to the support group?", "Caroline go to the support group"),
        # the counted noun is content and stays
        ("How many books has Jon read?", "books has Jon read"),
        ("Melanie painted a lake", "Melanie painted a lake"),
        ("卡罗琳什么时候去的支持小组？", "卡罗琳 去的支持小组"),
        ("梅兰妮做过哪些陶艺？", "梅兰妮做过 陶艺"),
        ("What?", "What?"),
        ("什么？", "什么？"),
    ],
)
def test_strip_scaffolding_drops_the_question_frame_only(question: str, stripped: str) -> None:
    assert bv.strip_scaffolding(question) == stripped


def _context() -> bv.Context:
    session_of = {"a1": "A", "a2": "A", "b1": "B", "c1": "C"}
    speaker = {"a1": "Ann", "a2": "Bob", "b1": "Ann", "c1": "Bob"}
    return bv.Context(
        retriever=None,  # type: ignore[arg-type]
        session_of=session_of,
        text=dict.fromkeys(session_of, ""),
        sizes={"A": 4, "B": 1, "C": 1},
        links={},
        idf={},
        index_text=dict.fromkeys(session_of, ""),
        speaker=speaker,
        created=dict.fromkeys(session_of, 0.0),
    )


def _hit(mem_id: str, factor: float, dense: int | None, bm25: int | None) -> Hit:
    s = bv.SETTINGS
    plain = (s.dense_weight / (s.rrf_k + dense) if dense else 0.0) + (
        s.bm25_weight / (s.rrf_k + bm25) if bm25 else 0.0
    )
    memory = Memory(id=mem_id, user_id="u", content="", session_id=mem_id[0].upper())
    return Hit(memory, plain * factor, dense_rank=dense, bm25_rank=bm25)


def test_refused_with_the_settings_weights_gives_back_the_first_pass_scores() -> None:
    c = _context()
    hits = [_hit("a1", 1.5, 1, 2), _hit("b1", 1.5, None, 1), _hit("c1", 1.0, 2, None)]
    s = bv.SETTINGS
    out = bv.refused(c, "Ann?", hits, s.dense_weight, s.bm25_weight, s.feedback_weight, s.rrf_k)
    assert out == pytest.approx({h.memory.id: h.score for h in hits})


def test_refused_reweights_ranks_and_boosts_a_new_turn_of_the_named_speaker() -> None:
    c = _context()
    hits = [_hit("a1", 2.0, 1, None), _hit("c1", 1.0, None, 1)]
    # a dense ranking of its own: a2 (Bob, named alone) is not in the first pass
    out = bv.refused(c, "What did Bob say?", hits, 1.0, 2.0, 0.0, 5, dense_rank=["a2", "a1"])
    assert out["a2"] == pytest.approx(SPEAKER_BOOST * 1.0 / 6)
    assert out["a1"] == pytest.approx(2.0 * 1.0 / 7)  # its first-pass factor is kept
    assert out["c1"] == pytest.approx(2.0 / 6)
    assert set(out) == {"a1", "a2", "c1"}


def test_ranked_with_aggregates_sessions_from_their_own_scores() -> None:
    c = _context()
    turns = {"a1": 0.9, "b1": 0.5, "a2": 0.4}
    # session A: (0.9 + 0.5 * 0.4) / 4 ** 0.5 = 0.55; B: 0.5; C: only in the session scores
    order, sessions = bv.ranked_with(c, turns, {**turns, "c1": 0.6}, decay=0.5, norm=0.5)
    assert order == ["a1", "b1", "a2"]
    assert sessions == ["C", "A", "B"]
    # without the size norm A's geometric sum (1.1) leads
    assert bv.ranked_with(c, turns, turns, decay=0.5, norm=0.0)[1] == ["A", "B"]
