"""Files: .env line separators, YAML alias bombs, bounded backups and echoes, FIFOs, stale
temp files and the cost of a batch of memory operations."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core import MemoryHost
from hermes_core.errors import ConfigError
from hermes_core.layers.memory.ops import Operation, apply_operations
from hermes_core.layers.memory.store import BACKUP_MAX_BYTES, BACKUP_MAX_FILES, MemoryStore
from hermes_core.settings.base import MAX_YAML_NODES, load_settings, read_config_file
from hermes_core.settings.files import LINE_SEPARATORS, read_env_file, write_env_values

SEPARATORS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def _memory_call(home: Path, **args: Any) -> dict[str, Any]:
    with MemoryHost.open(home, load_entrypoints=False) as host:
        return dict(json.loads(host.session().call_tool("memory", args)))


# ------------------------------------------------------------------ .env


@pytest.mark.parametrize("sep", SEPARATORS)
@pytest.mark.parametrize("value", ["abc{sep}INJECTED=1", "值{sep}LD_PRELOAD=/tmp/evil.so"])
def test_env_values_can_never_start_a_new_line(hermes_home: Path, sep: str, value: str) -> None:
    write_env_values(hermes_home, {"MEM0_API_KEY": value.format(sep=sep)})
    text = (hermes_home / ".env").read_text(encoding="utf-8")
    assert not any(ch in text.rstrip("\n") for ch in LINE_SEPARATORS)
    assert len(text.splitlines()) == 1
    values = read_env_file(hermes_home)
    assert set(values) == {"MEM0_API_KEY"}


@pytest.mark.parametrize("sep", [*SEPARATORS, "\x00"])
def test_env_keys_with_a_separator_are_refused(hermes_home: Path, sep: str) -> None:
    with pytest.raises(ConfigError, match="not a valid environment variable name"):
        write_env_values(hermes_home, {f"GOOD{sep}LD_PRELOAD": "x"})
    with pytest.raises(ConfigError):
        write_env_values(hermes_home, {f"GOOD{sep}": "x"})
    assert not (hermes_home / ".env").exists()


def test_env_errors_do_not_echo_huge_keys(hermes_home: Path) -> None:
    with pytest.raises(ConfigError) as info:
        write_env_values(hermes_home, {"A B" * 100_000: "x"})
    assert len(str(info.value)) < 1_200


# ------------------------------------------------------------------ YAML


def _bomb(levels: int = 9, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    for level in range(1, levels):
        refs = ", ".join([f"*a{level - 1}"] * width)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n"


def test_yaml_alias_bomb_is_refused(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text(_bomb(), encoding="utf-8")
    with pytest.raises(ConfigError, match="aliases"):
        read_config_file(hermes_home)
    with pytest.raises(ConfigError, match="aliases"):
        load_settings(hermes_home)


def test_recursive_yaml_alias_is_refused(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory: &m\n  self: *m\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        read_config_file(hermes_home)


def test_ordinary_yaml_anchors_still_work(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text(
        "base: &base {top_k: 4}\nmemory:\n  providers:\n    chroma: *base\n    mem0: *base\n",
        encoding="utf-8",
    )
    assert read_config_file(hermes_home)["memory"]["providers"]["mem0"] == {"top_k": 4}
    assert _bomb(levels=2, width=9).count("*") < MAX_YAML_NODES


def test_validation_errors_never_echo_huge_inputs(hermes_home: Path) -> None:
    huge = "九" * 200_000
    (hermes_home / "config.yaml").write_text(
        f"memory:\n  memory_char_limit: '{huge}'\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError) as info:
        load_settings(hermes_home)
    assert "memory_char_limit" in str(info.value) and len(str(info.value)) < 2_000


def test_huge_or_non_regular_config_is_refused(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("x: '" + "a" * 2_000_000 + "'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="larger than"):
        read_config_file(hermes_home)


# ------------------------------------------------------------------ memory files


def _drift(home: Path, content: str) -> dict[str, Any]:
    path = home / "memories" / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return _memory_call(home, action="remove", target="memory", old_text="fact")


def test_drift_backups_one_per_distinct_content(hermes_home: Path) -> None:
    drifted = "fact one\n§\n\n§\n用户喜欢茶"
    first = _drift(hermes_home, drifted)
    second = _drift(hermes_home, drifted)
    assert first["success"] is False and first["drift_backup"] == second["drift_backup"]
    assert len(list((hermes_home / "memories").glob("MEMORY.md.bak.*"))) == 1


def test_drift_backups_are_capped_in_number_and_size(hermes_home: Path) -> None:
    for index in range(BACKUP_MAX_FILES + 5):
        _drift(hermes_home, f"fact {index}\n§\n\n§\n" + "x" * (BACKUP_MAX_BYTES // 8))
    backups = list((hermes_home / "memories").glob("MEMORY.md.bak.*"))
    assert 1 <= len(backups) <= BACKUP_MAX_FILES
    assert sum(p.stat().st_size for p in backups) <= BACKUP_MAX_BYTES
    newest = max(backups, key=lambda p: p.stat().st_mtime)
    assert f"fact {BACKUP_MAX_FILES + 4}" in newest.read_text(encoding="utf-8")


def _in_thread(fn: Any, timeout: float = 20.0) -> Any:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "hung on a FIFO"
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("target", ["memory", "user"])
def test_a_fifo_at_a_memory_path_is_an_error_not_a_hang(hermes_home: Path, target: str) -> None:
    memories = hermes_home / "memories"
    memories.mkdir(parents=True, exist_ok=True)
    os.mkfifo(memories / ("MEMORY.md" if target == "memory" else "USER.md"))

    def run() -> tuple[str, dict[str, Any]]:
        with MemoryHost.open(hermes_home, load_entrypoints=False) as host:
            session = host.session()  # the snapshot reads both files
            out = json.loads(
                session.call_tool(
                    "memory", {"action": "add", "target": target, "content": "User likes tea"}
                )
            )
            return session.system_prompt(), out

    prompt, out = _in_thread(run)
    assert out["success"] is False and "could not be read" in out["error"]
    assert "FIFO" in out["error"]
    assert isinstance(prompt, str)


def test_stale_temp_files_are_removed_on_the_next_write(hermes_home: Path) -> None:
    memories = hermes_home / "memories"
    memories.mkdir(parents=True, exist_ok=True)
    stale = memories / ".MEMORY.md.abc123.tmp"
    fresh = memories / ".MEMORY.md.def456.tmp"
    stale.write_text("half-written", encoding="utf-8")
    fresh.write_text("in progress", encoding="utf-8")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    assert _memory_call(hermes_home, action="add", target="memory", content="用户喜欢茶")["success"]
    assert not stale.exists() and fresh.exists()
    assert MemoryStore(hermes_home, "memory", 2200).clean_stale_temp_files(older_than=0) == 1


@pytest.mark.parametrize(
    "args",
    [
        {"action": "remove", "target": "memory", "old_text": "x" * 200_000},
        {"action": "replace", "target": "memory", "old_text": "找" * 200_000, "content": "y"},
        {"target": "memory", "operations": [{"action": "remove", "old_text": "z" * 200_000}]},
        {"action": "a" * 200_000, "target": "memory", "content": "c"},
    ],
)
def test_errors_never_echo_more_than_about_1kb_of_an_argument(
    hermes_home: Path, args: dict[str, Any]
) -> None:
    _memory_call(hermes_home, action="add", target="memory", content="an existing fact")
    out = _memory_call(hermes_home, **args)
    assert out["success"] is False
    assert len(out["error"]) < 1_500, len(out["error"])


# ------------------------------------------------------------------ batch cost


class CountingStr(str):
    """A str that counts equality comparisons (the work a list search does per element)."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        CountingStr.comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def _batch_work(n: int) -> int:
    entries = [CountingStr(f"fact number {i}") for i in range(n)]
    ops = [Operation("add", content=CountingStr(f"new fact {i}")) for i in range(n)]
    ops += [Operation("remove", old_text=CountingStr(f"fact number {i}")) for i in range(n)]
    ops += [
        Operation("replace", old_text=CountingStr(f"new fact {i}"), content=f"renamed {i}")
        for i in range(n)
    ]
    CountingStr.comparisons = 0
    applied = apply_operations(entries, ops)
    assert len(applied.entries) == n and len(applied.removed) == n
    return CountingStr.comparisons


def test_a_batch_of_n_operations_does_linear_work() -> None:
    small, large = _batch_work(500), _batch_work(2_000)
    assert large <= 4 * small + 100  # linear: 4x the operations, ~4x the comparisons
    assert large <= 20 * 2_000  # a list search would need ~millions


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_editing_a_fifo_is_an_error_not_a_hang(hermes_home: Path) -> None:
    from hermes_core.layers.memory.edit import begin_edit

    memories = hermes_home / "memories"
    memories.mkdir(parents=True, exist_ok=True)
    os.mkfifo(memories / "MEMORY.md")
    store = MemoryStore(hermes_home, "memory", 2200)
    with pytest.raises(OSError, match="FIFO"):
        _in_thread(lambda: begin_edit(store))
