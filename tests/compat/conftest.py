"""tests/compat: hermes-core next to a real Hermes Agent (``hermes-agent==0.19.0``).

These tests drive Hermes Agent's own code, so they need it installed: the ``hermes-agent``
tox env installs it from the registry and sets ``HERMES_TEST_HERMES_AGENT=1``, which turns a
missing package into a failure. Elsewhere (the core ``py311`` env) they are not collected.
"""

from __future__ import annotations

import importlib.util
import os

if importlib.util.find_spec("hermes_state") is None:
    if os.environ.get("HERMES_TEST_HERMES_AGENT"):
        raise RuntimeError(
            "HERMES_TEST_HERMES_AGENT is set but hermes-agent is not installed: "
            "pip install hermes-agent==0.19.0 (the `tox -e hermes-agent` env does this)"
        )
    collect_ignore_glob = ["test_*.py"]

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

WRITER = Path(__file__).with_name("hermes_agent_writer.py")


def run_hermes_agent(home: Path, step: str) -> Any:
    """Run one step of ``hermes_agent_writer.py`` (Hermes Agent's own code) on ``home``;
    returns its JSON output (or ``None``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, str(WRITER), step],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"hermes-agent step {step!r} failed:\n{done.stderr[-3000:]}"
    out = done.stdout.strip().splitlines()
    return json.loads(out[-1]) if out else None


def run_hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Our CLI (``python -m hermes_core``: Hermes Agent owns the ``hermes`` script in an env
    that has both) on ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(home)
    env["COLUMNS"] = "200"
    return subprocess.run(
        [sys.executable, "-m", "hermes_core", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def snapshot(path: Path) -> dict[str, Any]:
    """Every table's schema and rows of a SQLite file, read over a ``mode=ro`` connection."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return {
            "dump": list(conn.iterdump()),
            "version": conn.execute("SELECT version FROM schema_version").fetchall(),
            "journal": conn.execute("PRAGMA journal_mode").fetchone()[0],
            "user_version": conn.execute("PRAGMA user_version").fetchone()[0],
        }
    finally:
        conn.close()


@pytest.fixture
def agent_home(tmp_path: Path) -> Path:
    """A home written by Hermes Agent 0.19.0 itself: sessions, MEMORY.md/USER.md, a skill."""
    home = tmp_path / "hermes-agent-home"
    home.mkdir()
    for step in ("sessions", "memory", "skill"):
        run_hermes_agent(home, step)
    return home


@pytest.fixture
def hermes_agent() -> Callable[[Path, str], Any]:
    return run_hermes_agent
