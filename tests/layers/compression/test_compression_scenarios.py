"""The compression scenarios and the retention benchmark (fallback and LLM plumbing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.bench.compression_retention import cut_scenario, run_cell, run_retention, score
from hermes_core.bench.compression_scenarios import load_scenarios
from hermes_core.bench.scenario_kit import ScenarioBuilder
from hermes_core.cli.bench_compression import command
from hermes_core.layers.compression.salience import is_filler
from hermes_core.testing.fake_llm import FakeLLMServer


@pytest.fixture(scope="module")
def scenarios():  # type: ignore[no-untyped-def]
    return load_scenarios()


def test_scenarios_are_varied(scenarios) -> None:  # type: ignore[no-untyped-def]
    assert len(scenarios) >= 12
    assert {s.language for s in scenarios} == {"en", "zh"}
    assert {s.domain for s in scenarios} == {"coding", "ops", "research", "chat"}
    wheres = {f.where for s in scenarios for f in s.facts}
    assert wheres == {"user", "assistant", "tool"}
    assert sum(len(s.distractors) for s in scenarios) >= 10
    assert len({s.id for s in scenarios}) == len(scenarios)
    for s in scenarios:
        assert len(s.facts) >= 6, s.id
        assert any(f.id == "goal" for f in s.facts), s.id
        cut = cut_scenario(s)  # head = first exchange, tail = last exchange
        assert len(cut.middle) == len(s.messages) - 5


def test_the_issues_migration_shape_is_there_in_both_languages(scenarios) -> None:  # type: ignore[no-untyped-def]
    by_id = {s.id: s for s in scenarios}
    for sid in ("ops-db-migration-en", "ops-db-migration-zh"):
        facts = {f.id for f in by_id[sid].facts}
        assert {"port", "dump", "error", "retention"} <= facts
        acks = [m for m in by_id[sid].messages if m["role"] == "user" and is_filler(m["content"])]
        assert len(acks) >= 3


def test_a_fact_must_be_in_the_compacted_span_only() -> None:
    b = ScenarioBuilder("t", "en", "chat", "t", "sys")
    b.user("hi").assistant("hello")
    b.user("the code is 4711").fact("code", "4711", form="x")
    b.user("remind me: 4711")
    b.assistant("ok")
    with pytest.raises(ValueError, match="head or tail"):
        b.build("4711")
    with pytest.raises(ValueError, match="not in the text"):
        b.fact("missing", "nowhere", form="x")


def test_fallback_shares_add_up_and_every_sheet_fits_its_budget(scenarios) -> None:  # type: ignore[no-untyped-def]
    """The retention figures (docs/benchmarks.md, ``hermes-memory bench compression``) are measured,
    never asserted as a floor: here the shares are the cells' counts, summed."""
    result = run_retention(scenarios, ratios=(3, 10), paths=("fallback",))
    assert len(result.cells) == 2 * len(scenarios)
    for ratio in (3, 10):
        cells = [c for c in result.cells if c.ratio == ratio]
        assert {c.scenario for c in cells} == {s.id for s in scenarios}
        total, kept = sum(c.facts for c in cells), sum(c.kept for c in cells)
        assert result.share("fallback", ratio) == kept / total
        by_language = {lang: [c for c in cells if c.language == lang] for lang in ("en", "zh")}
        parts = sum(
            result.share("fallback", ratio, language=lang) * sum(c.facts for c in rows)
            for lang, rows in by_language.items()
        )
        assert abs(parts - kept) < 1e-9
    for cell in result.cells:
        assert cell.error is None, cell.scenario
        assert 0 <= cell.kept <= cell.facts and len(cell.lost) == cell.facts - cell.kept
        assert cell.sheet_tokens <= cell.budget_tokens, cell.scenario
        assert sum(t for _, t in cell.kept_by_where.values()) == cell.facts


def test_scoring_counts_only_sheets_that_contain_every_needle(scenarios) -> None:  # type: ignore[no-untyped-def]
    scenario = scenarios[0]
    assert score(scenario, "")[0] == 0
    kept, lost, _, _ = score(scenario, scenario.llm_summary)
    assert kept == len(scenario.facts) and lost == []


def test_llm_path_runs_the_real_client_against_the_fake_server(scenarios) -> None:  # type: ignore[no-untyped-def]
    scenario = next(s for s in scenarios if s.id == "coding-payment-zh")
    with FakeLLMServer() as llm:
        cell = run_cell(scenario, 10, "llm", llm)
        [request] = llm.chat_requests
    assert cell.kept == cell.facts and cell.error is None
    prompt = request["messages"][1]["content"]
    assert "TURNS TO SUMMARIZE" in prompt and "/api/v1/pay/notify" in prompt
    assert "Chinese" in request["messages"][0]["content"]


def test_llm_path_loses_what_the_oversize_cap_cuts(scenarios) -> None:  # type: ignore[no-untyped-def]
    """The plumbing is measured, not assumed: a summary far over 2x the budget is cut."""
    from dataclasses import replace

    scenario = next(s for s in scenarios if s.id == "ops-db-migration-en")
    padded = replace(
        scenario,
        llm_summary="## Critical Context\n" + "- filler line\n" * 4000 + scenario.llm_summary,
    )
    with FakeLLMServer() as llm:
        cell = run_cell(padded, 10, "llm", llm)
    assert cell.kept < cell.facts


def test_cli_scenarios_table_and_json(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    res = CliRunner().invoke(
        command,
        ["--scenario", "ops-db-migration-zh", "--ratio", "3", "--ratio", "10", "--json", str(out)],
    )
    assert res.exit_code == 0, res.output
    assert "ops-db-migration-zh" in res.output and "fallback — all scenarios" in res.output
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert set(figures["summary"]) == {"fallback@3x", "fallback@10x", "llm@3x", "llm@10x"}
    assert all(0 <= v["retention"] <= 1 for v in figures["summary"].values())
    bad = CliRunner().invoke(command, ["--scenario", "nope"])
    assert bad.exit_code != 0 and "ops-db-migration-en" in bad.output


def test_scenarios_are_package_data_and_checked_on_load() -> None:
    from dataclasses import replace
    from importlib import resources

    from hermes_core.bench.compression_scenarios import DATA_FILE, HELD_OUT
    from hermes_core.bench.scenario_kit import check_scenario

    assert resources.files("hermes_core.bench").joinpath("data", DATA_FILE).is_file()
    scenarios = load_scenarios()
    assert {s.id for s in scenarios} > HELD_OUT
    first = scenarios[0]
    assert check_scenario(first) is first
    with pytest.raises(ValueError, match="lacks facts"):
        check_scenario(replace(first, llm_summary="nothing here"))
    with pytest.raises(ValueError, match="unknown scenario"):
        load_scenarios(["不存在"])
    first.messages[1]["content"] = "changed"  # a caller's change never leaks into the next load
    assert load_scenarios([first.id])[0].messages[1]["content"] != "changed"
