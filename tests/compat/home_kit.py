"""Shared helpers of tests/compat/test_home_*.py: drive Hermes Agent's own code, run our CLI,
snapshot a SQLite file. (Kept out of conftest.py so the bridge tests' conftest stays theirs.)"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def make_agent_home(tmp_path: Path) -> Path:
    """A home written by Hermes Agent 0.19.0 itself: sessions, MEMORY.md/USER.md, a skill."""
    home = tmp_path / "hermes-agent-home"
    home.mkdir()
    for step in ("sessions", "memory", "skill"):
        run_hermes_agent(home, step)
    return home
