"""The MCP service without a transport (fast): conversations, tool filtering, chats named by
the client, idle reaping, the memory resources' parsing, tokens, and the import boundary."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.errors import ConfigError
from hermes_core.host import MemoryHost
from hermes_core.mcp.service import McpService, ResourceNotFound, ToolNotFound, memory_blocks
from hermes_core.mcp.tokens import TokenStore


@pytest.fixture
def service(memory_host: MemoryHost) -> Iterator[McpService]:
    svc = McpService(memory_host)
    yield svc
    svc.close()


def payload(text: str) -> dict[str, object]:
    value = json.loads(text)
    assert isinstance(value, dict)
    return value


def test_conversations_are_per_connection_and_user(service: McpService) -> None:
    a = service.conversation("c1", "alice")
    assert service.conversation("c1", "alice") is a
    assert service.conversation("c1", "bob") is not a
    assert service.conversation("c2", "alice") is not a
    assert a.session.info.source == "mcp" and a.session.info.user_id == "alice"
    assert service.close_connection("c1") == 2
    assert service.open_conversations() == 1


def test_recall_and_sync_name_the_users_text_alike_and_query_still_works(
    service: McpService,
) -> None:
    """memory_recall and memory_sync_turn both take ``user_text`` (issue 27); recall still
    accepts its older name ``query``."""
    from hermes_core.mcp.service import RECALL_SCHEMA, SYNC_SCHEMA

    assert RECALL_SCHEMA["required"] == ["user_text"] and "user_text" in SYNC_SCHEMA["required"]
    conv = service.conversation("stdio", "u1")
    payload(
        service.call_tool(
            conv,
            "memory_sync_turn",
            {"user_text": "My kestrel is called Pip.", "assistant_reply": "Noted."},
        ).text
    )
    for args in ({"user_text": "what is my kestrel called?"}, {"query": "kestrel?"}):
        out = payload(service.call_tool(conv, "memory_recall", args).text)
        assert out["success"] is True, out
    bad = service.call_tool(conv, "memory_recall", {"user_text": 3})
    assert bad.is_error and "'user_text' must be a string" in bad.text


def test_skill_manage_is_off_unless_enabled(memory_host: MemoryHost) -> None:
    off = McpService(memory_host)
    on = McpService(memory_host, skill_manage=True)
    try:
        assert "skill_manage" not in {t.name for t in off.tools(off.conversation("c", None))}
        assert "skill_manage" in {t.name for t in on.tools(on.conversation("c", None))}
        with pytest.raises(ToolNotFound):
            off.call_tool(off.conversation("c", None), "skill_manage", {"action": "delete"})
    finally:
        off.close()
        on.close()


def test_a_new_conversation_id_starts_a_new_session_and_search_finds_the_old_one(
    service: McpService,
) -> None:
    conv = service.conversation("stdio", "u1")
    first = payload(
        service.call_tool(
            conv,
            "memory_sync_turn",
            {
                "user_text": "The heron cache stores thumbnails.",
                "assistant_reply": "Noted: heron caches thumbnails.",
                "conversation_id": "chat-1",
            },
        ).text
    )
    again = payload(
        service.call_tool(
            conv,
            "memory_sync_turn",
            {
                "user_text": "苍鹭缓存很快。",
                "assistant_reply": "是的。",
                "conversation_id": "chat-1",
            },
        ).text
    )
    assert again["session_id"] == first["session_id"] and again["turn"] == 2
    recall = payload(
        service.call_tool(
            conv, "memory_recall", {"query": "what about the heron?", "conversation_id": "chat-2"}
        ).text
    )
    assert recall["session_id"] != first["session_id"]
    found = payload(service.call_tool(conv, "session_search", {"query": "heron"}).text)
    assert first["session_id"] in {r["session_id"] for r in found["results"]}
    found_zh = payload(service.call_tool(conv, "session_search", {"query": "苍鹭"}).text)
    assert first["session_id"] in {r["session_id"] for r in found_zh["results"]}
    bad = service.call_tool(
        conv,
        "memory_sync_turn",
        {"user_text": "a", "assistant_reply": "b", "conversation_id": "  "},
    )
    assert bad.is_error


def test_idle_conversations_are_reaped(service: McpService) -> None:
    conv = service.conversation("http:x", "alice")
    assert service.reap_idle(now=conv.last_used + 1) == 0
    assert service.reap_idle(now=conv.last_used + service.idle_timeout + 1) == 1
    assert service.open_conversations() == 0


def test_resources_unknown_uris_are_not_found(service: McpService) -> None:
    conv = service.conversation("stdio", None)
    for uri in (
        "hermes://memory/../USER.md",
        "hermes://sessions/",
        "hermes://sessions/a/b",
        "file:///etc/passwd",
        "hermes://sessions/" + "x" * 500,
    ):
        with pytest.raises(ResourceNotFound):
            service.read_resource(conv, uri)


def test_memory_blocks_split_the_frozen_snapshot() -> None:
    rule = "═" * 46
    text = (
        "## Persistent memory\nguidance\n\n"
        f"{rule}\nMEMORY (your personal notes) [1% — 10/2,200 chars]\n{rule}\nuses tabs\n§\n"
        "第二条\n\n"
        f"{rule}\nUSER PROFILE (who the user is) [1% — 9/1,375 chars]\n{rule}\n喜欢短答案\n"
    )
    blocks = memory_blocks(text)
    assert (
        blocks["MEMORY"].endswith("uses tabs\n§\n第二条") and "USER PROFILE" not in blocks["MEMORY"]
    )
    assert blocks["USER"].endswith("喜欢短答案") and blocks["USER"].startswith(rule)
    assert memory_blocks("no snapshot here") == {}


def test_token_store_rules(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    issued = store.add("小明", "phone")
    assert store.verify(issued.token) == issued.record
    assert store.verify(issued.token.replace("hmcp_", "hmcp-")) is None
    assert store.verify("hmcp_" + "0" * 12 + "_" + "a" * 43) is None
    assert store.verify(issued.token + "\n" + issued.token) is None
    assert store.verify("x" * 10_000) is None
    with pytest.raises(ConfigError, match="token add --user"):
        store.add("  ")
    other = store.add("alice")
    assert [r.id for r in store.revoke(user="小明")] == [issued.record.id]
    assert store.verify(issued.token) is None and store.verify(other.token) is not None
    # a whole token works as the id to revoke, too
    assert store.revoke(other.token) == [other.record]
    store.path.write_text("{broken", encoding="utf-8")
    with pytest.raises(ConfigError, match="move it aside"):
        store.list()
    assert store.verify(other.token) is None


def test_importing_hermes_core_imports_no_mcp_sdk() -> None:
    code = (
        "import sys, hermes_core, hermes_core.mcp, hermes_core.mcp.service, "
        "hermes_core.mcp.tokens, hermes_core.cli.mcp; "
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]"


def test_loopback_detection() -> None:
    from hermes_core.mcp.serve import is_loopback

    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.2", "example.com"))
