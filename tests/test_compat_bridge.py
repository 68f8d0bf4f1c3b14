"""The Hermes Agent bridges without Hermes Agent: discovery, the inbound adapter and the
outbound adapter, driven with a provider written to Hermes Agent's interface in a real plugin
directory (``$HERMES_HOME/plugins/notebook/``) and real dist-info entry points.

The real registry packages and Hermes Agent itself are exercised in ``tests/compat`` (the
``hermes-agent`` tox env); these run in every env and pin the mapping, precedence, isolation,
failure handling and messages.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from hermes_core import MemoryHost, MemoryWrite
from hermes_core.cli.main import cli
from hermes_core.compat.bridge_discovery import (
    EXPORT_MARKER,
    ORIGIN_DIR,
    ORIGIN_MEMORY_EP,
    ORIGIN_PLUGIN_EP,
    list_hermes_agent_providers,
)
from hermes_core.compat.bridge_inbound import HermesAgentProvider, settings_model
from hermes_core.compat.bridge_install import ExportError, export_provider, vendored_requirements
from hermes_core.compat.bridge_outbound import CoreProviderBridge
from hermes_core.errors import ConfigError, ProviderConflictError
from hermes_core.providers.base import load_provider_settings
from hermes_core.providers.registry import find_entry_point

NOTEBOOK = '''
"""A memory provider written to Hermes Agent's MemoryProvider interface (duck-typed)."""
import json
import threading
import time

from .store import GATE, LOG, NOTES


class NotebookProvider:
    def __init__(self):
        self.session_id = ""
        self.user = None

    @property
    def name(self):
        return "NAME"

    def is_available(self):
        import os
        return bool(os.environ.get("NOTEBOOK_API_KEY"))

    def unavailable_reason(self):
        return "NOTEBOOK_API_KEY is not set"

    def initialize(self, session_id, **kwargs):
        if kwargs.get("user_id") == "slow":
            LOG.append(("handshake", session_id))
            GATE.wait(30)  # a slow handshake
        self.session_id, self.user = session_id, kwargs.get("user_id")
        LOG.append(("initialize", session_id, kwargs.get("user_id"), kwargs.get("platform"),
                    kwargs.get("agent_context"), bool(kwargs.get("hermes_home"))))

    def system_prompt_block(self):
        return "# Notebook\\nActive for " + str(self.user)

    def prefetch(self, query, *, session_id=""):
        if "HANG" in query:
            time.sleep(3)
        if "BOOM" in query:
            raise RuntimeError("prefetch exploded")
        words = set(query.replace("?", " ").split())
        hits = [t for u, t in NOTES if u == self.user and (words & set(t.split()) or
                any(ch in t for ch in query if ord(ch) > 0x3000))]
        return "\\n".join("- " + h for h in hits)

    def queue_prefetch(self, query, *, session_id=""):
        LOG.append(("queue_prefetch", query, session_id))

    def sync_turn(self, user_content, assistant_content, *, session_id=""):
        if "BOOM" in user_content:
            raise RuntimeError("sync exploded")
        NOTES.append((self.user, user_content))

    def get_tool_schemas(self):
        return [{"type": "function", "function": {
            "name": "notebook_search", "description": "Search notes.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]

    def handle_tool_call(self, tool_name, args, **kwargs):
        hits = [t for u, t in NOTES if u == self.user and args["q"] in t]
        return {"user": self.user, "hits": hits}

    def on_turn_start(self, turn_number, message, **kwargs):
        LOG.append(("turn_start", turn_number, message))

    def on_session_end(self, messages):
        LOG.append(("session_end", self.session_id, len(messages)))

    def on_pre_compress(self, messages):
        return "notebook kept: " + str(len(messages))

    def on_memory_write(self, action, target, content):
        LOG.append(("memory_write", action, target, content))

    def get_config_schema(self):
        return [
            {"key": "api_key", "description": "Notebook key", "secret": True, "required": True,
             "env_var": "NOTEBOOK_API_KEY", "url": "https://notebook.invalid/keys"},
            {"key": "mode", "description": "Where notes live", "default": "local",
             "choices": ["local", "cloud"]},
            {"key": "bad key", "description": "not an identifier"},
        ]

    def save_config(self, values, hermes_home):
        from pathlib import Path
        Path(hermes_home, "notebook.json").write_text(json.dumps(values))

    def shutdown(self):
        LOG.append(("shutdown", self.session_id))


def register(ctx):
    ctx.register_tool("ignored", {}, lambda: None)   # non-memory registrations are ignored
    ctx.register_memory_provider(NotebookProvider())
'''


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.delenv("NOTEBOOK_API_KEY", raising=False)
    yield home
    for name in [m for m in sys.modules if m.startswith("_hermes_core_ha_plugins.")]:
        del sys.modules[name]


def write_plugin(home: Path, name: str = "notebook", version: str = "2.0") -> Path:
    plugin = home / "plugins" / name
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(NOTEBOOK.replace("NAME", name), encoding="utf-8")
    (plugin / "store.py").write_text(
        "import threading\nLOG = []\nNOTES = []\nGATE = threading.Event()\n", encoding="utf-8"
    )
    (plugin / "plugin.yaml").write_text(
        yaml.safe_dump({"name": name, "version": version, "description": "notes"}), encoding="utf-8"
    )
    return plugin


def plugin_module(name: str = "notebook") -> Any:
    return sys.modules[f"_hermes_core_ha_plugins.{name}.store"]


def hermes(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    done = threading.Event()
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return
        done.wait(0.02)
    raise AssertionError("condition not met in time")


# -- discovery --------------------------------------------------------------------------


@pytest.fixture
def agent_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Write an installed distribution with Hermes Agent entry points (dist-info + RECORD)."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))

    def make(dist: str, group: str, name: str, module: str, source: str) -> None:
        info = root / f"{dist.replace('-', '_')}-1.2.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2\n")
        (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {module}:register\n")
        (root / module).mkdir()
        (root / module / "__init__.py").write_text(source, encoding="utf-8")
        (info / "RECORD").write_text(f"{module}/__init__.py,,\n{info.name}/METADATA,,\n")

    return make


def test_plugin_dirs_and_entry_points_are_listed_without_import(
    home: Path, agent_distribution: Callable[..., None]
) -> None:
    write_plugin(home)
    (home / "plugins" / "dashboard").mkdir()  # another kind of Hermes Agent plugin
    (home / "plugins" / "dashboard" / "__init__.py").write_text("def register(ctx): pass\n")
    ours = write_plugin(home, "hermes-core-chroma")
    (ours / "plugin.yaml").write_text(yaml.safe_dump({EXPORT_MARKER: {"provider": "chroma"}}))
    agent_distribution("hermes-weather", "hermes_agent.plugins", "weather", "weather_pkg",
                       "def register(ctx):\n    ctx.register_tool('weather')\n")  # fmt: skip
    agent_distribution("hermes-jotter", "hermes_agent.plugins", "jotter", "jotter_pkg",
                       "raise SystemExit('imported!')\n# register_memory_provider\n")  # fmt: skip
    agent_distribution("hermes-scribe", "hermes_agent.memory_providers", "scribe", "scribe_pkg",
                       "raise SystemExit('imported!')\n")  # fmt: skip

    mine = {"notebook", "dashboard", "hermes-core-chroma", "weather", "jotter", "scribe"}
    found = {(p.name, p.origin): p for p in list_hermes_agent_providers(home) if p.name in mine}
    assert set(found) == {
        ("notebook", ORIGIN_DIR),
        ("jotter", ORIGIN_PLUGIN_EP),
        ("scribe", ORIGIN_MEMORY_EP),
    }
    assert found[("notebook", ORIGIN_DIR)].version == "2.0"
    assert found[("jotter", ORIGIN_PLUGIN_EP)].distribution == "hermes-jotter"
    assert not any(m.startswith(("_hermes_core_ha_plugins", "jotter_pkg", "scribe_pkg"))
                   for m in sys.modules)  # fmt: skip

    listed = json.loads(hermes("memory", "list", "--json"))
    assert {(r["name"], r["origin"]) for r in listed} >= {
        ("notebook", ORIGIN_DIR),
        ("scribe", ORIGIN_MEMORY_EP),
    }


def test_a_native_provider_wins_over_a_hermes_agent_one_of_the_same_name(
    home: Path, fake_distribution: Callable[..., Path]
) -> None:
    fake_distribution(
        "hermes-memory-recording", providers={"recording": "providers_for_tests:RecordingProvider"}
    )
    write_plugin(home, "recording")
    assert find_entry_point("recording").origin == "entry point"
    origins = [r["origin"] for r in json.loads(hermes("memory", "list", "--json"))
               if r["name"] == "recording"]  # fmt: skip
    assert origins == ["entry point", ORIGIN_DIR]


# -- the inbound adapter ------------------------------------------------------------------


def test_settings_model_from_a_config_schema(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    schema = [
        {"key": "api_key", "description": "Key", "secret": True, "required": True,
         "env_var": "NB_KEY"},
        {"key": "token", "description": "Token", "secret": True},
        {"key": "mode", "description": "Mode", "default": "local", "choices": ["local", "cloud"]},
        {"key": "1bad", "description": "skipped"},
    ]  # fmt: skip
    model = settings_model("note-book", schema)
    assert list(model.model_fields) == [
        "api_key",
        "token",
        "mode",
        "agent_identity",
        "agent_workspace",
    ]
    monkeypatch.setenv("NB_KEY", "k-1")
    monkeypatch.setenv("NOTE_BOOK_TOKEN", "t-1")  # Hermes Agent's default env name
    settings = model(mode="cloud")
    assert settings.api_key.get_secret_value() == "k-1"  # type: ignore[attr-defined]
    assert settings.token.get_secret_value() == "t-1"  # type: ignore[attr-defined]
    assert model(mode="local").mode == "local"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"memory.providers.note-book.mode"):
        load_provider_settings(model, "note-book", tmp_path, {"mode": "moon"})
    assert model.model_fields["mode"].json_schema_extra == {
        "setup": "advanced",
        "choices": ["local", "cloud"],
    }


@pytest.mark.parametrize(
    ("fact", "query", "probe"),
    [("I park the bike in the garage", "where is the bike?", "garage"),
     ("我把自行车放在车库里", "自行车在哪里？", "车库")],
    ids=["en", "zh"],
)  # fmt: skip
def test_full_cycle_one_instance_per_session(
    home: Path, monkeypatch: pytest.MonkeyPatch, fact: str, query: str, probe: str
) -> None:
    write_plugin(home)
    monkeypatch.setenv("NOTEBOOK_API_KEY", "nb-key")
    out = hermes("memory", "use", "notebook", "--set", "mode=cloud")
    assert "available ✓" in out
    assert json.loads((home / "notebook.json").read_text()) == {"mode": "cloud"}  # save_config
    host = MemoryHost.open(home)
    try:
        provider = host.provider
        assert isinstance(provider, HermesAgentProvider) and provider.name == "notebook"
        with pytest.raises(ProviderConflictError):
            host.registry.activate("other")
        alice = host.session(user_id="alice", source="telegram")
        bob = host.session(user_id="bob")
        assert "# Notebook\nActive for alice" in alice.system_prompt()
        assert "notebook_search" in [t["function"]["name"] for t in alice.tool_schemas()]
        alice.before_turn(fact)
        alice.after_turn(fact, "ok", [{"role": "user", "content": fact}])
        host.facade.flush(10)
        block = alice.before_turn(query)
        assert probe in block and block.startswith("<memory-context>")
        assert probe not in bob.before_turn(query)  # another user, another instance
        hits = json.loads(alice.call_tool("notebook_search", {"q": probe}))
        assert hits == {"user": "alice", "hits": [fact]}
        assert json.loads(bob.call_tool("notebook_search", {"q": probe})) == {
            "user": "bob",
            "hits": [],
        }
        alice.notify_memory_write(MemoryWrite(action="add", target="user", content=probe))
        alice.close([{"role": "user", "content": fact}])
        host.facade.flush(10)
        log = plugin_module().LOG
        inits = [entry for entry in log if entry[0] == "initialize"]
        assert ("initialize", alice.id, "alice", "telegram", "primary", True) in inits
        assert ("initialize", bob.id, "bob", "cli", "primary", True) in inits
        assert ("queue_prefetch", fact, alice.id) in log  # after the turn, for the next one
        assert ("memory_write", "add", "user", probe) in log  # no metadata: older signature
        assert ("session_end", alice.id, 1) in log and ("shutdown", alice.id) in log
        assert ("shutdown", bob.id) not in log  # bob's session is still open
    finally:
        host.close()
    assert ("shutdown", bob.id) in plugin_module().LOG


def test_failures_and_hangs_never_fail_a_turn(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_plugin(home)
    monkeypatch.setenv("NOTEBOOK_API_KEY", "nb-key")
    monkeypatch.setenv("HERMES_MEMORY__PREFETCH_TIMEOUT", "0.3")
    hermes("memory", "use", "notebook")
    host = MemoryHost.open(home)
    try:
        with host.session(user_id="alice") as s:
            assert s.before_turn("BOOM where is it") == ""
            s.after_turn("BOOM note", "ok", [])  # sync raises on the worker: logged, skipped
            assert s.before_turn("HANG where is it") == ""  # past the timeout: skipped
            s.after_turn("a fine note", "ok", [])
            host.facade.flush(10)
            assert (None, "a fine note") not in plugin_module().NOTES
            assert ("alice", "a fine note") in plugin_module().NOTES
    finally:
        host.close()


def test_unavailable_and_broken_plugins_say_what_to_do(home: Path) -> None:
    write_plugin(home)
    out = hermes("memory", "use", "notebook")
    assert "not available" in out and "NOTEBOOK_API_KEY is not set" in out
    broken = home / "plugins" / "broken"
    broken.mkdir()
    (broken / "__init__.py").write_text("def register(ctx):\n    pass  # MemoryProvider\n")
    result = CliRunner().invoke(cli, ["memory", "use", "broken"])
    assert result.exit_code != 0
    assert "registered no memory provider" in result.output and "broken" in result.output


# -- the outbound adapter (Hermes Agent's side, duck-typed here) ---------------------------


def test_outbound_bridge_maps_hermes_agent_calls_onto_our_provider(
    home: Path, fake_distribution: Callable[..., Path]
) -> None:
    fake_distribution(
        "hermes-memory-recording", providers={"recording": "providers_for_tests:RecordingProvider"}
    )
    bridge = CoreProviderBridge("recording", "hermes-core-recording")
    assert bridge.name == "hermes-core-recording"
    # Hermes Agent asks for tools in add_provider, before initialize
    # (its "memory" tool would shadow a core tool name: refused here too)
    assert [t["name"] for t in bridge.get_tool_schemas()] == ["recording_echo"]
    schema = {f["key"]: f for f in bridge.get_config_schema()}
    assert schema["api_key"]["secret"] is True
    assert schema["api_key"]["env_var"] == "HERMES_MEMORY__PROVIDERS__RECORDING__API_KEY"
    assert schema["mode"]["default"] == "local" and schema["top_k"]["default"] == 5
    bridge.save_config({"top_k": 7}, str(home))
    assert yaml.safe_load((home / "hermes-core" / "config.yaml").read_text())["memory"] == {
        "providers": {"recording": {"top_k": 7}},
        "provider": "recording",
    }
    assert bridge.is_available() is True

    bridge.initialize("ha-1", hermes_home=str(home), platform="discord", user_id="u7")
    bridge.sync_turn("I keep the spare key under the mat", "Noted.")
    bridge.sync_turn("我把备用钥匙放在门垫下面", "好的。")
    bridge.on_memory_write("add", "user", "likes tea")
    bridge.on_memory_write("explode", "nowhere", "ignored")
    assert json.loads(bridge.handle_tool_call("recording_echo", {"a": 1})) == {
        "success": True,
        "echo": {"a": 1},
    }
    assert "error" in json.loads(bridge.handle_tool_call("nope", {}))
    recall = bridge.prefetch("where is the spare key?")
    assert "spare key under the mat" in recall
    bridge.on_session_end([{"role": "user", "content": "x"}])
    provider = bridge._registry.active  # type: ignore[union-attr]
    assert provider is not None and provider.home == home / "hermes-core"
    assert [t.user_text for t in provider.synced][-1] == "我把备用钥匙放在门垫下面"  # type: ignore[attr-defined]
    assert [w.content for w in provider.writes] == ["likes tea"]  # type: ignore[attr-defined]

    bridge.initialize("ha-cron", hermes_home=str(home), agent_context="cron")
    before = len(provider.synced)  # type: ignore[attr-defined]
    bridge.sync_turn("cron prompt", "cron reply")  # cron writes are skipped, as Hermes asks
    bridge.shutdown()
    assert bridge._registry is None
    assert len(provider.synced) == before  # type: ignore[attr-defined]
    assert provider.shutdowns >= 1  # type: ignore[attr-defined]


def test_export_requirements_and_bad_names(tmp_path: Path) -> None:
    vendor = tmp_path / "vendor"
    for name, reqs in {
        "hermes_memory_core": ["pluggy>=1.5", "rich>=13.7", 'pytest>=8; extra == "dev"'],
        "hermes_memory_chroma": ["hermes-memory-core>=0.1,<0.2", "chromadb>=1.0", "rich>=13.7"],
    }.items():
        info = vendor / f"{name}-0.1.0.dist-info"
        info.mkdir(parents=True)
        body = "".join(f"Requires-Dist: {r}\n" for r in reqs)
        dist = name.replace("_", "-")
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\n{body}")
    names, reqs = vendored_requirements(vendor)
    assert names == ["hermes-memory-chroma", "hermes-memory-core"]
    assert reqs == ["chromadb>=1.0", "rich>=13.7", "pluggy>=1.5"]
    with pytest.raises(ExportError, match="invalid plugin name"):
        export_provider("chroma", hermes_home=tmp_path, python=sys.executable, plugin_name="a/b")


def test_export_names_the_python_it_needs(home: Path) -> None:
    result = CliRunner().invoke(cli, ["memory", "export-to-hermes-agent", "chroma"])
    if subprocess.run([sys.executable, "-c", "import hermes_cli, agent"]).returncode == 0:
        pytest.skip("Hermes Agent is installed here: this interpreter is the default")
    assert result.exit_code != 0 and "--python" in result.output


def test_hermes_memory_setup_is_driven_by_get_config_schema(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    write_plugin(home)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        # key, then mode: cloud, then agent_identity / agent_workspace left empty (advanced)
        for press in ("nb-secret-4242", "\r", "\x1b[B", "\r", "\r", "\r"):
            pipe.send_text(press)
        result = CliRunner().invoke(cli, ["memory", "setup", "notebook", "--advanced"])
    assert result.exit_code == 0, result.output
    assert "https://notebook.invalid/keys" in result.output  # the schema's url
    assert "available ✓" in result.output
    env = (home / ".env").read_text()
    assert "NOTEBOOK_API_KEY=nb-secret-4242" in env  # the schema's env_var, as Hermes writes it
    assert "nb-secret" not in (home / "config.yaml").read_text()
    assert json.loads((home / "notebook.json").read_text()) == {"mode": "cloud"}
    monkeypatch.delenv("NOTEBOOK_API_KEY", raising=False)


def test_a_slow_initialize_holds_up_only_its_own_session(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_plugin(home)
    monkeypatch.setenv("NOTEBOOK_API_KEY", "nb-key")
    hermes("memory", "use", "notebook")
    host = MemoryHost.open(home)
    opened: list[Any] = []
    try:
        slow = threading.Thread(target=lambda: opened.append(host.session(user_id="slow")))
        slow.start()
        wait_for(lambda: any(e[0] == "handshake" for e in plugin_module().LOG))
        with host.session(user_id="bob") as bob:  # not blocked behind the slow handshake
            bob.after_turn("bob's note about tea", "ok", [])
            host.facade.flush(10)
        assert ("bob", "bob's note about tea") in plugin_module().NOTES
        assert opened == []  # the slow session is still in its initialize()
        plugin_module().GATE.set()
        slow.join(30)
        assert len(opened) == 1
        opened[0].close()
    finally:
        plugin_module().GATE.set()
        host.close()
