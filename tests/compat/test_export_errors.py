"""Error paths of `hermes-memory memory export-to-hermes-agent` (library and CLI): every input is
validated before anything is written; errors name the fix; nothing half-written is left."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli.main import cli
from hermes_core.compat.bridge_install import ExportError, export_provider
from hermes_core.errors import HermesError


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def _export(home: Path, **kwargs: Any) -> None:
    export_provider("chroma", hermes_home=home, python=sys.executable, offline=True, **kwargs)


@pytest.mark.parametrize(
    "value",
    ["line one\nline two", "a\rb", "x\u2028y", "tab\x1bescape", {"k": "v\nw"}, ["ok", "a\nb"]],
)
def test_a_multiline_setting_is_refused_before_anything_is_written(
    tmp_path: Path, value: Any
) -> None:
    home = tmp_path / "agent-home"
    home.mkdir()
    with pytest.raises(ExportError, match="one line"):
        _export(home, settings={"collection": value})
    assert _tree(home) == []


@pytest.mark.parametrize("name", ["bad\nname", "../escape", ".hidden", "a" * 65, "名字", ""])
def test_a_bad_plugin_name_is_refused_before_anything_is_written(tmp_path: Path, name: str) -> None:
    home = tmp_path / "agent-home"
    home.mkdir()
    with pytest.raises(ExportError, match="plugin name"):
        _export(home, plugin_name=name or "-")
    assert _tree(home) == []


@pytest.mark.parametrize("which", ["plugins", "target", "core", "home"])
def test_a_symlinked_target_is_named_not_a_raw_oserror(tmp_path: Path, which: str) -> None:
    real = tmp_path / "real-home"
    real.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    home = real
    if which == "home":
        home = tmp_path / "link-home"
        home.symlink_to(real)
    elif which == "plugins":
        (real / "plugins").symlink_to(elsewhere)
    elif which == "target":
        (real / "plugins").mkdir()
        (real / "plugins" / "hermes-core-chroma").symlink_to(elsewhere)
    else:
        (real / "hermes-core").symlink_to(elsewhere)
    before = _tree(real)
    with pytest.raises(ExportError, match="symlink"):
        _export(home)
    assert _tree(real) == before and _tree(elsewhere) == []


def test_a_broken_core_config_is_named_before_anything_is_written(tmp_path: Path) -> None:
    home = tmp_path / "agent-home"
    (home / "hermes-core").mkdir(parents=True)
    os.mkfifo(home / "hermes-core" / "config.yaml")
    with pytest.raises(HermesError, match=r"config\.yaml"):
        _export(home)
    assert not (home / "plugins").exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--set", "collection=a\nb"], "one line"),
        (["--set", "collection=[unclosed"], "not a value"),
        (["--plugin-name", "x\x1b]0;t\x07"], "plugin name"),
    ],
)
def test_the_cli_names_the_fix_and_writes_nothing(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    home = tmp_path / "agent-home"
    home.mkdir()
    argv = ["memory", "export-to-hermes-agent", "chroma", "--hermes-home", str(home)]
    result = CliRunner().invoke(cli, [*argv, "--python", sys.executable, "--offline", *args])
    assert result.exit_code != 0
    assert expected in result.output and "Traceback" not in result.output
    assert "\x1b" not in result.output
    assert _tree(home) == []
