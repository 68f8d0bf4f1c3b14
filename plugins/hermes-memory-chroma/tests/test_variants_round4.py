"""Issue 28, round 4: ``bench_variants.py``'s question-scaffolding remover (EN and ZH), the
own-words turn order, session-level fusion, and its use of the product's relative-time
parser, on tiny hand-made data."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_variants as bv
from hermes_memory_chroma.retriever import Hit
from hermes_memory_chroma.store import Memory


@pytest.mark.parametrize(
    ("question", "kept", "dropped"),
    [
        ("How many different kinds of pottery did Melanie make in total?", "pottery", "total"),
        ("What is the total number of books I read?", "books", "number"),
        ("我一共去过几次婚礼？", "婚礼", "一共"),
        ("我目前有多少只猫？", "猫", "多少"),
    ],
)
def test_without_fillers_drops_counting_words_only(question: str, kept: str, dropped: str) -> None:
    out = bv.without_fillers(question)
    assert kept in out
    assert dropped not in out


@pytest.mark.parametrize("question", ["How many?", "多少？", "In total?"])
def test_without_fillers_keeps_a_question_of_scaffolding_alone(question: str) -> None:
    assert bv.without_fillers(question) == question


def test_relative_windows_come_from_the_product_parser() -> None:
    asked = datetime(2023, 6, 14, 12).timestamp()  # a Wednesday
    ((start, end),) = bv.relative_windows("What did I cook last Saturday?", asked)
    assert start < datetime(2023, 6, 10, 12).timestamp() < end
    assert end <= datetime(2023, 6, 14).timestamp()
    ((start, end),) = bv.relative_windows("我上周六做了什么菜？", asked)
    assert start < datetime(2023, 6, 10, 12).timestamp() < end
    assert bv.relative_windows("What did I cook?", asked) == []
    assert bv.relative_windows("What did I cook last Saturday?", None) == []


def _context(speaker: dict[str, str]) -> bv.Context:
    session_of = {t: t[0].upper() for t in speaker}
    return bv.Context(
        retriever=None,  # type: ignore[arg-type]
        session_of=session_of,
        text=dict.fromkeys(session_of, ""),
        sizes=dict.fromkeys(session_of.values(), 1),
        links={},
        idf={},
        speaker=speaker,
    )


def _hit(mem_id: str, score: float, dense: int | None = None, bm25: int | None = None) -> Hit:
    memory = Memory(id=mem_id, user_id="u", content="", session_id=mem_id[0].upper())
    return Hit(memory, score, dense_rank=dense, bm25_rank=bm25)


def test_own_words_reorders_the_asked_persons_turns_and_not_the_sessions() -> None:
    c = _context({"a1": "assistant", "b1": "user", "c1": "assistant"})
    hits = [_hit("a1", 1.0), _hit("b1", 0.4), _hit("c1", 0.3)]
    base = bv.base(c, "What did I buy?", hits, None)
    turns, sessions = bv.r4_own(3.0)(c, "What did I buy?", hits, None)
    assert turns == ["b1", "a1", "c1"]  # 0.4 × 3 = 1.2 > 1.0
    assert sessions == base[1]
    # about the assistant ("you"), or ×2 not enough: the order stays
    assert bv.r4_own(3.0)(c, "What did you tell me?", hits, None)[0] == base[0]
    assert bv.r4_own(2.0)(c, "我买了什么？", hits, None)[0] == base[0]
    assert bv.r4_own(3.0)(c, "我买了什么？", hits, None)[0] == ["b1", "a1", "c1"]


def test_own_words_follows_the_one_named_participant() -> None:
    c = _context({"a1": "Ann", "b1": "Bob", "c1": "Bob"})
    hits = [_hit("a1", 1.0), _hit("b1", 0.6), _hit("c1", 0.2)]
    assert bv.r4_own(2.0)(c, "What did Bob paint?", hits, None)[0] == ["b1", "a1", "c1"]
    # two names: nobody's words are preferred
    assert bv.r4_own(2.0)(c, "Did Ann and Bob paint?", hits, None)[0] == ["a1", "b1", "c1"]


def test_session_rrf_fuses_each_rankings_session_order() -> None:
    c = _context({"a1": "x", "a2": "x", "b1": "x", "c1": "x"})
    c.session_of["a2"] = "A"
    # dense: a2, b1 → A, B ; keyword: c1, a1 → C, A
    hits = [_hit("a1", 0.5, None, 2), _hit("a2", 0.4, 1), _hit("b1", 0.3, 2)]
    hits.append(_hit("c1", 0.2, None, 1))
    orders = bv.session_orders(c, hits)
    assert [o for o, _ in orders] == [["A", "B"], ["C", "A"], []]
    # weights 0.5 / 1.0, k 10: A = 0.5/11 + 1/12 = 0.129, C = 1/11 = 0.091, B = 0.5/12
    assert (bv.SETTINGS.dense_weight, bv.SETTINGS.bm25_weight) == (0.5, 1.0)
    turns, sessions = bv.r4_session_rrf(10)(c, "q", hits, None)
    assert sessions == ["A", "C", "B"]
    assert turns == ["a1", "a2", "b1", "c1"]
    # k 100 flattens the ranks: A (in two rankings) still leads, B and C by weight
    assert bv.r4_session_rrf(100)(c, "q", hits, None)[1] == ["A", "C", "B"]
