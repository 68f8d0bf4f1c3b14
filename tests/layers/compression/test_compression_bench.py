"""The needle benchmark on a synthetic LoCoMo-shaped file (the real data is never copied)."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

from click.testing import CliRunner

from hermes_core.bench.compression import load_conversations, plant, run_bench
from hermes_core.cli.bench_compression import command

WORDS = [
    "we",
    "went",
    "hiking",
    "near",
    "the",
    "lake",
    "and",
    "talked",
    "about",
    "books",
    "music",
    "work",
    "family",
    "plans",
]


def _locomo(path: Path, conversations: int = 2, sessions: int = 6, turns: int = 30) -> Path:
    rng = random.Random(3)
    data = []
    for c in range(conversations):
        conv: dict[str, object] = {"speaker_a": "Ann", "speaker_b": "Bo"}
        for s in range(1, sessions + 1):
            conv[f"session_{s}_date_time"] = f"1:{10 + s} pm on {s} May, 2023"
            conv[f"session_{s}"] = [
                {
                    "speaker": "Ann" if t % 2 == 0 else "Bo",
                    "dia_id": f"D{s}:{t}",
                    "text": " ".join(rng.choice(WORDS) for _ in range(25)) + ".",
                }
                for t in range(turns)
            ]
        data.append({"sample_id": f"conv-{c}", "conversation": conv, "qa": []})
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_load_maps_speakers_to_alternating_roles(tmp_path: Path) -> None:
    convs = load_conversations(_locomo(tmp_path / "l.json"))
    assert [sid for sid, _ in convs] == ["conv-0", "conv-1"]
    msgs = convs[0][1]
    assert msgs[0]["role"] == "system" and msgs[-1]["role"] == "user"
    assert all(a["role"] != b["role"] for a, b in itertools.pairwise(msgs[1:]))
    assert msgs[1]["content"].startswith("[1:11 pm on 1 May, 2023]")


def test_plant_keeps_roles_valid_and_plants_en_zh(tmp_path: Path) -> None:
    _, msgs = load_conversations(_locomo(tmp_path / "l.json"))[0]
    planted, facts = plant(msgs, seed=1)
    assert len(facts) == 12
    assert {f.language for f in facts} == {"en", "zh"}
    assert {f.kind for f in facts} == {"number", "path", "error", "decision"}
    text = json.dumps(planted, ensure_ascii=False)
    assert all(json.dumps(f.needle, ensure_ascii=False)[1:-1] in text for f in facts)
    previous = ""
    for m in planted:
        if m["role"] in {"user", "assistant"}:
            assert m["role"] != previous
        previous = m["role"]


def test_bench_compresses_and_its_counts_add_up(tmp_path: Path) -> None:
    """The retention figures live in ``hermes-memory bench compression`` and docs/benchmarks.md;
    here
    every conversation is compacted and the shares are the planted facts' counts."""
    result = run_bench(_locomo(tmp_path / "l.json", conversations=2, sessions=10), seed=5)
    assert len(result.conversations) == 2
    assert all(c.tokens_after < c.tokens_before for c in result.conversations)
    assert result.min_ratio > 1
    for c in result.conversations:
        assert 0 <= c.critical_kept <= c.critical <= c.facts == 12
        assert c.facts_kept <= c.facts and len(c.lost) == c.facts - c.facts_kept
        assert c.in_summary_only <= c.facts_kept
    critical = sum(c.critical for c in result.conversations)
    assert result.critical_share == sum(c.critical_kept for c in result.conversations) / critical
    kept = sum(c.facts_kept for c in result.conversations)
    for table in (result.by_language, result.by_kind):
        assert [sum(v[0] for v in table.values()), sum(v[1] for v in table.values())] == [kept, 24]


def test_cli_table_json_and_errors(tmp_path: Path) -> None:
    data = _locomo(tmp_path / "l.json", conversations=1, sessions=8)
    out = tmp_path / "out.json"
    res = CliRunner().invoke(command, ["--data", str(data), "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "conv-0" in res.output and "critical" in res.output
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["ratio"] > 1 and 0 <= figures["critical_share"] <= 1
    missing = CliRunner().invoke(command, ["--data", str(tmp_path / "nope.json")])
    assert missing.exit_code != 0 and "--data" in missing.output
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    res = CliRunner().invoke(command, ["--data", str(bad)])
    assert res.exit_code != 0 and "LoCoMo" in res.output
