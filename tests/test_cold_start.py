"""Cold start: ``import hermes_core`` and ``hermes-memory --help`` load no heavy dependency.

Checked in a fresh interpreter (``sys.modules`` after the import or the command), never by
timing. The figures (wall time and ``python -X importtime``) are in docs/benchmarks.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from hermes_core.cli.main import BUILTIN_COMMANDS, BUILTIN_HELP, cli

HEAVY = ("pydantic_settings", "httpx", "numpy", "prompt_toolkit")
"""Modules the issue names: settings models, HTTP client, numpy, prompt_toolkit."""
LAYERS = ("hermes_core.security.scan", "hermes_core.layers.memory.engine")


def _loaded_after(code: str, env: dict[str, str] | None = None) -> list[str]:
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps(sorted(m for m in {list(HEAVY + LAYERS)!r} if m in sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    loaded: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def _run_cli(args: list[str]) -> str:
    return (
        "import contextlib, io, sys\n"
        f"sys.argv = ['hermes', *{args!r}]\n"
        "from hermes_core.cli.main import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        cli()\n"
        "    except SystemExit:\n"
        "        pass\n"
    )


def test_import_hermes_core_loads_nothing_heavy() -> None:
    assert _loaded_after("import hermes_core") == []


def test_public_names_still_resolve_lazily() -> None:
    loaded = _loaded_after(
        "import hermes_core\n"
        "assert hermes_core.MemoryProvider.__name__ == 'MemoryProvider'\n"
        "assert hermes_core.ProviderSettings.__name__ == 'ProviderSettings'\n"
        "assert callable(hermes_core.setup_field)\n"
        "from hermes_core import MemoryHost, Session\n"
    )
    assert "pydantic_settings" in loaded  # the check can fail: the probe sees real imports


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["memory", "--help"]])
def test_help_loads_nothing_heavy(args: list[str]) -> None:
    loaded = _loaded_after(_run_cli(args))
    if args == ["memory", "--help"]:
        # the memory group needs the settings models; never the engine or the scanner
        assert not set(loaded) & {"httpx", "numpy", "prompt_toolkit", *LAYERS}
    else:
        assert loaded == []


def test_memory_status_loads_no_engine_or_scanner(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home")}
    loaded = _loaded_after(_run_cli(["memory", "status"]), env=env)
    assert not set(loaded) & {"httpx", "numpy", "prompt_toolkit", *LAYERS}


PROBE_PROVIDER = """
from pydantic import SecretStr
from hermes_core import MemoryProvider, ProviderSettings
from hermes_core.providers.base import setup_field


class ProbeSettings(ProviderSettings):
    api_key: SecretStr | None = setup_field(None, description="Key", env_var="PROBE_API_KEY")


class ProbeProvider(MemoryProvider):
    name = "probe"
    Settings = ProbeSettings
"""


def test_memory_status_of_a_configured_provider_loads_no_prompt_toolkit(
    tmp_path: Path, fake_distribution: Any
) -> None:
    """Reporting a provider's secrets needs its settings model, not the setup prompts
    (questionary/prompt_toolkit are imported when a question is asked)."""
    import os

    info = fake_distribution(
        "hermes-memory-probe",
        providers={"probe": "probe_provider:ProbeProvider"},
        modules={"probe_provider": PROBE_PROVIDER},
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  provider: probe\n", encoding="utf-8")
    env = {
        **os.environ,
        "HERMES_HOME": str(home),
        "PYTHONPATH": os.pathsep.join([str(info.parent), *sys.path]),
    }
    code = _run_cli(["memory", "status"]).replace("io.StringIO()", "out")
    code = "import io\nout = io.StringIO()\n" + code
    code += "assert 'PROBE_API_KEY' in out.getvalue(), out.getvalue()\n"  # the secrets part ran
    loaded = _loaded_after(code, env=env)
    assert "pydantic_settings" in loaded  # the check can fail: the probe sees real imports
    assert not set(loaded) & {"httpx", "numpy", "prompt_toolkit", *LAYERS}


@pytest.mark.parametrize("name", sorted(BUILTIN_COMMANDS))
def test_static_help_matches_each_command(name: str) -> None:
    """``hermes-memory --help`` prints :data:`BUILTIN_HELP`; it must say what the command says."""
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    assert BUILTIN_HELP[name] == command.get_short_help_str(limit=10_000)


def test_help_lists_every_builtin_command() -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, ["--help"], terminal_width=200)
    assert result.exit_code == 0
    for name in BUILTIN_COMMANDS:
        assert f"  {name} " in result.output
    assert BUILTIN_HELP["uninstall"] in result.output
