"""``run_setup``: drive ``hermes-memory memory setup <provider>`` through a pipe, as a user
typing at the prompts, and read back what it wrote (a provider's setup test in a few lines)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLEAR_LINE = "\x15"
"""ctrl-u at a prompt: drop the pre-filled default before typing."""


@dataclass(frozen=True)
class SetupRun:
    """What one setup run printed and wrote."""

    exit_code: int
    output: str
    config: dict[str, Any]
    """``config.yaml`` after the run (``{}`` when absent)."""
    env: str
    """``.env`` after the run (``""`` when absent)."""

    def provider_config(self, name: str) -> Any:
        """``memory.providers.<name>`` as written."""
        return self.config.get("memory", {}).get("providers", {}).get(name)


def run_setup(home: Path, provider: str, answers: Sequence[str], *options: str) -> SetupRun:
    """Run ``hermes-memory memory setup <provider> [options]`` with ``answers`` typed at
    the prompts in turn (each followed by Enter; ``""`` keeps the default) under
    ``HERMES_HOME`` = ``home`` (the caller sets it, e.g. the ``hermes_home`` fixture)."""
    import yaml
    from click.testing import CliRunner
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from hermes_core.cli.main import cli

    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("".join(answer + "\r" for answer in answers))
        result = CliRunner().invoke(cli, ["memory", "setup", provider, *options])
    config_file, env_file = home / "config.yaml", home / ".env"
    config = yaml.safe_load(config_file.read_text(encoding="utf-8")) if config_file.exists() else {}
    env = env_file.read_text(encoding="utf-8") if env_file.exists() else ""
    return SetupRun(result.exit_code, result.output, config or {}, env)


__all__ = ["CLEAR_LINE", "SetupRun", "run_setup"]
