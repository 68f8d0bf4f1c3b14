"""Fact retention of the handoff sheet at fixed compression ratios, on the scenarios of
:mod:`hermes_core.bench.compression_scenarios`.

For each scenario the transcript is cut the way the compressor cuts it
(:func:`~hermes_core.layers.compression.compressor.cut_transcript`: the system prompt and
first exchange stay, the last exchange stays, everything between is compacted). The sheet's
budget is then set to ``middle tokens / ratio`` for each ratio (3×, 5×, 10×) and the sheet is
written by

* **fallback** — the deterministic extractive sheet (no model), exactly as in production
  (including its 8,000-character cap, so the *achieved* ratio can be higher than asked);
* **llm** — the model path through the real HTTP client against the loopback fake server
  (:class:`~hermes_core.llm.scripted_server.FakeLLMServer`) answering with the scenario's
  scripted summary. This measures the plumbing (prompt, cleaning, redaction, the oversize
  cap at 2× the budget, framing), not a model's judgement.

A fact is kept when every one of its needles is in the sheet (whitespace-insensitive,
case-insensitive). Distractors kept are reported too: a sheet full of noise is not a win.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from hermes_core.bench.compression_scenarios import HELD_OUT
from hermes_core.bench.scenario_kit import HEAD_MESSAGES, Scenario, normalise
from hermes_core.layers.compression import (
    CompressionState,
    Cut,
    cut_transcript,
    fallback_sheet,
    model_summary,
)
from hermes_core.llm.client import LLMClient
from hermes_core.llm.scripted_server import FakeLLMServer
from hermes_core.llm.tokens import estimate_messages_tokens, estimate_tokens
from hermes_core.settings.models import CompressionSettings
from hermes_core.types import CompressionBudget

Path_ = Literal["fallback", "llm"]
RATIOS: tuple[int, ...] = (3, 5, 10)
PATHS: tuple[Path_, ...] = ("fallback", "llm")
SETTINGS = CompressionSettings(protect_first_n=HEAD_MESSAGES, protect_last_n=2)


@dataclass(slots=True)
class Cell:
    """One scenario compacted at one ratio by one path."""

    scenario: str
    language: str
    domain: str
    path: str
    ratio: int
    middle_tokens: int
    budget_tokens: int
    sheet_tokens: int
    facts: int
    kept: int
    distractors: int
    distractors_kept: int
    lost: list[str] = field(default_factory=list)
    kept_by_where: dict[str, list[int]] = field(default_factory=dict)
    error: str | None = None

    @property
    def achieved_ratio(self) -> float:
        return self.middle_tokens / self.sheet_tokens if self.sheet_tokens else 0.0


@dataclass(slots=True)
class RetentionResult:
    """Every cell, with totals per (path, ratio)."""

    cells: list[Cell]

    def share(
        self,
        path: str,
        ratio: int,
        *,
        language: str | None = None,
        scenarios: frozenset[str] | None = None,
    ) -> float:
        """Facts kept / facts, over the cells of ``path`` at ``ratio`` (optionally one
        language, or only the scenario ids in ``scenarios``)."""
        rows = [
            c
            for c in self.cells
            if c.path == path
            and c.ratio == ratio
            and language in (None, c.language)
            and (scenarios is None or c.scenario in scenarios)
        ]
        total = sum(c.facts for c in rows)
        return sum(c.kept for c in rows) / total if total else 0.0

    def distractor_share(self, path: str, ratio: int) -> float:
        rows = [c for c in self.cells if c.path == path and c.ratio == ratio]
        total = sum(c.distractors for c in rows)
        return sum(c.distractors_kept for c in rows) / total if total else 0.0

    def by_where(self, path: str, ratio: int) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for c in self.cells:
            if c.path == path and c.ratio == ratio:
                for where, (kept, total) in c.kept_by_where.items():
                    row = out.setdefault(where, [0, 0])
                    row[0] += kept
                    row[1] += total
        return out

    def summary(self) -> dict[str, dict[str, Any]]:
        return {
            f"{path}@{ratio}x": {
                "retention": self.share(path, ratio),
                "retention_en": self.share(path, ratio, language="en"),
                "retention_zh": self.share(path, ratio, language="zh"),
                "retention_held_out": self.share(path, ratio, scenarios=HELD_OUT),
                "distractors_kept": self.distractor_share(path, ratio),
                "by_where": self.by_where(path, ratio),
                "mean_achieved_ratio": _mean(
                    [c.achieved_ratio for c in self.cells if c.path == path and c.ratio == ratio]
                ),
            }
            for path in PATHS
            for ratio in RATIOS
            if any(c.path == path and c.ratio == ratio for c in self.cells)
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary(),
            "cells": [{**asdict(c), "achieved_ratio": c.achieved_ratio} for c in self.cells],
        }


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def cut_scenario(scenario: Scenario) -> Cut:
    """The compressor's cut of ``scenario`` (head = first exchange, tail = last exchange).

    Raises ``ValueError`` when the compressor would cut elsewhere (the facts would then not
    all be in the compacted span)."""
    messages = list(scenario.messages)
    tokens = estimate_messages_tokens(messages)
    budget = CompressionBudget(
        context_length=tokens * 2, threshold_tokens=10, prompt_tokens=tokens, manual=True
    )
    cut = cut_transcript(messages, settings=SETTINGS, budget=budget, state=CompressionState())
    if cut is None or len(cut.head) != HEAD_MESSAGES or len(cut.tail) != 2:
        raise ValueError(f"{scenario.id}: the compressor does not cut at the first/last exchange")
    return cut


def score(scenario: Scenario, sheet: str) -> tuple[int, list[str], int, dict[str, list[int]]]:
    """``(facts kept, ids lost, distractors kept, {where: [kept, total]})`` of ``sheet``."""
    text = normalise(sheet)
    lost: list[str] = []
    where: dict[str, list[int]] = {}
    for fact in scenario.facts:
        ok = all(normalise(n) in text for n in fact.needles)
        row = where.setdefault(fact.where, [0, 0])
        row[0] += int(ok)
        row[1] += 1
        if not ok:
            lost.append(fact.id)
    distractors = sum(1 for d in scenario.distractors if normalise(d.needle) in text)
    return len(scenario.facts) - len(lost), lost, distractors, where


def run_cell(scenario: Scenario, ratio: int, path: Path_, llm: FakeLLMServer | None = None) -> Cell:
    """Compact ``scenario`` at ``ratio`` with ``path`` and score the sheet."""
    cut = cut_scenario(scenario)
    middle_tokens = estimate_messages_tokens(cut.middle)
    cut = replace(cut, sheet_budget=max(1, middle_tokens // ratio))
    tokens = estimate_messages_tokens(scenario.messages)
    budget = CompressionBudget(
        context_length=tokens * 2, threshold_tokens=10, prompt_tokens=tokens, manual=True
    )
    error: str | None = None
    if path == "fallback":
        body: str | None = fallback_sheet(cut, budget=budget, notes="")
    else:
        if llm is None:
            raise ValueError("the llm path needs a running FakeLLMServer")
        llm.script_chat(content=scenario.llm_summary)
        outcome = model_summary(
            cut,
            settings=SETTINGS,
            budget=budget,
            state=CompressionState(),
            client_factory=lambda: LLMClient(llm.base_url, None, llm.model, max_retries=0),
            fallback_client_factory=None,
            notes="",
            now=time.monotonic,
        )
        body, error = outcome.body, outcome.error or outcome.abort
    kept, lost, distractors_kept, where = score(scenario, body or "")
    return Cell(
        scenario=scenario.id,
        language=scenario.language,
        domain=scenario.domain,
        path=path,
        ratio=ratio,
        middle_tokens=middle_tokens,
        budget_tokens=cut.sheet_budget,
        sheet_tokens=estimate_tokens(body or ""),
        facts=len(scenario.facts),
        kept=kept,
        distractors=len(scenario.distractors),
        distractors_kept=distractors_kept,
        lost=lost,
        kept_by_where=where,
        error=error,
    )


def run_retention(
    scenarios: Sequence[Scenario],
    *,
    ratios: Sequence[int] = RATIOS,
    paths: Sequence[Path_] = PATHS,
    progress: Callable[[], None] | None = None,
) -> RetentionResult:
    """Every scenario × ratio × path. The llm path starts one loopback fake server."""
    cells: list[Cell] = []
    server = FakeLLMServer() if "llm" in paths else None
    if server is not None:
        server.start()
    try:
        for scenario in scenarios:
            for path in paths:
                for ratio in ratios:
                    cells.append(run_cell(scenario, ratio, path, server))
                    if progress is not None:
                        progress()
    finally:
        if server is not None:
            server.stop()
    return RetentionResult(cells)


__all__ = [
    "PATHS",
    "RATIOS",
    "Cell",
    "RetentionResult",
    "cut_scenario",
    "run_cell",
    "run_retention",
    "score",
]
