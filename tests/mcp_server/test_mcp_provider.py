"""The active provider behind the MCP server: its tools are offered, each request reaches it
in the user scope of the token that sent it, and a provider that hangs is bounded (recall by
``memory.prefetch_timeout`` as in the agent loop, tool calls by ``mcp.tool_timeout``)."""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client
from mcp_helpers import HttpServer, http_client, stdio_params, tool_json

from hermes_core.mcp.tokens import TokenStore

HANG_SECONDS = 300  # far longer than any bound below: a call that is not bounded fails the test
BOUND = 90  # what the test waits at most for a bounded answer (generous on a busy machine)

PROVIDER = f"""
import json
import threading
from hermes_core import MemoryContext, MemoryProvider, ToolSpec, hookimpl
from hermes_core.tool_results import tool_error

RELEASE = threading.Event()


class Hanging(MemoryProvider):
    name = "hanging"

    @hookimpl
    def prefetch(self, session, query):
        if "hang" in query:
            RELEASE.wait({HANG_SECONDS})
        return MemoryContext("recalled for " + str(session.user_id), count=1, label="hanging")

    @hookimpl
    def register_tools(self, session):
        def slow(args, ctx):
            RELEASE.wait({HANG_SECONDS})
            return json.dumps({{"success": True}})

        def whoami(args, ctx):
            return json.dumps({{"success": True, "user": ctx.session.user_id}}, ensure_ascii=False)

        def refuse(args, ctx):
            return tool_error("no memory 42 in this user's memory", id="42")

        schema = {{"type": "object", "properties": {{}}}}
        return [
            ToolSpec("hanging_lookup", "Never answers.", schema, slow),
            ToolSpec("hanging_forget", "Always fails.", schema, refuse),
            ToolSpec("hanging_whoami", "The user this call runs for.", schema, whoami),
        ]
"""


def install_provider(tmp_path: Path, home: Path) -> Path:
    """A real installed distribution (dist-info + entry point) on a PYTHONPATH directory, and
    a config that activates it with short bounds."""
    site = tmp_path / "site"
    info = site / "hermes_memory_hanging-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hermes-memory-hanging\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[hermes.memory_providers]\nhanging = hermes_memory_hanging:Hanging\n", encoding="utf-8"
    )
    (site / "hermes_memory_hanging.py").write_text(PROVIDER, encoding="utf-8")
    (home / "config.yaml").write_text(
        "memory:\n  provider: hanging\n  prefetch_timeout: 1.0\nmcp:\n  tool_timeout: 3.0\n",
        encoding="utf-8",
    )
    return site


async def exercise(client: Client, user: str) -> None:
    names = {tool.name for tool in (await client.list_tools()).tools}
    assert {"hanging_lookup", "hanging_whoami", "memory"} <= names
    with anyio.fail_after(BOUND):
        me = tool_json(await client.call_tool("hanging_whoami", {}))
    assert me["user"] == user
    with anyio.fail_after(BOUND):  # a provider tool's failure reaches the client as an error
        refused = await client.call_tool("hanging_forget", {})
    assert refused.is_error and tool_json(refused)["error"].startswith("no memory 42")
    with anyio.fail_after(BOUND):
        quick = tool_json(await client.call_tool("memory_recall", {"user_text": "what did I say"}))
    assert f"recalled for {user}" in quick["context"] and "<memory-context>" in quick["context"]
    with anyio.fail_after(BOUND):  # the provider hangs in prefetch: recall goes on without it
        slow = tool_json(await client.call_tool("memory_recall", {"user_text": "please hang"}))
    assert slow["success"] is True and "recalled for" not in slow["context"]
    with anyio.fail_after(BOUND):  # the provider hangs in a tool call: an error, not a hang
        hung = await client.call_tool("hanging_lookup", {})
    assert hung.is_error and "did not finish" in tool_json(hung)["error"]
    with anyio.fail_after(BOUND):  # while it still hangs, the tool is refused at once
        busy = await client.call_tool("hanging_lookup", {})
    assert busy.is_error and "still busy" in tool_json(busy)["error"]
    with anyio.fail_after(BOUND):  # everything else keeps working
        added = tool_json(
            await client.call_tool(
                "memory", {"action": "add", "target": "user", "content": f"{user} 喜欢慢跑。"}
            )
        )
        synced = tool_json(
            await client.call_tool(
                "memory_sync_turn", {"user_text": "hang on a second", "assistant_reply": "ok"}
            )
        )
    assert added["success"] is True and synced["success"] is True


def test_a_hanging_provider_is_bounded_over_stdio(tmp_path: Path, mcp_home: Path) -> None:
    site = install_provider(tmp_path, mcp_home)
    params = stdio_params(mcp_home, "--user", "alice", extra_path=site)

    async def main() -> None:
        async with Client(params) as client:
            await exercise(client, "alice")

    anyio.run(main)


def test_each_token_reaches_the_provider_as_its_own_user(tmp_path: Path, mcp_home: Path) -> None:
    site = install_provider(tmp_path, mcp_home)
    store = TokenStore(mcp_home)
    tokens = {user: store.add(user).token for user in ("alice", "王芳")}
    server = HttpServer(mcp_home, extra_path=site)
    try:

        async def main() -> None:
            for user, token in tokens.items():
                async with http_client(server.url, token) as client:
                    with anyio.fail_after(BOUND):
                        me = tool_json(await client.call_tool("hanging_whoami", {}))
                    assert me["user"] == user
                    recall = tool_json(
                        await client.call_tool(
                            "memory_recall", {"query": "what do you remember about me"}
                        )
                    )
                    assert f"recalled for {user}" in recall["context"]
            async with http_client(server.url, tokens["alice"]) as client:
                with anyio.fail_after(BOUND):
                    hung = await client.call_tool("hanging_lookup", {})
                assert hung.is_error
                assert (await client.list_tools()).tools

        anyio.run(main)
    finally:
        code = server.stop()
    assert code == 0, server.log
