"""The provider against the REAL ``brv`` (byterover-cli 3.14.0 from npm), offline.

brv starts a local daemon whose start-up fetches ByteRover's OIDC discovery document; its
service URLs come from ``BRV_*_BASE_URL`` variables, so the tests point them at a loopback
stub that answers the discovery request (and 404 to anything else). Its LLM provider is
hermes-core's loopback OpenAI-compatible fake (``brv providers connect openai-compatible``).
Everything else — the CLI, the daemon, the context tree, BM25 search, tiered query — is the
real program. Each test gets its own ``HOME`` (brv keeps its daemon and settings there); the
daemons started are killed by pid at the end.

Runs when ``HERMES_TEST_REAL_BRV`` names a brv binary: ``tox -e providers-byterover``
installs byterover-cli 3.14.0 into the env with npm (``tests/install_brv.py``) and sets it;
skipped (with the reason) when node/npm are missing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_memory_byterover import ByteRoverProvider

from hermes_core.testing.fake_llm import FakeLLMServer
from hermes_core.testing.harness import ProviderHarness
from hermes_core.testing.loopback import LoopbackServer

REAL_BRV = os.environ.get("HERMES_TEST_REAL_BRV", "")
SERVICE_VARS = (
    "BRV_IAM_BASE_URL",
    "BRV_COGIT_BASE_URL",
    "BRV_BILLING_BASE_URL",
    "BRV_LLM_BASE_URL",
    "BRV_WEB_APP_URL",
    "BRV_GIT_REMOTE_BASE_URL",
    "BRV_UI_SOURCE",
)
SLOW = 120.0  # seconds per brv command: node + ~1000 packages on a loaded 2-core machine

pytestmark = pytest.mark.skipif(
    not (REAL_BRV and Path(REAL_BRV).is_file()),
    reason="no real brv: node/npm missing, or HERMES_TEST_REAL_BRV unset (`tox -e "
    "providers-byterover` installs byterover-cli 3.14.0 with npm when node/npm exist)",
)


def _discovery_stub() -> LoopbackServer:
    stub = LoopbackServer(name="byterover-iam")

    def discovery(_req: object) -> dict[str, str]:
        base = stub.base_url
        return {
            "issuer": f"{base}/api/v1/oidc",
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
        }

    stub.route("GET", "/api/v1/oidc/.well-known/openid-configuration", discovery)
    return stub


def _kill_daemons(home: Path) -> None:
    info = home / ".local" / "share" / "brv" / "daemon.json"
    try:
        pid = int(json.loads(info.read_text(encoding="utf-8"))["pid"])
    except (OSError, ValueError, KeyError):
        return
    try:
        os.killpg(pid, signal.SIGKILL)  # the daemon leads its own group (agents included)
    except (ProcessLookupError, PermissionError):
        pass


@pytest.fixture
def real_brv(
    tmp_path: Path, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ProviderHarness]:
    home = tmp_path / "brv-home"
    home.mkdir()
    with _discovery_stub() as stub, FakeLLMServer() as llm:
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("BRV_DISABLE_AUTOUPDATE", "true")
        monkeypatch.setenv("HERMES_MEMORY__PREFETCH_TIMEOUT", str(SLOW))
        for name in SERVICE_VARS:
            monkeypatch.setenv(name, stub.base_url)
        try:
            connect = subprocess.run(
                [
                    REAL_BRV,
                    "providers",
                    "connect",
                    "openai-compatible",
                    "--base-url",
                    llm.base_url,
                    "--api-key",
                    "sk-loopback",
                    "--model",
                    llm.model,
                    "--format",
                    "json",
                ],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=SLOW,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            assert '"success":true' in connect.stdout, connect.stdout + connect.stderr
            harness = ProviderHarness(
                ByteRoverProvider,
                hermes_home,
                {
                    "brv_path": REAL_BRV,
                    "timeout_query": SLOW,
                    "timeout_curate": SLOW,
                    "timeout_status": SLOW,
                    "curate_detach": False,
                },
            )
            yield harness
            harness.close()
        finally:
            _kill_daemons(home)


def _seed_tree(workdir: Path) -> None:
    """A context-tree entry as brv's curate would leave it (its LLM cannot be faked into
    writing one)."""
    topic = workdir / ".brv" / "context-tree" / "infrastructure" / "database"
    topic.mkdir(parents=True, exist_ok=True)
    (topic / "staging_database.md").write_text(
        "---\ntitle: Staging database\n---\n# Staging database\n\n"
        "The staging database listens on port 5433. 预发布数据库监听 5433 端口。\n",
        encoding="utf-8",
    )


def test_status_search_query_and_curate_with_the_real_brv(real_brv: ProviderHarness) -> None:
    harness = real_brv
    provider = harness.provider
    assert isinstance(provider, ByteRoverProvider)
    status = json.loads(harness.session.call_tool("brv_status", {}))
    assert status["success"] is True, status
    assert status["status"]["cliVersion"] == "3.14.0"
    workdir = provider.workdir(harness.session.info)
    assert Path(status["status"]["projectRoot"]) == workdir
    _seed_tree(workdir)

    # brv query: tier-2 direct match from the tree, through the provider's prefetch
    context = harness.prefetch("Which port does the staging database listen on?")
    assert context is not None and "5433" in context.text, context
    assert context.text.startswith("## ByteRover Context")

    # brv search (BM25), through the tool path's sibling: the recall_command setting
    provider.settings = provider.settings.model_copy(update={"recall_command": "search"})
    found = harness.prefetch("staging database port")
    assert found is not None and "staging_database.md" in found.text

    # another user's tree is another directory: nothing found there
    other = harness.host.session(source="test", user_id="someone-else")
    try:
        assert "5433" not in other.before_turn("Which port does the staging database use?")
    finally:
        other.close()

    # curate runs brv's curation agent end to end (against the loopback LLM)
    curated = json.loads(
        harness.session.call_tool("brv_curate", {"content": "Deploys happen on Thursdays."})
    )
    assert curated["success"] is True, curated
