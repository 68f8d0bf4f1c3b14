"""``hermes-memory bench memory`` runs end to end (figures are never asserted on for speed)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hermes_core.bench.memory import fact, run_bench
from hermes_core.cli.bench_memory import command


def test_run_bench_measures_every_operation(tmp_path: Path) -> None:
    ticks: list[str] = []
    result = run_bench(ops=10, prefill=3, home=tmp_path, progress=ticks.append)
    summary = {op["op"]: op for op in result.to_dict()["ops"]}
    assert summary["add"]["n"] == summary["replace"]["n"] == summary["remove"]["n"] == 10
    assert summary["batch(5)"]["n"] == 2
    for op in summary.values():
        assert 0 < op["p50_ms"] <= op["p99_ms"] <= op["max_ms"]
    assert len(ticks) == 10 * 5 + 2
    assert (tmp_path / "archive" / "state.db").exists()  # the overflow run archived entries


def test_facts_are_unique_and_bilingual() -> None:
    facts = [fact(i) for i in range(50)]
    assert len(set(facts)) == 50
    assert any("用户" in f for f in facts) and any(f.startswith("User") for f in facts)


def test_cli_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(command, ["--ops", "5", "--prefill", "0", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "p99 ms" in result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [op["op"] for op in data["ops"]][:3] == ["add", "replace", "remove"]


def test_run_bench_on_postgresql_leaves_no_rows(tmp_path: Path, postgres_url: str) -> None:
    import psycopg

    result = run_bench(ops=5, prefill=2, home=tmp_path, postgres_url=postgres_url)
    data = result.to_dict()
    assert data["settings"]["store"] == "postgresql"
    assert {op["op"]: op["n"] for op in data["ops"]}["add"] == 5
    assert not list(tmp_path.rglob("*.md"))  # the writes went to the server
    with psycopg.connect(postgres_url) as conn:
        tables = ("hermes_memory_files", "hermes_memory_pending")
        counts = [conn.execute(f"SELECT count(*) FROM {t}").fetchone() for t in tables]
    assert counts == [(0,), (0,)]  # the throw-away users were deleted
