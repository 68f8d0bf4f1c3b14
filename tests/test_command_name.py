"""Issue 27, point 6: our command is ``hermes-memory``; ``hermes`` is Hermes Agent's.

hermes-memory-core installs only ``hermes-memory`` (and runs as ``python -m hermes_core``), so
installing it, or any provider requiring it, into Hermes Agent's environment never replaces
Hermes Agent's ``hermes`` (tests/compat/test_command_coexistence.py proves that next to the
real hermes-agent 0.19.0). The short name comes from ``contrib/hermes-memory-cli``, a
distribution of its own. Every page and hint names the command the same way
(``.ci/command-name.py --check``, also run by the lint env).
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def console_scripts(dist: str) -> set[str]:
    return {ep.name for ep in distribution(dist).entry_points if ep.group == "console_scripts"}


def test_the_core_installs_hermes_memory_and_never_hermes() -> None:
    assert console_scripts("hermes-memory-core") == {"hermes-memory"}
    done = subprocess.run(
        [sys.executable, "-m", "hermes_core", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.startswith("hermes-memory, version")


def test_docs_and_hints_use_one_command_name() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "command-name.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr


@pytest.mark.slow
def test_hermes_memory_cli_gives_the_short_name(tmp_path: Path) -> None:
    target = tmp_path / "target"
    install = subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
            "--no-index", "--no-build-isolation", "--no-deps", "--target", str(target),
            str(ROOT / "contrib" / "hermes-memory-cli"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-3000:]
    script = target / "bin" / "hermes"
    assert sorted(p.name for p in (target / "bin").iterdir()) == ["hermes"]
    done = subprocess.run([str(script), "memory", "--help"], capture_output=True, text=True)
    usage = done.stdout.split()[:3]  # the short name: what hermes-memory-cli exists for
    assert done.returncode == 0 and usage == ["Usage:", "hermes", "memory"], done.stderr
