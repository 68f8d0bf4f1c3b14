"""Inbound bridge, issue 27: optional hooks a provider lacks are absent (point 8), and
providers get the ``agent_identity``/``agent_workspace`` Hermes Agent passes (point 7).

Point 8 runs the real ``hermes-memoryrouter`` 0.1.1 as it runs next to hermes-core WITHOUT
Hermes Agent: ``agent.memory_provider`` cannot be imported, so the package falls back to its
own base class, which has no ``on_turn_start``. Point 7 drives a provider that scopes every
memory by (agent_identity, agent_workspace) (a Hermes Agent plugin directory, as its users
write them) from both programs on one home: Hermes Agent's own ``AIAgent`` start-up code
(``agent.agent_init``) and our host, each recalling what the other wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("agent.memory_provider", reason="needs hermes-agent (tox -e hermes-agent)")
pytest.importorskip("hermes_memoryrouter", reason="needs hermes-memoryrouter")

from bridge_kit import MemoryRouterDouble

from hermes_core import MemoryHost
from hermes_core.cli.main import cli
from hermes_core.compat.bridge_inbound import agent_identity_for
from hermes_core.testing.loopback import LoopbackServer

MR_KEY = "mk_test_key"

WITHOUT_HERMES_AGENT = r"""
import json, logging, sys
sys.modules["agent.memory_provider"] = None  # hermes-core installed without Hermes Agent
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append({"level": record.levelname, "text": record.getMessage()})
logging.getLogger().addHandler(Keep(level=logging.WARNING))
from click.testing import CliRunner
from hermes_core import MemoryHost
from hermes_core.cli.main import cli
use = CliRunner().invoke(cli, ["memory", "use", "memoryrouter"], catch_exceptions=False)
import hermes_memoryrouter.provider as mr
host = MemoryHost.open()
try:
    with host.session(user_id="alice") as s:
        for text in ("I keep my bike in the garage", "我把自行车放在车库里"):
            s.before_turn(text)
            s.after_turn(text, "Noted.", [
                {"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}])
        host.facade.flush(10)
        recalled = s.before_turn("where is my bike?")
finally:
    host.close()
print("RESULT " + json.dumps({
    "use": use.output,
    "has_on_turn_start": hasattr(mr.MemoryRouterMemoryProvider, "on_turn_start"),
    "records": records,
    "recalled": recalled,
}, ensure_ascii=False))
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


@pytest.fixture
def memoryrouter(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryRouterDouble]:
    with LoopbackServer() as server:
        monkeypatch.setenv("MEMORYROUTER_BASE_URL", server.base_url)
        monkeypatch.setenv("MEMORYROUTER_API_KEY", MR_KEY)
        yield MemoryRouterDouble(server, MR_KEY)


def result_of(proc: subprocess.CompletedProcess[str]) -> dict:  # type: ignore[type-arg]
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT ") :])  # type: ignore[no-any-return]


def test_missing_optional_hooks_are_absent_not_errors(
    home: Path, memoryrouter: MemoryRouterDouble
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_HERMES_AGENT],
        capture_output=True,
        text=True,
        env={**os.environ, "HERMES_HOME": str(home)},
        timeout=300,
    )
    out = result_of(proc)
    assert "available ✓" in out["use"]
    assert out["has_on_turn_start"] is False  # the provider really lacks the hook
    assert [r for r in out["records"] if r["level"] in {"ERROR", "CRITICAL"}] == []
    assert not any("on_turn_start" in r["text"] for r in out["records"])
    # the hooks it has still ran: both turns stored, recalled on the next turn
    assert len(memoryrouter.stored) == 2
    assert "garage" in out["recalled"]
    assert memoryrouter.violations == []


# -- point 7: agent_identity / agent_workspace ----------------------------------------------

SCOPED_PROVIDER = '''
"""A provider that files every memory under (agent_identity, agent_workspace), as
hermes-memory-pgvector and other multi-agent providers do."""
import json, os, threading
from pathlib import Path
from agent.memory_provider import MemoryProvider

_LOCK = threading.Lock()


class ScopedProvider(MemoryProvider):
    name = "scoped"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        self.file = Path(kwargs["hermes_home"]) / "scoped-memories.json"
        self.scope = f"{kwargs.get('agent_identity')}/{kwargs.get('agent_workspace')}"
        self.seen = json.dumps(sorted(k for k in kwargs if k.startswith("agent_")))

    def _rows(self):
        return json.loads(self.file.read_text()) if self.file.exists() else []

    def sync_turn(self, user_content, assistant_content, *, session_id="", messages=None):
        with _LOCK:
            rows = self._rows() + [{"scope": self.scope, "text": user_content}]
            self.file.write_text(json.dumps(rows, ensure_ascii=False))

    def prefetch(self, query, *, session_id=""):
        mine = [r["text"] for r in self._rows() if r["scope"] == self.scope]
        return "\\n".join(mine)

    def get_tool_schemas(self):
        return []


def register(ctx):
    ctx.register_memory_provider(ScopedProvider())
'''

# Hermes Agent's own start-up path computes the kwargs (agent.agent_init: the profile name,
# "hermes"), then its MemoryManager writes one turn and recalls.
HERMES_AGENT_SIDE = r"""
import json, sys
from agent.memory_manager import MemoryManager
from plugins.memory import load_memory_provider
from hermes_cli.profiles import get_active_profile_name
from hermes_constants import get_hermes_home
manager = MemoryManager()
manager.add_provider(load_memory_provider("scoped"))
manager.initialize_all(session_id="ha-1", platform="cli", hermes_home=str(get_hermes_home()),
                       agent_context="primary", agent_identity=get_active_profile_name(),
                       agent_workspace="hermes")
manager.sync_all(sys.argv[1], "Noted.")
manager.flush_pending(30)
recall = manager.prefetch_all(sys.argv[2])
manager.shutdown_all()
print("RESULT " + json.dumps({"recall": recall, "identity": get_active_profile_name()},
                             ensure_ascii=False))
"""


def hermes_agent_turn(home: Path, fact: str, probe: str) -> dict:  # type: ignore[type-arg]
    proc = subprocess.run(
        [sys.executable, "-c", HERMES_AGENT_SIDE, fact, probe],
        capture_output=True,
        text=True,
        env={**os.environ, "HERMES_HOME": str(home)},
        cwd=home,
        timeout=300,
    )
    return result_of(proc)


def our_turn(home: Path, fact: str, probe: str) -> str:
    host = MemoryHost.open(home)
    try:
        with host.session(user_id="alice") as s:
            s.after_turn(fact, "Noted.", [{"role": "user", "content": fact}])
            host.facade.flush(10)
            return s.before_turn(probe)
    finally:
        host.close()


@pytest.mark.parametrize("profile", [None, "coder"], ids=["default-home", "profile"])
def test_memories_cross_between_hermes_agent_and_us(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str | None
) -> None:
    root = tmp_path / "hermes-root"
    home = root / "profiles" / profile if profile else root
    (home / "plugins" / "scoped").mkdir(parents=True)
    (home / "plugins" / "scoped" / "__init__.py").write_text(SCOPED_PROVIDER, encoding="utf-8")
    (home / "plugins" / "scoped" / "plugin.yaml").write_text(
        "name: scoped\nkind: exclusive\nversion: 1.0.0\n", encoding="utf-8"
    )
    monkeypatch.setenv("HERMES_HOME", str(home))
    result = CliRunner().invoke(cli, ["memory", "use", "scoped"], catch_exceptions=False)
    assert result.exit_code == 0 and "available ✓" in result.output, result.output

    theirs = hermes_agent_turn(home, "I always drink oolong tea", "tea")
    assert theirs["identity"] == (profile or "default")
    assert agent_identity_for(home) == theirs["identity"]  # ours agrees with theirs
    # written by Hermes Agent, recalled here; written here, recalled by Hermes Agent
    assert "oolong" in our_turn(home, "我每天晚上练习书法", "tea")
    again = hermes_agent_turn(home, "Prefers green tea after lunch", "书法")
    assert "书法" in again["recall"]
    rows = json.loads((home / "scoped-memories.json").read_text(encoding="utf-8"))
    assert {r["scope"] for r in rows} == {f"{profile or 'default'}/hermes"}


def test_identity_and_workspace_are_configurable(home: Path) -> None:
    (home / "plugins" / "scoped").mkdir(parents=True)
    (home / "plugins" / "scoped" / "__init__.py").write_text(SCOPED_PROVIDER, encoding="utf-8")
    args = ["memory", "use", "scoped", "--set", "agent_identity=ops", "--set", "agent_workspace=w"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    our_turn(home, "the deploy key rotates monthly", "deploy")
    rows = json.loads((home / "scoped-memories.json").read_text(encoding="utf-8"))
    assert rows == [{"scope": "ops/w", "text": "the deploy key rotates monthly"}]
    assert not (home / "scoped.json").exists()  # our identity keys are not the provider's
