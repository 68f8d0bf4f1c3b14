"""The README's and docs/library-use.md's Python examples run as written.

Each example is extracted from the Markdown and executed in a fresh interpreter with an empty
``HERMES_HOME`` (no model, no network), exactly as a reader pasting it would. Every other
Python block in the docs must at least parse.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(path: Path) -> list[str]:
    return _BLOCK.findall(path.read_text(encoding="utf-8"))


def run_example(code: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONIOENCODING": "utf-8"}
    env.pop("HERMES_MEMORY__PROVIDER", None)
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_readme_example_runs_and_a_later_session_finds_the_turn(tmp_path: Path) -> None:
    (code,) = python_blocks(ROOT / "README.md")
    result = run_example(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert '"count": 1' in result.stdout and "Remember that I prefer short answers." in (
        result.stdout
    )
    assert (tmp_path / "state.db").exists()


def test_library_use_example_runs_and_the_memory_reaches_the_next_session(
    tmp_path: Path,
) -> None:
    (code,) = python_blocks(ROOT / "docs" / "library-use.md")
    result = run_example(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Prefers short answers." in result.stdout
    profiles = [p.read_text(encoding="utf-8") for p in (tmp_path / "memories").rglob("USER.md")]
    assert any("Prefers short answers." in text for text in profiles)


GENERATED = {"hooks.md", "configuration.md"}  # signatures written by docgen, checked there


@pytest.mark.parametrize(
    "doc",
    sorted(
        p for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")] if p.name not in GENERATED
    ),
    ids=lambda p: p.name,
)
def test_every_python_block_in_the_docs_parses(doc: Path) -> None:
    for number, code in enumerate(python_blocks(doc), 1):
        try:
            compile(code, f"{doc.name} block {number}", "exec")
        except SyntaxError as exc:
            pytest.fail(f"{doc.name} python block {number} does not parse: {exc}")
