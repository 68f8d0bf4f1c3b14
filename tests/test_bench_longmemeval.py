"""``hermes-memory bench longmemeval`` and the answer-in-context metric: arithmetic on hand-made
data,
the bench end to end on tiny LongMemEval-format files (gzip and plain). No quality floors."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.bench.answer_context import (
    ContextLine,
    contains_answer,
    is_span,
    normalize_answer,
    recall_block,
)
from hermes_core.bench.locomo import BenchDataError, ndcg, recall_share, run_benchmark
from hermes_core.bench.longmemeval import (
    load_longmemeval_file,
    read_json_file,
    run_longmemeval,
)
from hermes_core.bench.retrievers import BenchSession, RetrievalResult, RetrievedTurn
from hermes_core.cli.main import cli
from hermes_core.llm.tokens import estimate_tokens


def _session(*turns: tuple[str, str, bool]) -> list[dict[str, Any]]:
    return [
        {"role": role, "content": text, **({"has_answer": True} if gold else {})}
        for role, text, gold in turns
    ]


LME: list[dict[str, Any]] = [
    {
        "question_id": "m1",
        "question_type": "multi-session",
        "question": "Which two instruments did I start learning?",
        "answer": "violin",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["answer_1", "noise_1", "answer_2"],
        "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/05/02 (Tue) 10:00", "2023/05/03"],
        "haystack_sessions": [
            _session(("user", "I started learning the violin last week.", True)),
            _session(("user", "Give me a recipe for lentil soup.", False)),
            _session(
                ("user", "Tips for the cello? I began cello lessons.", True),
                ("assistant", "Practise slowly.", False),
            ),
        ],
        "answer_session_ids": ["answer_1", "answer_2"],
    },
    {
        "question_id": "u1",
        "question_type": "single-session-user",
        "question": "什么咖啡我喜欢？",
        "answer": "拿铁",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["answer_z", "noise_z"],
        "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/05/02 (Tue) 10:00"],
        "haystack_sessions": [
            _session(("user", "我最喜欢的咖啡是拿铁。", True)),
            _session(("user", "明天天气怎么样？", False)),
        ],
        "answer_session_ids": ["answer_z"],
    },
    {
        "question_id": "t1_abs",
        "question_type": "temporal-reasoning",
        "question": "When did I buy the kayak?",
        "answer": "You did not mention a kayak.",
        "haystack_session_ids": ["answer_k"],
        "haystack_dates": ["2023/05/01 (Mon) 10:00"],
        "haystack_sessions": [_session(("user", "I bought a canoe.", False))],
        "answer_session_ids": ["answer_k"],
    },
]


class _Scripted:
    """Returns the same turn ids for every question, whatever is indexed."""

    name = "scripted"

    def __init__(self, order: Sequence[str]) -> None:
        self.order = list(order)
        self.known: set[str] = set()

    def reset(self) -> None:
        self.known = set()

    def index(self, conversation_id: str, sessions: Sequence[BenchSession]) -> None:
        self.known = {t.turn_id for s in sessions for t in s.turns}

    def search(self, query: str, k: int) -> RetrievalResult:
        turns = [t for t in self.order if t in self.known][:k]
        return RetrievalResult(tuple(RetrievedTurn(t.rsplit(":", 1)[0], t) for t in turns))

    def close(self) -> None:
        pass


@pytest.fixture
def lme_plain(tmp_path: Path) -> Path:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(LME, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def lme_gz(tmp_path: Path) -> Path:
    path = tmp_path / "lme.json.gz"
    path.write_bytes(gzip.compress(json.dumps(LME, ensure_ascii=False).encode("utf-8")))
    return path


def test_normalisation_en_and_zh() -> None:
    assert normalize_answer("  The  Beagle!\n") == "the beagle"
    assert normalize_answer("咖啡，拿铁。") == "咖啡 拿铁"
    assert normalize_answer("25:50") == "25 50"
    assert contains_answer("Time: 25:50, a PB.", "25:50")
    assert contains_answer("I love my cat.", "Cat")
    assert not contains_answer("a category", "cat")  # whole words for alphabetic answers
    assert contains_answer("我最喜欢的咖啡是拿铁。", "拿铁")  # substring for CJK
    assert not contains_answer("anything", "  !! ")  # empty after normalising
    assert is_span("violin", ["I started the Violin."])
    assert not is_span("2", ["two sessions"])


def test_recall_block_respects_the_budget() -> None:
    lines = [ContextLine("2023/05/01", "user", "word " * 200) for _ in range(5)]
    for budget in (60, 300, 1500):
        block = recall_block(lines, budget)
        assert block and estimate_tokens(block) <= budget
    assert recall_block([], 1500) == "" and recall_block(lines, 0) == ""
    small = [ContextLine("d1", "user", "alpha"), ContextLine("", "", "beta gamma")]
    block = recall_block(small, 1500)
    assert "[d1]\nuser: alpha" in block and "\nbeta gamma" in block
    # an answer beyond the budget is not in the block; a long turn before it cannot hide it
    far = [ContextLine("", "user", f"filler {i} " * 40) for i in range(20)]
    far.append(ContextLine("", "user", "the violin"))
    assert not contains_answer(recall_block(far, 200), "violin")
    assert contains_answer(recall_block(far, 2000), "violin")
    long_first = [ContextLine("", "user", "filler. " * 400), ContextLine("", "user", "the violin")]
    assert contains_answer(recall_block(long_first, 200, "violin"), "violin")


def test_share_metric_and_ndcg() -> None:
    ranked = ["a", "b", "c", "d"]
    assert recall_share(ranked, ["a", "d", "x"], 4) == pytest.approx(2 / 3)
    assert recall_share(ranked, ["d"], 3) == 0.0 and recall_share(ranked, [], 3) == 0.0
    assert ndcg(["x", "a"], ["a", "b"], 5) == pytest.approx((1 / 1.5849625) / (1 + 1 / 1.5849625))


def test_loader_reads_gzip_and_plain_and_keeps_abstention(lme_plain: Path, lme_gz: Path) -> None:
    plain = load_longmemeval_file(lme_plain)
    zipped = load_longmemeval_file(lme_gz)
    assert [c.questions[0].qid for c in plain] == ["m1", "u1", "t1_abs"]
    assert [c.questions[0].groups for c in zipped] == [
        ("all", "multi-session"),
        ("all", "single-session-user"),
        ("abstention", "abstention temporal-reasoning"),
    ]
    m1 = plain[0].questions[0]
    assert m1.gold_turns == ("answer_1:1", "answer_2:1") and m1.answer == "violin"
    assert len(load_longmemeval_file(lme_gz, limit=1)) == 1
    assert len(load_longmemeval_file(lme_gz, abstention=False)) == 2


def test_bad_files_get_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.json.gz"
    junk.write_bytes(b"\x1f\x8b" + b"not gzip at all")
    with pytest.raises(BenchDataError, match="gzip"):
        read_json_file(junk)
    with pytest.raises(BenchDataError, match="regular file"):
        read_json_file(tmp_path)
    big = tmp_path / "big.json"
    big.write_text("[" + "0," * 100 + "0]", encoding="utf-8")
    with pytest.raises(BenchDataError, match="cap"):
        read_json_file(big, max_bytes=50)
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b"[" + b" " * 10_000 + b"]"))
    with pytest.raises(BenchDataError, match="decompresses"):
        read_json_file(bomb, max_bytes=1000)
    locomo_shaped = tmp_path / "locomo.json"
    locomo_shaped.write_text(json.dumps([{"conversation": {}}]), encoding="utf-8")
    with pytest.raises(BenchDataError, match="haystack_sessions"):
        load_longmemeval_file(locomo_shaped)


def test_scores_arithmetic_with_a_scripted_retriever(lme_plain: Path) -> None:
    # m1: one gold session at rank 1, the other at rank 3; the Chinese answer turn first.
    order = ["answer_1:1", "noise_1:1", "answer_2:2", "answer_2:1", "answer_z:1", "answer_k:1"]
    report = run_longmemeval(
        load_longmemeval_file(lme_plain), _Scripted(order), ks=(1, 2), budgets=(1500, 60)
    )
    assert list(report.scores) == [
        "all",
        "single-session-user",
        "multi-session",
        "abstention",
        "abstention temporal-reasoning",
    ]
    multi = report.scores["multi-session"]
    assert multi["session"]["recall_any@1"] == 1.0 and multi["session"]["recall_all@2"] == 0.0
    assert multi["session"]["hit@1"] == 1.0
    assert multi["turn"]["recall@2"] == 0.5  # answer_1:1 in, answer_2:1 at rank 4
    assert report.scores["all"]["session"]["recall_all@2"] == 0.5  # m1 0, u1 1
    assert report.questions["all"] == 2 and report.turn_questions["abstention"] == 0
    assert "turn" not in report.scores["abstention"]
    answers = report.scores["all"]["answer"]
    assert answers["span_questions"] == 2  # violin, 拿铁; the abstention answer is no span
    assert answers["in_context@1500"] == 1.0
    assert "answer" not in report.scores["abstention"]
    # the same arithmetic without budgets: no answer level at all
    plain = run_benchmark(load_longmemeval_file(lme_plain), _Scripted(order), budgets=())
    assert all("answer" not in levels for levels in plain.scores.values())


def test_answer_beyond_the_budget_is_not_in_context(tmp_path: Path) -> None:
    data = [dict(LME[0])]
    data[0]["haystack_sessions"] = [
        _session(("user", "I started learning the violin.", True)),
        _session(("user", "filler " * 1000, False)),
        _session(("user", "cello", True)),
    ]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    order = ["noise_1:1", "answer_1:1"]
    report = run_longmemeval(load_longmemeval_file(path), _Scripted(order), budgets=(100, 3000))
    answers = report.scores["all"]["answer"]
    assert answers["in_context@100"] == 0.0 and answers["in_context@3000"] == 1.0


@pytest.mark.parametrize("which", ["lme_plain", "lme_gz"])
def test_cli_end_to_end(
    which: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    data: Path = request.getfixturevalue(which)
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        cli,
        ["bench", "longmemeval", "--data", str(data), "--json", str(out), "--budget", "200"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "multi-session" in result.output and "Answer in context" in result.output
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["retriever"] == "builtin" and report["budgets"] == [200]
    assert report["questions"] == {
        "all": 2,
        "single-session-user": 1,
        "multi-session": 1,
        "abstention": 1,
        "abstention temporal-reasoning": 1,
    }
    assert len(report["per_question"]) == 3
    session = report["scores"]["all"]["session"]
    assert {"recall_any@5", "recall_all@10", "ndcg@5", "hit@1"} <= set(session)
    assert {"search_ms_p50", "search_ms_p95", "index_seconds"} <= set(report)
    limited = CliRunner().invoke(cli, ["bench", "longmemeval", "--data", str(data), "--limit", "1"])
    assert limited.exit_code == 0 and "abstention" not in limited.output


def test_cli_refuses_missing_and_foreign_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    missing = CliRunner().invoke(cli, ["bench", "longmemeval", "--data", str(tmp_path / "no")])
    assert missing.exit_code != 0 and "--data" in missing.output
    foreign = tmp_path / "x.json"
    foreign.write_text("{}", encoding="utf-8")
    bad = CliRunner().invoke(cli, ["bench", "longmemeval", "--data", str(foreign)])
    assert bad.exit_code != 0 and "JSON list" in bad.output


def test_locomo_bench_prints_the_literature_columns(tmp_path: Path) -> None:
    sample = {
        "sample_id": "c",
        "conversation": {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "My puppy is called Rex."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely name."},
            ],
        },
        "qa": [{"question": "What is the puppy called?", "answer": "Rex", "evidence": ["D1:1"]}],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    out = tmp_path / "out.json"
    result = CliRunner().invoke(
        cli, ["bench", "locomo", str(path), "--json", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "hit@1" in result.output and "Answer in context" in result.output
    scores = json.loads(out.read_text(encoding="utf-8"))["scores"]["all"]
    assert scores["answer"]["span_questions"] == 1
    assert {"hit@1", "recall_any@5", "ndcg@5"} <= set(scores["session"])


class _Dated(_Scripted):
    """Records the ``asked_at`` it was given."""

    def __init__(self, order: Sequence[str]) -> None:
        super().__init__(order)
        self.asked: list[Any] = []

    def search(self, query: str, k: int, *, asked_at: Any = None) -> RetrievalResult:
        self.asked.append(asked_at)
        return super().search(query, k)


def test_question_date_reaches_retrievers_that_take_it(lme_plain: Path) -> None:
    from datetime import datetime

    from hermes_core.bench.retrievers import accepts_asked_at

    order = ["answer_1:1", "answer_z:1"]
    dated = _Dated(order)
    assert accepts_asked_at(dated) and not accepts_asked_at(_Scripted(order))
    report = run_longmemeval(load_longmemeval_file(lme_plain), dated, budgets=())
    # m1 and u1 were asked 2023/05/30 23:40; the abstention question has no date
    assert dated.asked == [datetime(2023, 5, 30, 23, 40), datetime(2023, 5, 30, 23, 40), None]
    # a retriever without the keyword is called without it and scores the same
    plain = run_longmemeval(load_longmemeval_file(lme_plain), _Scripted(order), budgets=())
    assert plain.scores == report.scores
