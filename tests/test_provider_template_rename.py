"""contrib/provider-template/rename.py: docs/writing-a-provider.md's one renaming step gives a
package that imports, installs under its new names and labels its recall by its own name
(issue 27: the page's manual rename missed pyproject.toml's package names)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

TEMPLATE = Path(__file__).resolve().parents[1] / "contrib" / "provider-template"
IGNORE = shutil.ignore_patterns("*.egg-info", "__pycache__", ".ruff_cache", "build", ".venv")


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "hermes-memory-notes"
    shutil.copytree(TEMPLATE, copy, ignore=IGNORE)
    return copy


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "rename.py", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    ("name", "module", "cls"),
    [
        ("notes", "hermes_memory_notes", "NotesProvider"),
        ("my-notes", "hermes_memory_my_notes", "MyNotesProvider"),
    ],
)
def test_one_command_renames_everything(tmp_path: Path, name: str, module: str, cls: str) -> None:
    copy = _copy(tmp_path)
    done = _run(copy, name)
    assert done.returncode == 0, done.stderr
    assert (copy / module).is_dir() and not (copy / "hermes_memory_example").exists()
    project = tomllib.loads((copy / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["name"] == f"hermes-memory-{name}"
    entry = project["project"]["entry-points"]["hermes.memory_providers"]
    assert entry == {name: f"{module}.provider:{cls}"}
    setuptools = project["tool"]["setuptools"]
    assert setuptools["packages"]["find"]["include"] == [f"{module}*"]
    assert set(setuptools["package-data"]) == {module}
    for path in copy.rglob("*"):
        if path.is_file() and path.name != "rename.py" and path.suffix in {".py", ".toml"}:
            text = path.read_text(encoding="utf-8")
            assert "hermes_memory_example" not in text and "ExampleProvider" not in text, path
    # the renamed package imports, and its recall label and tool follow the new name
    tool = name.replace("-", "_") + "_search"
    code = (
        f"from {module}.provider import {cls} as P\n"
        "from hermes_core.testing.harness import ProviderHarness\n"
        "import pathlib, sys, tempfile\n"
        f"assert P.name == {name!r}\n"
        "h = ProviderHarness(P, pathlib.Path(tempfile.mkdtemp()))\n"
        "h.sync('I deploy on Fridays')\n"
        "found = h.prefetch('when do I deploy?')\n"
        "assert found is not None and found.label == P.name, found\n"
        f"reply = h.session.call_tool({tool!r}, {{'query': 'deploy'}})\n"
        "assert '\"success\": true' in reply, reply\n"
        "h.close()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(copy)}
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr


def test_a_bad_name_or_a_second_run_is_refused_with_the_fix(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    bad = _run(copy, "Notes!")
    assert bad.returncode == 1 and "lower-case letters" in bad.stderr
    assert (copy / "hermes_memory_example").is_dir()  # nothing changed
    assert _run(copy, "notes").returncode == 0
    again = _run(copy, "other")
    assert again.returncode == 1 and "fresh copy" in again.stderr
    usage = _run(copy)
    assert usage.returncode == 2 and "python rename.py NAME" in usage.stderr
