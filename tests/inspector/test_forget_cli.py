"""``hermes-memory memory forget``: preview, --yes, --json, --everything; refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from inspector_kit import PHRASE_EN, PHRASE_ZH, raw_hits, seed

from hermes_core.cli.main import cli


@pytest.fixture
def files_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    seed(home)
    return home


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["memory", "forget", *args])
    return result.exit_code, result.output


def test_preview_as_json_changes_nothing(files_home: Path) -> None:
    code, out = run(PHRASE_ZH, "--user", "alice", "--json")
    assert code == 0, out
    preview = json.loads(out)["preview"]
    assert preview["counts"]["memory"] == 1 and preview["counts"]["archive"] >= 1
    assert raw_hits(files_home, PHRASE_ZH)


def test_without_a_terminal_a_delete_needs_yes(files_home: Path) -> None:
    code, out = run(PHRASE_EN, "--user", "alice")
    assert code != 0 and "--yes" in out
    assert raw_hits(files_home, PHRASE_EN)


def test_yes_deletes_and_prints_a_clean_proof(files_home: Path) -> None:
    code, out = run(PHRASE_EN, "--user", "alice", "--yes", "--json")
    assert code == 0, out
    report = json.loads(out)
    assert report["proof"]["clean"] is True
    assert report["proof"]["raw_files_with_phrase"] == []
    assert report["removed"]["counts"]["memory"] == 1
    assert raw_hits(files_home, PHRASE_EN) == []
    code, out = run(PHRASE_ZH, "--user", "alice", "--yes")
    assert code == 0 and "still contain the phrase" in out and "Proof" in out


def test_a_stray_copy_makes_the_proof_fail(files_home: Path) -> None:
    (files_home / "stray.log").write_text(f"{PHRASE_EN}\n")
    code, out = run(PHRASE_EN, "--user", "alice", "--yes")
    assert code == 1 and "stray.log" in out


def test_everything_and_bad_input(files_home: Path) -> None:
    assert run("--everything")[0] != 0
    assert run("x", "--user", "alice", "--yes")[0] != 0  # too short
    assert run(PHRASE_EN, "--everything", "--user", "alice")[0] != 0
    code, out = run("--everything", "--user", "alice", "--yes", "--json")
    assert code == 0, out
    assert json.loads(out)["removed"]["sessions"] == 1
    assert raw_hits(files_home, "prefers tea") == []
