"""Outbound bridge: Hermes Agent 0.19.0's own loader and MemoryManager run our chroma and
holographic providers, exported with ``hermes-memory memory export-to-hermes-agent``, and its own
``hermes`` command is left intact.

The export installs into THIS environment (the ``hermes-agent`` tox env, where Hermes Agent
owns ``bin/hermes``), offline: ``--no-index --no-build-isolation``. Hermes Agent runs in a
subprocess (a fresh interpreter, as it would run for a user) and reports JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

pytest.importorskip("agent.memory_manager", reason="needs hermes-agent (tox -e hermes-agent)")
pytest.importorskip("hatchling", reason="the offline export builds with the env's hatchling")

from hermes_core.cli.main import cli
from hermes_core.compat.bridge_discovery import list_hermes_agent_providers

BIN = Path(sysconfig.get_path("scripts"))
CHECKOUT = Path(__file__).resolve().parents[2]  # the tox env runs hermes-core from a wheel

DRIVE_HERMES_AGENT = r"""
import json, sys
from plugins.memory import discover_memory_providers, load_memory_provider
from agent.memory_manager import MemoryManager

name, note = sys.argv[1], sys.argv[4]
turns, probes = json.loads(sys.argv[2]), json.loads(sys.argv[3])
out = {"discovered": [d[0] for d in discover_memory_providers()]}
provider = load_memory_provider(name)
out["bases"] = [f"{c.__module__}.{c.__name__}" for c in type(provider).__mro__]
out["available"] = provider.is_available()
manager = MemoryManager()
manager.add_provider(provider)
manager.initialize_all(session_id="ha-session-1", platform="cli", user_id="alice")
out["tools"] = sorted(manager.get_all_tool_names())
for user, reply in turns:
    manager.sync_all(user, reply)
if note:
    manager.on_memory_write("add", "user", note)
out["flushed"] = manager.flush_pending(60)
out["recall"] = {probe: manager.prefetch_all(probe) for probe in probes}
tool = next((t for t in out["tools"] if t.endswith("search") or t == "fact_store"), None)
if tool == "fact_store":
    args = {"action": "search", "query": probes[0]}
    out["tool"] = json.loads(manager.handle_tool_call(tool, args))
elif tool:
    out["tool"] = json.loads(manager.handle_tool_call(tool, {"query": probes[0]}))
manager.on_session_end([{"role": "user", "content": u} for u, _ in turns])
manager.shutdown_all()
# a new session of a new agent: what the last one left behind is recalled
again = MemoryManager()
again.add_provider(load_memory_provider(name))
again.initialize_all(session_id="ha-session-2", platform="cli", user_id="alice")
out["recall_next_session"] = {probe: again.prefetch_all(probe) for probe in probes}
again.shutdown_all()
import hermes_core
out["hermes_core"] = hermes_core.__file__
print("RESULT " + json.dumps(out, ensure_ascii=False))
"""


def bin_snapshot() -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(BIN.iterdir())
        if p.is_file()
    }


@pytest.fixture
def agent_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "hermes-agent-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


def hermes_agent_script() -> str:
    script = BIN / "hermes"
    text = script.read_text(encoding="utf-8")
    assert "from hermes_cli.main import main" in text, (
        f"{script} is not Hermes Agent's command: installing hermes-core replaced it "
        "(our command is `hermes-memory`)"
    )
    return text


def export(home: Path, name: str, *extra: str) -> dict[str, object]:
    result = CliRunner().invoke(
        cli,
        [
            "memory",
            "export-to-hermes-agent",
            name,
            "--hermes-home",
            str(home),
            "--python",
            sys.executable,
            "--from",
            str(CHECKOUT),
            "--offline",
            "--json",
            *extra,
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.output)
    return data


def drive(
    home: Path, plugin: str, turns: list[list[str]], probes: list[str], note: str = ""
) -> dict:  # type: ignore[type-arg]
    env = {**os.environ, "HERMES_HOME": str(home), "MEM0_TELEMETRY": "False"}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            DRIVE_HERMES_AGENT,
            plugin,
            json.dumps(turns),
            json.dumps(probes),
            note,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=600,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT ") :])  # type: ignore[no-any-return]


def check_export(home: Path, report: dict[str, object], name: str) -> Path:
    plugin_dir = home / "plugins" / f"hermes-core-{name}"
    assert report["plugin_dir"] == str(plugin_dir)
    assert report["hermes_script_unchanged"] is True
    manifest = yaml.safe_load((plugin_dir / "plugin.yaml").read_text(encoding="utf-8"))
    assert manifest["name"] == f"hermes-core-{name}" and manifest["kind"] == "exclusive"
    assert manifest["version"] not in {"", "0"}  # the vendored provider's own version
    assert (plugin_dir / "__init__.py").is_file()
    vendor = plugin_dir / "vendor"
    assert (vendor / "hermes_core" / "__init__.py").is_file()
    assert (vendor / f"hermes_memory_{name}").is_dir()
    # pip put OUR console script here, inside the plugin, not into the environment's bin/
    assert (vendor / "bin" / "hermes-memory").is_file()
    # our inbound discovery does not offer our own exports back to us
    assert all(p.name != f"hermes-core-{name}" for p in list_hermes_agent_providers(home))
    return plugin_dir


def test_hermes_agent_runs_our_holographic_provider(agent_home: Path) -> None:
    script_before = hermes_agent_script()
    bin_before = bin_snapshot()
    report = export(agent_home, "holographic", "--set", "auto_extract=true")
    plugin_dir = check_export(agent_home, report, "holographic")
    assert bin_snapshot() == bin_before  # nothing in bin/ was added, removed or rewritten
    assert hermes_agent_script() == script_before
    version = subprocess.run([str(BIN / "hermes"), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and "Hermes Agent v0.19.0" in version.stdout

    out = drive(
        agent_home,
        "hermes-core-holographic",
        [
            ["I always drink oolong tea in the morning", "Noted."],
            ["我一直喜欢在晚上练习书法", "好的。"],
        ],
        ["tea", "书法"],
        note="Prefers green tea after lunch",
    )
    assert "hermes-core-holographic" in out["discovered"]
    assert "agent.memory_provider.MemoryProvider" in out["bases"]  # Hermes Agent's own ABC
    assert out["available"] is True
    assert out["tools"] == ["fact_feedback", "fact_store"]
    assert out["flushed"] is True
    # holographic has no per-turn sync (facts are curated): the mirrored memory write is
    # recalled at once, and the stated preferences once auto_extract ran at session end
    assert "green tea" in out["recall"]["tea"]
    assert "oolong" in out["recall_next_session"]["tea"]
    assert "书法" in out["recall_next_session"]["书法"]
    assert out["tool"]["results"] if "results" in out["tool"] else out["tool"]
    assert out["hermes_core"].startswith(str(plugin_dir / "vendor"))
    # our data lives under $HERMES_HOME/hermes-core, nothing of Hermes Agent's was touched
    assert (agent_home / "hermes-core" / "config.yaml").is_file()
    assert not (agent_home / "state.db").exists()


def test_hermes_agent_runs_our_chroma_provider(agent_home: Path) -> None:
    script_before = hermes_agent_script()
    report = export(agent_home, "chroma")
    plugin_dir = check_export(agent_home, report, "chroma")
    assert hermes_agent_script() == script_before

    out = drive(
        agent_home,
        "hermes-core-chroma",
        [
            ["I always drink oolong tea in the morning", "Noted, oolong in the morning."],
            ["我每天晚上都练习书法", "好的，记住了。"],
        ],
        ["what tea do I drink in the morning?", "我晚上练习什么？"],
    )
    assert out["available"] is True
    assert {"chroma_search", "chroma_remember"} <= set(out["tools"])
    assert out["flushed"] is True
    assert "oolong" in out["recall"]["what tea do I drink in the morning?"]  # synced, recalled
    assert "书法" in out["recall"]["我晚上练习什么？"]
    assert "oolong" in json.dumps(out["tool"], ensure_ascii=False)
    assert "书法" in out["recall_next_session"]["我晚上练习什么？"]  # persisted on disk
    assert out["hermes_core"].startswith(str(plugin_dir / "vendor"))


def test_export_refuses_a_bad_plugin_name(agent_home: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "memory",
            "export-to-hermes-agent",
            "chroma",
            "--hermes-home",
            str(agent_home),
            "--python",
            sys.executable,
            "--plugin-name",
            "../escape",
        ],
    )
    assert result.exit_code != 0 and "invalid plugin name" in result.output
    assert not (agent_home / "plugins").exists() or not any((agent_home / "plugins").iterdir())
