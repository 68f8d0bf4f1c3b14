"""The compression benchmark's scenarios, loaded from the packaged data file
``hermes_core/bench/data/compression_scenarios.json``.

Long coding, ops, research and chat sessions in English and Chinese, written for this
repository. Facts are written the way people write them, not the way an extractor looks for
them: in prose, in words ("seven years", "二十万"), as names, places, preferences, reasons and
negations, inside tool output, restated or refined later. Around them sits what real sessions
are full of: polling loops of near-identical tool calls, logs full of numbers, directory
listings full of paths, "ok" / "continue" / "继续", small talk, and distractors that look like
facts (a wrong port tried first, a backup that must not be used, prices of hotels not booked).
Each scenario also carries the summary a good model would write, which the LLM path of the
benchmark gets back from the scripted fake server.

The data file holds, per scenario, ``id``, ``language``, ``domain``, ``title``, the
OpenAI-style ``messages``, the ``facts`` (``id``, ``needles``, ``where``, ``form``), the
``distractors`` (``needle``, ``why``) and ``llm_summary``; ``held_out`` lists the scenarios
written after the fallback was tuned. Every scenario is checked on load
(:func:`~hermes_core.bench.scenario_kit.check_scenario`); new ones can be written with
:class:`~hermes_core.bench.scenario_kit.ScenarioBuilder` and added to the file.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any, cast

from hermes_core.bench.scenario_kit import (
    Distractor,
    Domain,
    Fact,
    Language,
    Scenario,
    Where,
    check_scenario,
)

DATA_FILE = "compression_scenarios.json"
"""In ``hermes_core/bench/data/`` (shipped in the wheel)."""
MAX_DATA_BYTES = 8 * 1024 * 1024


@functools.cache
def _raw() -> bytes:
    entry = resources.files("hermes_core.bench").joinpath("data", DATA_FILE)
    if not entry.is_file():
        raise FileNotFoundError(f"{DATA_FILE} is missing from hermes_core/bench/data: reinstall")
    raw = entry.read_bytes()
    if len(raw) > MAX_DATA_BYTES:
        raise ValueError(f"{DATA_FILE} is larger than {MAX_DATA_BYTES} bytes: reinstall")
    return raw


def _data() -> dict[str, Any]:
    """A fresh parse each time: callers may change the messages they get."""
    return cast(dict[str, Any], json.loads(_raw().decode("utf-8")))


def _scenario(item: dict[str, Any]) -> Scenario:
    return check_scenario(
        Scenario(
            str(item["id"]),
            cast(Language, item["language"]),
            cast(Domain, item["domain"]),
            str(item["title"]),
            tuple(dict(m) for m in item["messages"]),
            tuple(
                Fact(f["id"], tuple(f["needles"]), cast(Where, f["where"]), f["form"])
                for f in item["facts"]
            ),
            tuple(Distractor(d["needle"], d["why"]) for d in item["distractors"]),
            str(item["llm_summary"]),
        )
    )


HELD_OUT: frozenset[str] = frozenset(_data()["held_out"])
"""Scenarios written after the fallback's salience rules were tuned on the others: their
figures are reported separately, as the honest estimate for transcripts never seen."""


def load_scenarios(ids: list[str] | None = None) -> list[Scenario]:
    """Every scenario (or those whose id is in ``ids``; an unknown id raises ``ValueError``
    listing the known ones)."""
    built = [_scenario(item) for item in _data()["scenarios"]]
    if not ids:
        return built
    known = {s.id: s for s in built}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise ValueError(f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return [known[i] for i in ids]


__all__ = ["DATA_FILE", "HELD_OUT", "load_scenarios"]
