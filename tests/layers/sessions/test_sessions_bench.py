"""Retrieval benchmark harness: loaders, metrics, categories, retriever protocol, CLI."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from hermes_core.bench.locomo import (
    BenchDataError,
    load_any,
    load_locomo,
    load_longmemeval,
    ndcg,
    recall_all,
    recall_any,
    run_benchmark,
)
from hermes_core.bench.retrievers import (
    BenchSession,
    BuiltinRetriever,
    RetrievalResult,
    RetrievedTurn,
    Retriever,
    session_ranking,
)
from hermes_core.bench.sessions import NEEDLES, needle_rank
from hermes_core.cli.bench_locomo import command as locomo_command
from hermes_core.cli.bench_sessions import command as sessions_command


def _turn(dia: str, speaker: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "dia_id": dia, "text": text, **extra}


LOCOMO_FIXTURE = [
    {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                _turn("D1:1", "Ann", "I adopted a puppy named Rex yesterday!"),
                _turn("D1:2", "Bo", "Congrats! What breed is Rex?"),
                _turn("D1:3", "Ann", "A beagle. He loves the park."),
            ],
            "session_2_date_time": "10:00 am on 20 June, 2023",
            "session_2": [
                _turn("D2:1", "Bo", "I started pottery classes last week."),
                _turn(
                    "D2:2",
                    "Ann",
                    "Nice! Look at this.",
                    blip_caption="a photo of a clay vase",
                    img_url="http://x",
                ),
            ],
            "session_3_date_time": "9:00 am on 1 July, 2023",  # date key without a session
        },
        "qa": [
            {
                "question": "What is the name of Ann's puppy?",
                "answer": "Rex",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "When did Bo start pottery classes?",
                "answer": "June 2023",
                "evidence": ["D2:1"],
                "category": 2,
            },
            {
                "question": "What pets and hobbies do they have?",
                "answer": "beagle, pottery",
                "evidence": ["D1:3", "D2:1"],
                "category": 1,
            },
            {
                "question": "What did Ann show Bo?",
                "answer": "a vase",
                "evidence": ["D2:2", "D8:6; D9:17", "D"],
                "category": 3,
            },
            {
                "question": "What is Bo's cat called?",
                "adversarial_answer": "Tom",
                "evidence": ["D1:2"],
                "category": 5,
            },
            {
                "question": "Broken evidence only",
                "answer": "x",
                "evidence": ["D9:99"],
                "category": 4,
            },
        ],
    }
]

LME_FIXTURE = [
    {
        "question_id": "q1",
        "question_type": "single-session-user",
        "question": "What degree did I graduate with?",
        "answer": "Business Administration",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["s_a", "s_b", "s_c"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 10:00", "2023/05/22"],
        "haystack_sessions": [
            [
                {
                    "role": "user",
                    "content": "I graduated with a degree in Business Administration.",
                },
                {
                    "role": "assistant",
                    "content": "Congratulations on your degree!",
                    "has_answer": False,
                },
            ],
            [{"role": "user", "content": "Recommend a pasta recipe."}],
            [{"role": "user", "content": "我喜欢喝咖啡"}, {"role": "assistant", "content": "好的"}],
        ],
        "answer_session_ids": ["s_a"],
    },
    {
        "question_id": "q2_abs",
        "question_type": "single-session-user",
        "question": "What is my cat's name?",
        "answer": "unknown",
        "haystack_session_ids": ["s_a"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21"],
        "haystack_sessions": [[{"role": "user", "content": "no cats here"}]],
        "answer_session_ids": [],
    },
]
LME_FIXTURE[0]["haystack_sessions"][0][0]["has_answer"] = True  # type: ignore[index]


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO_FIXTURE), encoding="utf-8")
    return path


@pytest.fixture
def lme_file(tmp_path: Path) -> Path:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(LME_FIXTURE, ensure_ascii=False), encoding="utf-8")
    return path


def test_metrics() -> None:
    ranked = ["a", "b", "c", "d"]
    assert recall_all(ranked, ["a", "c"], 3) == 1.0
    assert recall_all(ranked, ["a", "d"], 3) == 0.0
    assert recall_any(ranked, ["x", "d"], 4) == 1.0
    assert recall_any(ranked, ["x"], 4) == 0.0
    assert ndcg(ranked, ["a"], 5) == 1.0
    assert ndcg(ranked, ["b"], 5) == pytest.approx(1 / 1.5849625, rel=1e-6)
    assert ndcg(ranked, [], 5) == 0.0


def test_locomo_loader(locomo_file: Path) -> None:
    [conv] = load_locomo(locomo_file)
    assert [s.session_id for s in conv.sessions] == ["D1", "D2"]  # session_3 has no turns
    assert "clay vase" in conv.sessions[1].turns[1].text
    assert conv.sessions[0].started_at < conv.sessions[1].started_at
    assert sorted(conv.skipped_evidence) == ["conv-x:D", "conv-x:D8:6; D9:17", "conv-x:D9:99"]
    assert conv.unscored_questions == 1
    q = {x.question: x for x in conv.questions}
    assert q["What pets and hobbies do they have?"].gold_sessions == ("D1", "D2")
    assert q["What did Ann show Bo?"].gold_turns == ("D2:2",)


def test_locomo_loader_rejects_bad_shape(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"not": "a list"}', encoding="utf-8")
    with pytest.raises(BenchDataError, match="JSON list"):
        load_locomo(path)


def test_longmemeval_loader(lme_file: Path) -> None:
    convs = load_longmemeval(lme_file)
    assert len(convs) == 1  # the _abs question is skipped
    [conv] = convs
    assert [s.session_id for s in conv.sessions] == ["s_a", "s_b", "s_c"]
    [q] = conv.questions
    assert q.gold_sessions == ("s_a",) and q.gold_turns == ("s_a:1",)
    assert load_any(lme_file)[0].conversation_id.startswith("q1")


def test_builtin_retriever_end_to_end(locomo_file: Path, lme_file: Path) -> None:
    retriever = BuiltinRetriever()
    try:
        report = run_benchmark(load_locomo(locomo_file), retriever, ks=(1, 5))
        assert report.questions["1-4"] == 4 and report.questions["5 adversarial"] == 1
        assert report.questions["4 single-hop"] == 1
        assert report.scores["4 single-hop"]["turn"]["recall_all@5"] == 1.0
        assert report.scores["4 single-hop"]["session"]["recall_all@1"] == 1.0
        assert report.scores["2 temporal"]["session"]["recall_any@5"] == 1.0
        assert report.skipped_evidence == 3 and report.unscored_questions == 1
        lme = run_benchmark(load_longmemeval(lme_file), retriever, ks=(1,))
        assert lme.scores["all"]["session"]["recall_all@1"] == 1.0
    finally:
        retriever.close()


class _Reversed:
    """A deliberately bad retriever: returns turns in reverse order of appearance."""

    name = "reversed"

    def __init__(self) -> None:
        self.turns: list[RetrievedTurn] = []

    def reset(self) -> None:
        self.turns = []

    def index(self, conversation_id: str, sessions: Sequence[BenchSession]) -> None:
        self.turns = [RetrievedTurn(s.session_id, t.turn_id) for s in sessions for t in s.turns][
            ::-1
        ]

    def search(self, query: str, k: int) -> RetrievalResult:
        return RetrievalResult(tuple(self.turns[:k]))

    def close(self) -> None:
        pass


def test_protocol_and_session_derivation(locomo_file: Path) -> None:
    bad = _Reversed()
    assert isinstance(bad, Retriever)
    report = run_benchmark(load_locomo(locomo_file), bad, ks=(1,))
    # the reversed retriever always answers D2:2 first
    assert report.scores["4 single-hop"]["turn"]["recall_any@1"] == 0.0
    assert report.scores["3 open-domain"]["turn"]["recall_any@1"] == 1.0
    result = RetrievalResult(
        (RetrievedTurn("D2", "D2:2"), RetrievedTurn("D2", "D2:1"), RetrievedTurn("D1", "D1:3"))
    )
    assert session_ranking(result, 5) == ["D2", "D1"]


def test_cli_locomo_and_json(locomo_file: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "out.json"
    root = click.Group()
    root.add_command(locomo_command)
    result = CliRunner().invoke(
        root,
        ["locomo", str(locomo_file), "--k", "1,5", "--json", str(out_file)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "Session-level" in result.output and "skipped evidence ids: 3" in result.output
    data = json.loads(out_file.read_text(encoding="utf-8"))
    assert data["ks"] == [1, 5] and data["retriever"] == "builtin"
    assert len(data["per_question"]) == 5
    bad = CliRunner().invoke(root, ["locomo", str(locomo_file), "--k", "x"])
    assert bad.exit_code != 0
    nop = CliRunner().invoke(root, ["locomo", str(locomo_file), "--retriever", "provider"])
    assert nop.exit_code != 0 and "provider" in nop.output


def test_cli_sessions_perf_small(tmp_path: Path) -> None:
    out_file = tmp_path / "perf.json"
    root = click.Group()
    root.add_command(sessions_command)
    result = CliRunner().invoke(
        root,
        ["sessions", "--sizes", "1600", "--repeat", "2", "--json", str(out_file)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    [data] = json.loads(out_file.read_text(encoding="utf-8"))
    assert data["messages"] == 1600 and data["db_mb"] > 0
    assert set(data["selective"]) and set(data["broad"])
    assert data["broad"]["coffee"]["hit_rate"] > 0.1
    # the needle scenario: planted in session 37, searched from a later session
    assert set(data["needle"]) == {query for _, query, _ in NEEDLES}
    assert all(v["rank"] is not None and v["discover"]["n"] == 2 for v in data["needle"].values())
    assert "needle in session 37" in result.output


def test_needle_rank_reads_a_discover_result() -> None:
    result = {"results": [{"session_id": "a"}, {"session_id": "s000037"}]}
    assert needle_rank(result, "s000037") == 2
    assert needle_rank(result, "b") is None
    assert needle_rank({"success": False}, "a") is None


@pytest.mark.slow
def test_cli_sessions_perf_both_backends_and_concurrent_writers(
    tmp_path: Path, postgres_url: str
) -> None:
    out_file = tmp_path / "perf.json"
    root = click.Group()
    root.add_command(sessions_command)
    result = CliRunner().invoke(
        root,
        [
            "sessions",
            "--sizes",
            "400",
            "--repeat",
            "2",
            "--backend",
            "sqlite,postgresql",
            "--url",
            postgres_url,
            "--writers",
            "3",
            "--turns",
            "20",
            "--json",
            str(out_file),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out_file.read_text(encoding="utf-8"))
    assert [r["backend"] for r in data["sizes"]] == ["sqlite", "postgresql"]
    sqlite_run, pg_run = data["sizes"]
    for q in sqlite_run["broad"]:  # the same archive, the same matches on both
        assert sqlite_run["broad"][q]["hit_rate"] == pg_run["broad"][q]["hit_rate"]
    for run in data["concurrent"]:
        assert (run["messages_stored"], run["lost"], run["failed_writers"]) == (120, 0, 0)
    bad = CliRunner().invoke(root, ["sessions", "--sizes", "400", "--backend", "oracle"])
    assert bad.exit_code != 0 and "sqlite,postgresql" in bad.output


PROVIDER_SOURCE = '''
from pathlib import Path
from hermes_core.bench.retrievers import RetrievalResult, RetrievedTurn
from hermes_core.providers.base import MemoryProvider


class LastTurnRetriever:
    """Always answers with the last indexed turn; records what it was given."""

    name = "fakeprov-last"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.turns = []
        (workdir / "used").write_text("yes")

    def reset(self) -> None:
        self.turns = []

    def index(self, conversation_id, sessions) -> None:
        self.turns = [RetrievedTurn(s.session_id, t.turn_id) for s in sessions for t in s.turns]

    def search(self, query, k):
        return RetrievalResult(tuple(reversed(self.turns[-k:])))

    def close(self) -> None:
        pass


class FakeProvider(MemoryProvider):
    name = "fakeprov"

    def bench_retriever(self, workdir: Path) -> LastTurnRetriever:
        return LastTurnRetriever(workdir)


class NoBench(MemoryProvider):
    name = "nobench"
'''


def test_cli_locomo_provider_mode(
    locomo_file: Path,
    tmp_path: Path,
    home: Path,
    fake_distribution: Any,
) -> None:
    fake_distribution(
        "hermes-memory-fakeprov",
        providers={
            "fakeprov": "fakeprov_mod:FakeProvider",
            "nobench": "fakeprov_mod:NoBench",
        },
        modules={"fakeprov_mod": PROVIDER_SOURCE},
    )
    root = click.Group()
    root.add_command(locomo_command)
    out_file = tmp_path / "prov.json"
    result = CliRunner().invoke(
        root,
        [
            "locomo",
            str(locomo_file),
            "--retriever",
            "provider",
            "--provider",
            "fakeprov",
            "--k",
            "1",
            "--json",
            str(out_file),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out_file.read_text(encoding="utf-8"))
    assert data["retriever"] == "fakeprov-last"
    # the last turn of the fixture is D2:2, the gold turn of the open-domain question only
    assert data["scores"]["3 open-domain"]["turn"]["recall_all@1"] == 1.0
    assert data["scores"]["4 single-hop"]["turn"]["recall_any@1"] == 0.0
    missing = CliRunner().invoke(
        root, ["locomo", str(locomo_file), "--retriever", "provider", "--provider", "nobench"]
    )
    assert missing.exit_code != 0 and "bench_retriever" in missing.output
    # the active provider from config is used when --provider is absent
    (home / "config.yaml").write_text("memory:\n  provider: fakeprov\n", encoding="utf-8")
    active = CliRunner().invoke(root, ["locomo", str(locomo_file), "--retriever", "provider"])
    assert active.exit_code == 0, active.output


def test_cli_locomo_side_by_side(
    locomo_file: Path, tmp_path: Path, home: Path, fake_distribution: Any
) -> None:
    """Several retrievers in one run: one report each plus a comparison table with latency."""
    fake_distribution(
        "hermes-memory-fakeprov",
        providers={"fakeprov": "fakeprov_mod:FakeProvider"},
        modules={"fakeprov_mod": PROVIDER_SOURCE},
    )
    root = click.Group()
    root.add_command(locomo_command)
    out_file = tmp_path / "both.json"
    result = CliRunner(env={"COLUMNS": "250"}).invoke(
        root,
        [
            "locomo",
            str(locomo_file),
            "--retriever",
            "builtin",
            "--retriever",
            "provider:fakeprov",
            "--k",
            "1,5",
            "--json",
            str(out_file),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "Side by side" in result.output and "search p50 ms" in result.output
    builtin, provider = json.loads(out_file.read_text(encoding="utf-8"))
    assert builtin["retriever"] == "builtin" and provider["retriever"] == "fakeprov-last"
    assert builtin["search_ms_p50"] > 0 and builtin["index_seconds"] > 0
    assert builtin["search_ms_p95"] >= builtin["search_ms_p50"]
    assert builtin["scores"] != provider["scores"]
    bad = CliRunner().invoke(root, ["locomo", str(locomo_file), "--retriever", "vector"])
    assert bad.exit_code != 0 and "provider:NAME" in bad.output


def test_cli_locomo_refuses_a_file_without_questions(tmp_path: Path) -> None:
    root = click.Group()
    root.add_command(locomo_command)
    empty = tmp_path / "空.json"
    empty.write_text("[]", encoding="utf-8")
    result = CliRunner().invoke(root, ["locomo", str(empty)])
    assert result.exit_code == 1 and "no questions" in result.output
    assert "Session-level" not in result.output  # no empty table pretending to be figures
