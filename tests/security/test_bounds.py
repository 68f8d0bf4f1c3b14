"""Bounded work before refusal: counts, durations and lists are checked for size and type
before any work (library, memory tool — the same one MCP and the bridges call — and CLI)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core import MemoryHost
from hermes_core.cli.main import cli
from hermes_core.errors import HermesError
from hermes_core.layers.memory.tool import MAX_BATCH_CHARS, MAX_BATCH_OPERATIONS


def _memory(home: Path, args: dict[str, Any]) -> dict[str, Any]:
    with MemoryHost.open(home, load_entrypoints=False) as host:
        return dict(json.loads(host.session().call_tool("memory", args)))


@pytest.mark.parametrize("count", [MAX_BATCH_OPERATIONS + 1, 100_000])
def test_a_huge_batch_is_refused_by_size_before_any_work(hermes_home: Path, count: int) -> None:
    ops = [{"action": "add", "content": f"fact {i}"} for i in range(count)]
    started = time.monotonic()
    out = _memory(hermes_home, {"operations": ops})
    assert out["success"] is False and "at most" in out["error"]
    assert time.monotonic() - started < 30  # was about a minute of budget work
    assert not (hermes_home / "memories" / "MEMORY.md").exists()


def test_a_batch_of_huge_texts_is_refused_by_size(hermes_home: Path) -> None:
    ops = [{"action": "add", "content": "长" * (MAX_BATCH_CHARS // 2 + 1)}] * 2
    out = _memory(hermes_home, {"operations": ops})
    assert out["success"] is False and "characters" in out["error"]


def test_a_small_batch_still_works(hermes_home: Path) -> None:
    ops = [{"action": "add", "content": "likes tea"}, {"action": "add", "content": "喜欢喝茶"}]
    assert _memory(hermes_home, {"operations": ops})["success"] is True


@pytest.mark.parametrize("age", ["99999999999999999999d", "300y", "9999999999999h"])
def test_prune_with_an_absurd_age_names_the_fix(hermes_home: Path, age: str) -> None:
    result = CliRunner().invoke(cli, ["sessions", "prune", "--older-than", age])
    assert result.exit_code == 1
    assert "200 years" in result.output
    assert not isinstance(result.exception, OverflowError)


@pytest.mark.parametrize(
    "messages", [["hello"], "hello", [None], {"role": "user", "content": "x"}, [["user", "x"]]]
)
def test_maybe_compress_and_after_turn_name_the_fix_for_bad_messages(
    hermes_home: Path, messages: Any
) -> None:
    with MemoryHost.open(hermes_home, load_entrypoints=False) as host:
        session = host.session()
        with pytest.raises(HermesError, match="message"):
            session.maybe_compress(messages, force=True)
        with pytest.raises(HermesError, match="message"):
            session.after_turn("hi", "hello", messages)


@pytest.mark.parametrize(
    ("name", "value"), [("prompt_tokens", -1), ("prompt_tokens", "9"), ("context_length", 0)]
)
def test_maybe_compress_checks_its_counts(hermes_home: Path, name: str, value: Any) -> None:
    with (
        MemoryHost.open(hermes_home, load_entrypoints=False) as host,
        pytest.raises(HermesError, match=name),
    ):
        host.session().maybe_compress([{"role": "user", "content": "x"}], **{name: value})
