"""``hermes-memory bench turn``: sizes, seeded EN/ZH turns, and a real (tiny) run of the worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.bench.turn import (
    Spec,
    parse_sizes,
    percentile,
    run_variant,
    synthetic_query,
    synthetic_turn,
)
from hermes_core.cli.main import cli


def test_sizes_parse_with_suffixes_and_bad_input_names_the_fix() -> None:
    assert parse_sizes("0,1k, 10k,1k") == [0, 1000, 10000]
    assert parse_sizes("1.5k,2m") == [1500, 2_000_000]
    for bad in ("", "ten", "-1", "1.5"):
        with pytest.raises(ValueError, match=r"0,1k,10k|whole number"):
            parse_sizes(bad)


def test_turns_are_deterministic_unique_and_alternate_english_and_chinese() -> None:
    assert synthetic_turn(7, 3) == synthetic_turn(7, 3)
    assert synthetic_turn(7, 3) != synthetic_turn(8, 3)
    en, zh = synthetic_turn(7, 10)[0], synthetic_turn(7, 11)[0]
    assert "I really like" in en and "note 10" in en
    assert "我喜欢" in zh and "第11条" in zh
    assert len({synthetic_turn(7, i)[0] for i in range(200)}) == 200
    assert "？" in synthetic_query(7, 1) and "?" in synthetic_query(7, 0)


def test_percentile_picks_a_sample_by_rank() -> None:
    data = [float(i) for i in range(100, 0, -1)]
    assert percentile([], 50) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile(data, 0) == 1.0 and percentile(data, 100) == 100.0
    assert percentile(data, 50) in data and 94.0 <= percentile(data, 95) <= 96.0


def test_builtin_variant_fills_through_the_session_api(tmp_path: Path) -> None:
    home = tmp_path / "home"
    events: list[dict[str, object]] = []
    result = run_variant(Spec("builtin", (0, 12), samples=3, session_turns=5), home, events.append)
    assert result.status == "ok" and [p.turns for p in result.points] == [0, 12]
    assert result.points[1].ingest_turns_per_s and result.points[1].rss_mb > 0
    # the 3 turns measured at size 0 count: 9 more fill the store to 12
    assert {"event": "progress", "phase": "fill 12", "done": 9} in events
    import sqlite3

    db = sqlite3.connect(home / "state.db")
    try:  # 12 stored + 3 measured at size 12, two messages each, in sessions of five turns
        assert db.execute("SELECT count(*) FROM messages").fetchone()[0] == 30
        assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 3
    finally:
        db.close()


def test_unknown_provider_is_reported_not_crashed(tmp_path: Path) -> None:
    result = run_variant(Spec("nosuch", (0,), samples=1), tmp_path / "home")
    assert result.status == "unavailable" and "nosuch" in result.reason


def test_cli_runs_each_variant_in_its_own_process_and_writes_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "mine"))
    out = tmp_path / "turn.json"
    args = ["bench", "turn", "--turns", "0,4", "--samples", "2", "--provider", "builtin"]
    result = CliRunner().invoke(cli, [*args, "--json", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    [variant] = data["variants"]
    assert variant["status"] == "ok" and [p["turns"] for p in variant["points"]] == [0, 4]
    assert "before p50" in result.output and "builtin" in result.output
    assert not (tmp_path / "mine").exists()  # the user's home is never touched
