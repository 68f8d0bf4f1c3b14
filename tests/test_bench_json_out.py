"""Every ``hermes-memory bench`` command refuses an unwritable ``--json OUT`` before running."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli.bench import BENCHMARKS
from hermes_core.cli.main import cli


@pytest.mark.parametrize("name", BENCHMARKS)
def test_missing_json_directory_is_refused_up_front(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    target = tmp_path / "不存在" / "out.json"
    args = ["bench", name]
    if name == "locomo":
        data = tmp_path / "locomo.json"
        data.write_text(json.dumps([]), encoding="utf-8")
        args.append(str(data))
    result = CliRunner().invoke(cli, [*args, "--json", str(target)])
    assert result.exit_code == 2, result.output
    assert "does not exist" in result.output and "create it" in result.output
    assert not target.parent.exists()
    assert not (tmp_path / "home" / "state.db").exists()  # nothing ran
