"""`hermes-memory uninstall` of the active provider's package, and doctor's fix afterwards.

pip refuses to touch a distribution outside its environment, so the tests stand in for pip
with a double that does what ``pip uninstall -y`` does to a dist-info: remove it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from hermes_core.cli import plugins as plugins_cli
from hermes_core.cli.main import cli


@pytest.fixture
def installed_recording(fake_distribution: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    info = fake_distribution(
        "hermes-memory-recording",
        "2.1",
        providers={"recording": "providers_for_tests:RecordingProvider"},
    )
    site = info.parent

    def pip(args: list[str]) -> None:
        assert args[:2] == ["uninstall", "-y"]
        for name in args[2:]:
            for dist_info in site.glob(name.replace("-", "_") + "-*.dist-info"):
                shutil.rmtree(dist_info)

    monkeypatch.setattr(plugins_cli, "_pip", pip)
    return info


def _provider(home: Path) -> str:
    return str(yaml.safe_load((home / "config.yaml").read_text())["memory"]["provider"])


def test_uninstalling_the_active_provider_with_off_switches_to_builtin(
    hermes_home: Path, installed_recording: Path
) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["memory", "use", "recording"]).exit_code == 0
    result = runner.invoke(cli, ["uninstall", "--off", "hermes-memory-recording"])
    assert result.exit_code == 0, result.output
    assert not installed_recording.exists()
    assert "turned off" in result.output
    assert _provider(hermes_home) == ""


def test_uninstall_without_a_terminal_keeps_config_and_says_how_to_switch_off(
    hermes_home: Path, installed_recording: Path
) -> None:
    runner = CliRunner()
    runner.invoke(cli, ["memory", "use", "recording"])
    result = runner.invoke(cli, ["uninstall", "hermes-memory-recording"])
    assert result.exit_code == 0, result.output
    assert "hermes-memory memory off" in result.output
    assert _provider(hermes_home) == "recording"
    doctor = runner.invoke(cli, ["doctor", "--json"])
    rows = json.loads(doctor.output)
    row = next(r for r in rows if r["name"] == "provider recording")
    assert not row["ok"]
    assert row["fix"].startswith("hermes-memory memory off")  # a command that works here
    assert runner.invoke(cli, ["memory", "off"]).exit_code == 0


def test_uninstalling_another_package_says_nothing_about_the_provider(
    hermes_home: Path, installed_recording: Path, fake_distribution: Any
) -> None:
    fake_distribution("unrelated-pkg", "1.0")
    runner = CliRunner()
    runner.invoke(cli, ["memory", "use", "recording"])
    result = runner.invoke(cli, ["uninstall", "unrelated-pkg"])
    assert result.exit_code == 0, result.output
    assert "memory off" not in result.output
    assert _provider(hermes_home) == "recording"
