"""The ``hermes`` group: lazy built-ins, and provider commands whose host is closed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from hermes_core.cli.main import BUILTIN_COMMANDS, cli

PROVIDER = '''
from pathlib import Path

import click

from hermes_core import MemoryProvider, hookimpl


class Talker(MemoryProvider):
    name = "talker"

    def _log(self, line: str) -> None:
        with open(Path(self.home) / "talker.log", "a", encoding="utf-8") as fh:
            fh.write(line + "\\n")

    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        @cli.group("talker")
        def talker() -> None:
            """Talker's own commands."""

        @talker.command("hello")
        def hello() -> None:
            self._log("hello")
            click.echo("你好 from talker")

    def shutdown(self) -> None:
        self._log("shutdown")
'''


def test_provider_command_runs_then_its_host_is_closed(
    fake_distribution: Any, hermes_home: Path, monkeypatch: Any
) -> None:
    fake_distribution(
        "hermes-memory-talker",
        providers={"talker": "talker_provider_module:Talker"},
        modules={"talker_provider_module": PROVIDER},
    )
    monkeypatch.setenv("HERMES_HOME", str(hermes_home))
    (hermes_home / "config.yaml").write_text("memory:\n  provider: talker\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["talker", "hello"])
    assert result.exit_code == 0, result.output
    assert "你好 from talker" in result.output
    # the provider served the command, then the host shut it down (exactly once)
    log = (hermes_home / "talker.log").read_text(encoding="utf-8").split()
    assert log == ["hello", "shutdown"]
    unknown = CliRunner().invoke(cli, ["nosuch"])
    assert unknown.exit_code != 0 and "No such command" in unknown.output


def test_every_builtin_command_loads() -> None:
    # no "not built yet" fallback: a missing module is an import error, not a hidden command
    runner = CliRunner()
    for name in BUILTIN_COMMANDS:
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)


def test_every_benchmark_loads() -> None:
    from hermes_core.cli.bench import BENCHMARKS

    runner = CliRunner()
    listed = runner.invoke(cli, ["bench", "--help"])
    assert listed.exit_code == 0
    for name in BENCHMARKS:
        assert name in listed.output
        result = runner.invoke(cli, ["bench", name, "--help"])
        assert result.exit_code == 0, (name, result.output)
