"""The provider against the REAL OpenViking server (``openviking==0.5.2``, AGPL, from PyPI).

``openviking-server`` runs here as a subprocess on 127.0.0.1 in trusted mode, with its
embedding model and VLM pointed at hermes-core's loopback OpenAI-compatible fake
(deterministic hashed bag-of-words embeddings), so nothing leaves the machine. Skipped with
a reason when the server is not installed (``pip install 'hermes-memory-openviking[server]'``);
``tox -e providers-openviking-server`` installs it and runs this module.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hermes_memory_openviking import OpenVikingProvider

from hermes_core.testing.contract import ProviderContract
from hermes_core.testing.fake_llm import FakeLLMServer
from hermes_core.testing.harness import ProviderHarness
from hermes_core.testing.loopback import free_port
from hermes_core.testing.service_faults import crossover
from hermes_core.types import MemoryWrite

ROOT_KEY = "real-root-key"
EMBED_DIM = 64
START_TIMEOUT = 120.0


def _server_binary() -> str | None:
    beside = Path(sys.executable).parent / "openviking-server"
    return str(beside) if beside.exists() else shutil.which("openviking-server")


pytestmark = pytest.mark.skipif(
    _server_binary() is None,
    reason="openviking-server is not installed: pip install 'hermes-memory-openviking[server]' "
    "or run `tox -e providers-openviking-server`",
)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as resp:
            return bool(json.loads(resp.read()).get("healthy"))
    except OSError:
        return False


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a running openviking-server (trusted mode, root key ROOT_KEY)."""
    root = tmp_path_factory.mktemp("openviking")
    with FakeLLMServer(embedding_dim=EMBED_DIM) as llm:
        port = free_port()
        conf = {
            "storage": {"workspace": str(root / "data")},
            "embedding": {
                "dense": {
                    "provider": "openai",
                    "model": "fake-embed",
                    "api_key": "unused",
                    "api_base": llm.base_url,
                    "dimension": EMBED_DIM,
                    "input": "text",
                }
            },
            "vlm": {
                "provider": "openai",
                "model": "fake-vlm",
                "api_key": "unused",
                "api_base": llm.base_url,
            },
            "server": {
                "host": "127.0.0.1",
                "port": port,
                "auth_mode": "trusted",
                "root_api_key": ROOT_KEY,
            },
        }
        conf_path = root / "ov.conf"
        conf_path.write_text(json.dumps(conf), encoding="utf-8")
        log_path = root / "server.log"
        env = {
            **os.environ,
            "HOME": str(root),
            "OPENVIKING_CONFIG_FILE": str(conf_path),
            "NO_PROXY": "127.0.0.1,localhost",
        }
        binary = _server_binary()
        assert binary is not None
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                [binary, "--config", str(conf_path)],
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not _healthy(url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
                    pytest.fail(f"openviking-server did not start:\n{tail}")
                time.sleep(0.5)
            yield url
        finally:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)


def _settings(url: str, **extra: Any) -> dict[str, Any]:
    return {"url": url, "api_key": ROOT_KEY, "account": "acme", "timeout": 30.0, **extra}


class TestRealServerContract(ProviderContract):
    """Every contract check, against the real server. Facts are stored the way OpenViking
    indexes them without its extraction LLM: a mirrored memory write (``content/write``)."""

    provider_class = OpenVikingProvider
    remember_via = "memory_write"
    settings: ClassVar[dict[str, Any]] = {}

    @pytest.fixture
    def harness(self, real_harness: ProviderHarness) -> ProviderHarness:
        return real_harness


_counter = iter(range(1_000_000))


def _fresh_user() -> str:
    return f"user-{os.getpid()}-{next(_counter)}"


@pytest.fixture
def real_harness(
    hermes_home: Path, real_server: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ProviderHarness]:
    """A harness on the real server for a user of its own (no test sees another's data)."""
    monkeypatch.setenv("HERMES_MEMORY__PREFETCH_TIMEOUT", "20")
    made = ProviderHarness(
        OpenVikingProvider, hermes_home, _settings(real_server), user_id=_fresh_user()
    )
    yield made
    made.close()


@pytest.fixture
def harness(real_harness: ProviderHarness) -> ProviderHarness:
    return real_harness


def tool(harness: ProviderHarness, tool_name: str, **args: Any) -> dict[str, Any]:
    return json.loads(harness.session.call_tool(tool_name, args))


@crossover
def test_two_users_never_share_on_the_real_server(
    harness: ProviderHarness, fact: str, query: str, expect: str
) -> None:
    ask = query
    stored = tool(harness, "viking_remember", content=fact)
    assert stored["success"] is True, stored
    other = harness.host.session(source="test", user_id=_fresh_user())
    try:
        assert expect not in other.before_turn(ask)
        assert expect not in other.call_tool("viking_search", {"query": ask})
        refused = json.loads(other.call_tool("viking_read", {"uri": stored["uri"]}))
        assert refused["success"] is False
    finally:
        other.close()
    assert expect in harness.session.before_turn(ask)
    assert expect in harness.session.call_tool("viking_search", {"query": ask})


def test_tools_round_trip_on_the_real_server(harness: ProviderHarness) -> None:
    stored = tool(
        harness, "viking_remember", content="The staging database listens on 5433.", category="case"
    )
    uri = stored["uri"]
    assert "/peers/hermes/memories/cases/mem_" in uri
    again = tool(
        harness, "viking_remember", content="The staging database listens on 5433.", category="case"
    )
    assert again["success"] is True  # same text, same file: no duplicate
    read = tool(harness, "viking_read", uri=uri)
    assert "5433" in read["results"][0]["content"]
    tree = tool(harness, "viking_browse", action="tree", path="viking://~/peers/hermes/")
    assert uri in [e["uri"] for e in tree["entries"]]
    stat = tool(harness, "viking_browse", action="stat", path=uri)
    assert stat["success"] is True
    found = tool(harness, "viking_search", query="staging database port", mode="fast")
    assert uri in [r["uri"] for r in found["results"]]
    assert tool(harness, "viking_forget", uri=uri)["status"] == "deleted"
    gone = tool(harness, "viking_read", uri=uri)
    assert gone["success"] is False


def test_memory_replace_is_mirrored_on_the_real_server(harness: ProviderHarness) -> None:
    harness.call("on_memory_write", write=MemoryWrite("add", "user", "Prefers dark roast coffee"))
    harness.call(
        "on_memory_write",
        write=MemoryWrite(
            "replace", "user", "Prefers green tea", previous_content="Prefers dark roast coffee"
        ),
    )
    context = harness.prefetch("What does the user prefer to drink, coffee or tea?")
    assert context is not None and "green tea" in context.text
    assert "dark roast" not in context.text


def test_sync_and_session_commit_are_accepted_by_the_real_server(
    harness: ProviderHarness,
) -> None:
    harness.sync("We release every Thursday evening.", "Noted: Thursday evening releases.")
    harness.sync("发布前需要跑完整的集成测试。", "好的。")
    harness.call("on_session_end", messages=[], reason="exit")  # raises if the server refuses


def test_wrong_key_is_a_clear_error(hermes_home: Path, real_server: str) -> None:
    harness = ProviderHarness(
        OpenVikingProvider, hermes_home, _settings(real_server, api_key="wrong", retries=0)
    )
    try:
        error = tool(harness, "viking_search", query="anything")["error"]
        assert "OPENVIKING_API_KEY" in error and "401" in error, error
    finally:
        harness.close()
