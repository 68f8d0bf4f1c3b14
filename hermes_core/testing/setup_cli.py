"""``run_setup``: drive ``hermes-memory memory setup <provider>`` through a pipe, as a user
typing at the prompts, and read back what it wrote; ``a_whole_session``: then one session
through the host (remember, recall, search tool). A provider's end-to-end test in a few lines."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core.host import MemoryHost

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


def run_service_setup(
    home: Path,
    provider: str,
    answers: Sequence[str],
    *,
    signup_url: str,
    written: Mapping[str, Any],
    key_line: str,
) -> SetupRun:
    """:func:`run_setup` for a service provider, checking what it must have done: exited 0,
    pointed at ``signup_url`` for a key, found the provider available and activated it,
    written exactly ``written`` to its config (never the key) and ``key_line`` to ``.env``."""
    run = run_setup(home, provider, answers)
    assert run.exit_code == 0, run.output
    assert f"Get yours at {signup_url}" in run.output
    assert "available ✓" in run.output
    assert run.config["memory"]["provider"] == provider
    assert run.provider_config(provider) == dict(written), (
        "only the asked fields are written; the key goes to .env"
    )
    assert key_line in run.env
    return run


FACT = "Remember: I deploy with Ansible on Fridays."
QUESTION = "When do I deploy with Ansible?"


def a_whole_session(
    host: MemoryHost, search_tool: str, *, user_id: str = "alice", prompt_has: str = ""
) -> str:
    """One session of ``user_id`` through ``host``: :data:`FACT` is stored, :data:`QUESTION`
    recalls it in the turn's ``<memory-context>``, ``search_tool`` finds it
    (``{"query": "Ansible"}``); the system prompt contains ``prompt_has``. Returns the
    session id. Assertions fail the calling test."""
    with host.session(source="cli", user_id=user_id) as s:
        assert prompt_has in s.system_prompt()
        assert s.before_turn(FACT) == ""
        s.after_turn(FACT, "Noted.")
        assert host.flush(10)
        block = s.before_turn(QUESTION)
        assert "<memory-context>" in block and "Fridays" in block
        s.after_turn(QUESTION, "On Fridays.")
        found = json.loads(s.call_tool(search_tool, {"query": "Ansible"}))
        assert found["success"] and found["count"] >= 1
    assert host.flush(10)
    return s.id


def a_whole_session_in(
    home: Path, provider_class: type[Any], search_tool: str, **options: str
) -> str:
    """Open the host of ``home`` (as configured), check that its active provider is an
    available ``provider_class``, run :func:`a_whole_session` (``options``: ``user_id``,
    ``prompt_has``) and close the host; returns the session id."""
    from hermes_core.host import MemoryHost

    with MemoryHost.open(home) as host:
        provider = host.provider
        assert isinstance(provider, provider_class), f"the active provider is {provider!r}"
        assert provider.is_available(), provider.unavailable_reason()
        return a_whole_session(host, search_tool, **options)


__all__ = [
    "CLEAR_LINE",
    "FACT",
    "QUESTION",
    "SetupRun",
    "a_whole_session",
    "a_whole_session_in",
    "run_service_setup",
    "run_setup",
]
