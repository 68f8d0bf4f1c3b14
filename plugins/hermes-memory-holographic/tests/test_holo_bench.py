"""The holographic bench retriever satisfies the Retriever protocol and finds the right turns."""

from __future__ import annotations

from pathlib import Path

from hermes_memory_holographic import HolographicProvider, HolographicSettings

from hermes_core.bench.locomo import BenchConversation, BenchQuestion, run_benchmark
from hermes_core.bench.retrievers import BenchSession, BenchTurn, Retriever

SESSIONS = (
    BenchSession(
        "D1",
        1_700_000_000.0,
        (
            BenchTurn("D1:1", "Ana", "I adopted a grey cat called Pixel last week."),
            BenchTurn("D1:2", "Ben", "The quarterly tax forms are due on Friday."),
        ),
    ),
    BenchSession(
        "D2",
        1_700_100_000.0,
        (
            BenchTurn("D2:1", "Ana", "我周末去杭州西湖划船了。"),
            BenchTurn("D2:2", "Ben", "My new bike has carbon wheels."),
        ),
    ),
)


def test_holo_retriever(tmp_path: Path, home: Path) -> None:
    provider = HolographicProvider(HolographicSettings(), home)
    retriever = provider.bench_retriever(tmp_path / "bench")
    assert isinstance(retriever, Retriever)
    retriever.reset()
    retriever.index("conv-x", SESSIONS)
    assert retriever.search("What is the name of Ana's cat?", 1).turns[0].turn_id == "D1:1"
    top = retriever.search("西湖划船", 1).turns[0]
    assert (top.session_id, top.turn_id) == ("D2", "D2:1")
    retriever.reset()  # forgets the previous conversation
    retriever.index("conv-y", SESSIONS[:1])
    hits = retriever.search("bike wheels and the cat", 5).turns
    assert hits and {t.session_id for t in hits} == {"D1"}
    retriever.close()
    retriever.close()
    assert retriever.latencies_ms


def test_holo_retriever_through_run_benchmark(tmp_path: Path, home: Path) -> None:
    conv = BenchConversation(
        conversation_id="c1",
        sessions=list(SESSIONS),
        questions=[
            BenchQuestion(
                "What kind of wheels does Ben's bike have?", 4, ("D2:2",), ("D2",), qid="q1"
            )
        ],
    )
    retriever = HolographicProvider(HolographicSettings(), home).bench_retriever(tmp_path / "b")
    report = run_benchmark([conv], retriever, ks=(1, 5))
    retriever.close()
    assert report.scores["1-4"]["turn"]["recall_all@5"] == 1.0
