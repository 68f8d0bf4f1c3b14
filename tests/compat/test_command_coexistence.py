"""Issue 27, point 6: installing hermes-memory-core and a provider into Hermes Agent's
environment leaves Hermes Agent's ``hermes`` working.

The ``hermes-agent`` tox env installs hermes-agent 0.19.0 from the registry, then our core
(nothing restores Hermes Agent's command afterwards). Here, in that same environment, the
core and the holographic provider are installed once more from this checkout, as a user
would (``pip install``; offline: ``--no-index --no-build-isolation``), and both commands are
run: ``hermes`` is still Hermes Agent's, ours is ``hermes-memory``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("hermes_cli.main", reason="needs hermes-agent (tox -e hermes-agent)")
pytest.importorskip("hatchling", reason="the offline install builds with the env's hatchling")

BIN = Path(sysconfig.get_path("scripts"))
CHECKOUT = Path(__file__).resolve().parents[2]
PROVIDER = CHECKOUT / "plugins" / "hermes-memory-holographic"


def pip(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture
def provider_installed(tmp_path: Path) -> Iterator[None]:
    """Core + provider installed into this (Hermes Agent's) environment; the provider is
    removed afterwards so the other compat tests see the env as tox built it."""
    pip(
        "install",
        "-q",
        "--no-index",
        "--no-build-isolation",
        "--no-deps",
        "--force-reinstall",
        str(CHECKOUT),
        str(PROVIDER),
    )
    try:
        yield
    finally:
        pip("uninstall", "-q", "-y", "hermes-memory-holographic")


def run(*cmd: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(cmd),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HERMES_HOME": str(home), "COLUMNS": "200"},
    )


def test_hermes_agent_keeps_its_command(provider_installed: None, tmp_path: Path) -> None:
    script = BIN / "hermes"
    assert "from hermes_cli.main import main" in script.read_text(encoding="utf-8")
    version = run(str(script), "--version", home=tmp_path)
    assert version.returncode == 0 and "Hermes Agent v0.19.0" in version.stdout, version.stderr

    ours = BIN / "hermes-memory"
    assert "from hermes_core.cli.main import cli" in ours.read_text(encoding="utf-8")
    mine = run(str(ours), "--version", home=tmp_path)
    assert mine.returncode == 0 and mine.stdout.startswith("hermes-memory"), mine.stderr
    listed = run(str(ours), "memory", "list", "--json", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "holographic" in {row["name"] for row in json.loads(listed.stdout)}
    # one installed distribution owns each script; ours is not called `hermes`
    owners = subprocess.run(
        [sys.executable, "-c", OWNERS], capture_output=True, text=True, check=True
    ).stdout
    expected = {"hermes": ["hermes-agent"], "hermes-memory": ["hermes-memory-core"]}
    assert json.loads(owners) == expected


OWNERS = r"""
import json
from importlib.metadata import distributions
owners = {}
for d in distributions():
    for ep in d.entry_points:
        if ep.group == "console_scripts" and ep.name in ("hermes", "hermes-memory"):
            owners.setdefault(ep.name, []).append(d.metadata["Name"])
print(json.dumps({k: sorted(v) for k, v in owners.items()}))
"""
