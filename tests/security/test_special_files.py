"""Special and oversized files wherever the program reads: a FIFO, a device, a directory or
a huge sparse file in place of any file hermes-core opens is refused at once with a message
naming it (or skipped, where the file is optional); YAML alias bombs are refused. Every way
in: the helper, the library, the CLI (in a subprocess, so a hang fails by timeout) and the
Hermes Agent bridge discovery."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_files import _in_thread

from hermes_core.errors import ConfigError
from hermes_core.fsutil import UnsafeFileError, read_regular_bytes, read_regular_text
from hermes_core.yamlsafe import read_yaml_file

TIMEOUT = 90
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)
)


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _huge(path: Path, size: int = 3 * 1024**3) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)  # sparse: instant to create
    return path


def _hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update({"HERMES_HOME": str(home), "MEM0_TELEMETRY": "False", "COLUMNS": "200"})
    return subprocess.run(
        [sys.executable, "-m", "hermes_core", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
    )


# ------------------------------------------------------------------ the one helper


@pytest.mark.parametrize("kind", ["fifo", "directory", "device", "huge"])
def test_the_helper_refuses_every_special_file_at_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "target"
    if kind == "fifo":
        _fifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "device":
        path = Path("/dev/zero")
    else:
        _huge(path)
    started = time.monotonic()
    with pytest.raises(UnsafeFileError) as info:
        _in_thread(lambda: read_regular_bytes(path, max_bytes=1 << 20, what="test file"))
    assert str(path) in str(info.value) and "test file" in str(info.value)
    assert time.monotonic() - started < 5


def test_the_helper_reads_regular_files_and_heads(tmp_path: Path) -> None:
    path = tmp_path / "ok.txt"
    path.write_bytes("\ufeff中文 ok".encode())
    assert read_regular_text(path, max_bytes=100) == "中文 ok"
    _huge(path, 10_000)
    assert len(read_regular_bytes(path, max_bytes=100, head=True)) == 100
    with pytest.raises(FileNotFoundError):
        read_regular_bytes(tmp_path / "missing")


def test_yaml_files_refuse_alias_bombs(tmp_path: Path) -> None:
    path = tmp_path / "plugin.yaml"
    path.write_text(BOMB, encoding="utf-8")
    with pytest.raises(ValueError, match="aliases"):
        _in_thread(lambda: read_yaml_file(path, max_bytes=1 << 20))


# ------------------------------------------------------------------ library


@pytest.mark.parametrize("name", ["config.yaml", ".env"])
@pytest.mark.parametrize("kind", ["fifo", "huge"])
def test_settings_refuse_a_special_config_or_env(hermes_home: Path, name: str, kind: str) -> None:
    from hermes_core.settings.base import load_settings

    (_fifo if kind == "fifo" else _huge)(hermes_home / name)
    with pytest.raises(ConfigError) as info:
        _in_thread(lambda: load_settings(hermes_home))
    assert name in str(info.value)


def test_provider_json_settings_refuse_a_fifo(tmp_path: Path) -> None:
    from hermes_core.providers.service.fields import read_json_object

    path = _fifo(tmp_path / "honcho.json")
    with pytest.raises(ConfigError, match=r"honcho\.json is a FIFO, not a regular file"):
        _in_thread(lambda: read_json_object(path))


@pytest.mark.parametrize("kind", ["huge", "directory"])
def test_provider_json_settings_refuse_a_huge_file_or_a_directory(
    tmp_path: Path, kind: str
) -> None:
    from hermes_core.providers.service.fields import read_json_object

    path = tmp_path / "mem0.json"
    if kind == "huge":
        _huge(path)
    else:
        path.mkdir()
    with pytest.raises(ConfigError, match=r"mem0\.json") as info:
        read_json_object(path)
    assert ("larger than" if kind == "huge" else "not a regular file") in str(info.value)
    assert "Errno" not in str(info.value)


def test_memory_tool_refuses_a_fifo_memory_file(hermes_home: Path) -> None:
    import json

    from hermes_core import MemoryHost

    _fifo(hermes_home / "memories" / "MEMORY.md")

    def call() -> dict[str, Any]:
        with MemoryHost.open(hermes_home, load_entrypoints=False) as host:
            return dict(
                json.loads(host.session().call_tool("memory", {"action": "add", "content": "x"}))
            )

    out = _in_thread(call)
    assert out["success"] is False and "FIFO" in out["error"]


def test_session_import_refuses_a_fifo(tmp_path: Path) -> None:
    from hermes_core.layers.sessions.transfer import TransferError, read_import

    path = _fifo(tmp_path / "sessions.jsonl")
    with pytest.raises((TransferError, OSError)) as info:
        _in_thread(lambda: read_import(path))
    assert "FIFO" in str(info.value)


def test_skill_files_refuse_fifo_and_huge(tmp_path: Path) -> None:
    from hermes_core.layers.skills.library import read_text_file

    for path in (_fifo(tmp_path / "a" / "SKILL.md"), _huge(tmp_path / "b" / "SKILL.md")):
        with pytest.raises(ValueError):
            _in_thread(lambda path=path: read_text_file(path, max_chars=100_000))


# ------------------------------------------------------------------ Hermes Agent bridges


@pytest.mark.parametrize(
    "hostile", ["fifo_init", "fifo_yaml", "huge_init", "bomb_yaml", "huge_yaml"]
)
def test_bridge_discovery_survives_hostile_plugin_files(hermes_home: Path, hostile: str) -> None:
    from hermes_core.compat.bridge_discovery import _plugin_dirs

    plugin = hermes_home / "plugins" / "evil"
    plugin.mkdir(parents=True)
    good = hermes_home / "plugins" / "good"
    good.mkdir()
    (good / "__init__.py").write_text("class P(MemoryProvider): ...\n", encoding="utf-8")
    init, manifest = plugin / "__init__.py", plugin / "plugin.yaml"
    if hostile == "fifo_init":
        _fifo(init)
    else:
        init.write_text("from x import MemoryProvider\n", encoding="utf-8")
    if hostile == "huge_init":
        init.unlink()
        _huge(init)
    if hostile == "fifo_yaml":
        _fifo(manifest)
    elif hostile == "bomb_yaml":
        manifest.write_text(BOMB, encoding="utf-8")
    elif hostile == "huge_yaml":
        _huge(manifest)
    started = time.monotonic()
    found = _in_thread(lambda: _plugin_dirs(hermes_home / "plugins"))
    assert time.monotonic() - started < 10
    assert "good" in [p.name for p in found]


# ------------------------------------------------------------------ CLI (subprocesses)


def test_cli_memory_list_with_hostile_plugin_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    plugins = home / "plugins"
    for name, init_kind, yaml_kind in (
        ("fifo-init", "fifo", None),
        ("fifo-yaml", "text", "fifo"),
        ("bomb", "text", "bomb"),
        ("huge", "huge", "huge"),
    ):
        directory = plugins / name
        directory.mkdir(parents=True)
        if init_kind == "fifo":
            _fifo(directory / "__init__.py")
        elif init_kind == "huge":
            _huge(directory / "__init__.py")
        else:
            (directory / "__init__.py").write_text("MemoryProvider\n", encoding="utf-8")
        if yaml_kind == "fifo":
            _fifo(directory / "plugin.yaml")
        elif yaml_kind == "bomb":
            (directory / "plugin.yaml").write_text(BOMB, encoding="utf-8")
        elif yaml_kind == "huge":
            _huge(directory / "plugin.yaml")
    for args in (("memory", "list"), ("memory", "list", "--json"), ("memory", "status")):
        result = _hermes(home, *args)
        assert result.returncode == 0, result.stderr
        assert len(result.stdout) < 100_000


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("config.yaml", ("memory", "status")),
        (".env", ("doctor",)),
        ("mcp_tokens.json", ("mcp", "token", "list")),
        ("memories/MEMORY.md", ("memory", "show")),
    ],
)
def test_cli_names_the_special_file_instead_of_hanging(
    tmp_path: Path, name: str, args: tuple[str, ...]
) -> None:
    home = tmp_path / "home"
    _fifo(home / name)
    result = _hermes(home, *args)
    assert result.returncode != 0
    assert Path(name).name in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_cli_session_import_of_a_fifo(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    result = _hermes(home, "sessions", "import", str(_fifo(tmp_path / "in.jsonl")))
    assert result.returncode != 0 and "FIFO" in result.stdout + result.stderr
