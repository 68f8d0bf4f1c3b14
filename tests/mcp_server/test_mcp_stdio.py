"""`hermes-memory mcp serve` over stdio: a real subprocess driven by the SDK's own client."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_helpers import server_env, sessions_rows, stdio_params, tool_json

ZH_REPLY = "已经修复了斑马解析器。"
CORE_TOOLS = {"memory", "session_search", "skills_list", "skill_view", "skills_find"}


def run(coro: Any) -> Any:
    return anyio.run(lambda: coro)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_stdio_tools_memory_sync_search_and_resources(mcp_home: Path, mode: str) -> None:
    params = stdio_params(mcp_home, "--user", "alice")

    async def first() -> str:
        async with Client(params, mode=mode) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert CORE_TOOLS | {"memory_recall", "memory_sync_turn"} <= names
            assert "skill_manage" not in names  # off unless enabled
            for content in ("Alice prefers green tea over coffee.", "爱丽丝住在杭州，喜欢龙井茶。"):
                added = tool_json(
                    await client.call_tool(
                        "memory", {"action": "add", "target": "user", "content": content}
                    )
                )
                assert added["success"] is True, added
            recall = tool_json(await client.call_tool("memory_recall", {"user_text": "what tea?"}))
            assert recall["success"] is True and isinstance(recall["context"], str)
            synced = tool_json(
                await client.call_tool(
                    "memory_sync_turn",
                    {
                        "user_text": "The zebra parser crashed on empty input again.",
                        "assistant_reply": "Fixed it by guarding the zebra tokenizer.",
                    },
                )
            )
            assert synced["success"] is True and synced["turn"] == 1
            zh = tool_json(
                await client.call_tool(
                    "memory_sync_turn",
                    {
                        "user_text": "斑马解析器又崩溃了。",
                        "assistant_reply": "已经修复了斑马解析器。",
                    },
                )
            )
            assert zh["success"] is True and zh["session_id"] == synced["session_id"]
            # the memory snapshot is frozen at session start: this session's USER.md is empty
            frozen = await client.read_resource("hermes://memory/USER.md")
            assert "green tea" not in frozen.contents[0].text
            return str(synced["session_id"])

    session_id = run(first())

    async def second() -> None:
        async with Client(params, mode=mode) as client:
            found = tool_json(await client.call_tool("session_search", {"query": "zebra"}))
            assert found["success"] is True
            assert session_id in {r["session_id"] for r in found["results"]}
            found_zh = tool_json(await client.call_tool("session_search", {"query": "斑马"}))
            assert session_id in {r["session_id"] for r in found_zh["results"]}
            listed = {str(r.uri) for r in (await client.list_resources()).resources}
            assert {"hermes://memory/USER.md", "hermes://memory/MEMORY.md"} <= listed
            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["hermes://sessions/{session_id}"]
            user_md = (await client.read_resource("hermes://memory/USER.md")).contents[0].text
            assert "Alice prefers green tea" in user_md and "龙井茶" in user_md
            memory_md = (await client.read_resource("hermes://memory/MEMORY.md")).contents[0]
            assert "green tea" not in memory_md.text
            skills = await client.read_resource("hermes://skills/index")
            assert skills.contents[0].mime_type == "text/markdown"
            past = await client.read_resource(f"hermes://sessions/{session_id}")
            body = json.loads(past.contents[0].text)
            texts = [m["content"] for m in body["messages"]]
            assert "Fixed it by guarding the zebra tokenizer." in texts
            assert ZH_REPLY in texts
            with pytest.raises(MCPError) as missing:
                await client.read_resource("hermes://sessions/20260101T000000-deadbeef")
            assert "not found" in missing.value.message.lower()
            with pytest.raises(MCPError):
                await client.read_resource("file:///etc/passwd")

    run(second())
    rows = {row["id"]: row for row in sessions_rows(mcp_home)}
    assert rows[session_id]["source"] == "mcp" and rows[session_id]["user_id"] == "alice"
    # the connection ended, so did its session
    assert rows[session_id]["end_reason"] == "exit"


def test_stdio_user_setting_and_tool_errors(mcp_home: Path) -> None:
    (mcp_home / "config.yaml").write_text(
        "mcp:\n  user: 小明\n  skill_manage: true\n  disabled_tools: [skill_feedback]\n",
        encoding="utf-8",
    )
    params = stdio_params(mcp_home)

    async def main() -> None:
        async with Client(params) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "skill_manage" in names and "skill_feedback" not in names
            bad = await client.call_tool("memory", {"action": "explode", "target": "user"})
            assert bad.is_error and tool_json(bad)["success"] is False
            wrong = await client.call_tool("memory_sync_turn", {"user_text": 3})
            assert wrong.is_error and "must be a string" in tool_json(wrong)["error"]
            msgs = await client.call_tool(
                "memory_sync_turn",
                {"user_text": "a", "assistant_reply": "b", "messages": [{"content": "no role"}]},
            )
            assert msgs.is_error and "role" in tool_json(msgs)["error"]
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("skill_feedback", {"name": "x", "outcome": "success"})
            assert "Unknown tool" in unknown.value.message
            added = await client.call_tool(
                "memory", {"action": "add", "target": "user", "content": "小明喜欢乌龙茶。"}
            )
            assert not added.is_error

    run(main())
    rows = sessions_rows(mcp_home)
    assert rows and {row["user_id"] for row in rows} == {"小明"}


class RawPeer:
    """Writes raw lines to the server's stdin; reads its answers with a timeout."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, payload: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(payload + "\n")
        self.proc.stdin.flush()

    def rpc(self, payload: str) -> dict[str, Any]:
        self.send(payload)
        answer = json.loads(self.lines.get(timeout=90))
        assert isinstance(answer, dict)
        return answer


def test_stdio_malformed_messages_get_protocol_errors_and_the_server_lives_on(
    mcp_home: Path,
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes_core", "mcp", "serve", "--user", "bob"],
        env=server_env(mcp_home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    peer = RawPeer(proc)
    _rpc = peer.rpc
    try:
        parse = peer.rpc("{this is not json")
        assert parse["error"]["code"] == -32700 and parse["id"] is None
        not_rpc = peer.rpc("[1, 2, 3]")
        assert not_rpc["error"]["code"] == -32600
        init = peer.rpc(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                }
            ),
        )
        assert init["result"]["serverInfo"]["name"] == "hermes-core"
        peer.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        unknown = _rpc(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "no/such"}))
        assert unknown["error"]["code"] == -32601
        bad_params = _rpc(
            json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"x": 1}}),
        )
        assert bad_params["error"]["code"] == -32602
        not_object = _rpc(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "tools/call",
                    "params": {"name": "memory", "arguments": [1, 2]},
                }
            ),
        )
        assert "error" in not_object
        listed = _rpc(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}))
        assert any(tool["name"] == "memory" for tool in listed["result"]["tools"])
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        code = proc.wait(60)
    assert code == 0, proc.stderr.read() if proc.stderr else ""
