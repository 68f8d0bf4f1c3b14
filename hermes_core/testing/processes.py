"""Run Python code in a fresh interpreter, as a test that must see a cold process does
(what a first import loads, what a new process finds on disk, environment handling)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any


def run_python(
    code: str, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -c code *args`` with this interpreter (``env``: the whole environment,
    default inherited); the test fails with the end of its stderr unless it exits 0."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def last_json_line(done: subprocess.CompletedProcess[str]) -> Any:
    """The JSON value on the last line the process printed."""
    lines = done.stdout.strip().splitlines()
    assert lines, f"the process printed nothing; stderr: {done.stderr[-2000:]}"
    return json.loads(lines[-1])


__all__ = ["last_json_line", "run_python"]
