"""`hermes-memory mcp serve --transport http`: a real server on 127.0.0.1 (ephemeral port), driven
by
the SDK's own client and by raw HTTP; bearer tokens map to users."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_helpers import HttpServer, http_client, sessions_rows, tool_json, wait_for

from hermes_core.mcp.tokens import TokenStore

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


class Served:
    def __init__(self, server: HttpServer, store: TokenStore) -> None:
        self.server = server
        self.store = store
        self.url = server.url
        self.home = server.home

    def token(self, user: str) -> str:
        return self.store.add(user).token


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("mcp-http") / "hermes-home"
    home.mkdir(mode=0o700)
    store = TokenStore(home)
    store.add("warmup")  # the server starts with a token on file
    server = HttpServer(home)
    yield Served(server, store)
    assert server.stop() == 0, server.log


def run(fn: Any) -> Any:
    return anyio.run(fn)


def test_two_tokens_are_two_users_en_and_zh(served: Served) -> None:
    alice, xiaoming = served.token("alice"), served.token("小明")

    async def write(token: str, fact: str, user_text: str, reply: str) -> str:
        async with http_client(served.url, token) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"memory", "session_search", "memory_sync_turn"} <= names
            added = tool_json(
                await client.call_tool(
                    "memory", {"action": "add", "target": "user", "content": fact}
                )
            )
            assert added["success"] is True, added
            synced = tool_json(
                await client.call_tool(
                    "memory_sync_turn", {"user_text": user_text, "assistant_reply": reply}
                )
            )
            assert synced["success"] is True
            return str(synced["session_id"])

    sid_alice = run(
        lambda: write(
            alice,
            "Alice's build server is called saturn-seven.",
            "We deployed the kestrel service to saturn-seven.",
            "Deployed kestrel; it answers on port 8443.",
        )
    )
    sid_xiaoming = run(
        lambda: write(
            xiaoming,
            "小明的服务器叫做天王星七号。",
            "我们把猎鹰服务部署到了天王星七号。",
            "猎鹰服务已经部署，端口是九四四三。",
        )
    )

    async def read_back(token: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
        async with http_client(served.url, token) as client:
            user_md = (await client.read_resource("hermes://memory/USER.md")).contents[0].text
            en = tool_json(await client.call_tool("session_search", {"query": "kestrel"}))
            zh = tool_json(await client.call_tool("session_search", {"query": "猎鹰"}))
            return user_md, en, zh

    user_md, en, zh = run(lambda: read_back(alice))
    assert "saturn-seven" in user_md and "天王星" not in user_md
    assert sid_alice in {r["session_id"] for r in en.get("results", [])}
    user_md, en, zh = run(lambda: read_back(xiaoming))
    assert "天王星七号" in user_md and "saturn" not in user_md
    assert sid_xiaoming in {r["session_id"] for r in zh.get("results", [])}

    rows = {row["id"]: row for row in sessions_rows(served.home)}
    assert rows[sid_alice]["user_id"] == "alice" and rows[sid_alice]["source"] == "mcp"
    assert rows[sid_xiaoming]["user_id"] == "小明"
    # each client connection was one session, closed when the client hung up (DELETE)
    assert wait_for(
        lambda: all(
            row["end_reason"] == "exit"
            for row in sessions_rows(served.home)
            if row["id"] in (sid_alice, sid_xiaoming)
        )
    )


def test_the_archive_is_scoped_per_token(served: Served) -> None:
    alice, bob = served.token("alice-archive"), served.token("鲍勃")

    async def sync(token: str, user_text: str) -> str:
        async with http_client(served.url, token) as client:
            synced = tool_json(
                await client.call_tool(
                    "memory_sync_turn", {"user_text": user_text, "assistant_reply": "ok"}
                )
            )
            return str(synced["session_id"])

    sid_alice = run(lambda: sync(alice, "The osprey migration finished on node quartz."))
    sid_bob = run(lambda: sync(bob, "鱼鹰迁移在石英节点上完成了。"))

    async def probe(token: str, query: str, foreign: str) -> tuple[dict[str, Any], str, str]:
        async with http_client(served.url, token) as client:
            found = tool_json(await client.call_tool("session_search", {"query": query}))
            messages = []
            for sid in (foreign, "20260101T000000-0badc0de"):
                with pytest.raises(MCPError) as err:
                    await client.read_resource(f"hermes://sessions/{sid}")
                messages.append(err.value.message.replace(sid, "<id>"))
            return found, messages[0], messages[1]

    found, foreign, missing = run(lambda: probe(bob, "osprey", sid_alice))
    seen = json.dumps(found, ensure_ascii=False)
    assert sid_alice not in seen and "quartz" not in seen and foreign == missing
    found, foreign, missing = run(lambda: probe(alice, "鱼鹰", sid_bob))
    seen = json.dumps(found, ensure_ascii=False)
    assert sid_bob not in seen and "石英" not in seen and foreign == missing


def test_missing_bad_and_revoked_tokens_are_refused(served: Served) -> None:
    token = served.token("carol")
    with httpx.Client(timeout=60) as raw:
        body = json.dumps(INIT)
        assert raw.post(served.url, content=body, headers=ACCEPT).status_code == 401
        for bad in ("nonsense", token[:-1] + ("A" if token[-1] != "A" else "B"), token + "x"):
            answer = raw.post(
                served.url, content=body, headers={**ACCEPT, "authorization": f"Bearer {bad}"}
            )
            assert answer.status_code == 401, bad
            assert answer.headers["www-authenticate"].startswith("Bearer")
        good = raw.post(
            served.url, content=body, headers={**ACCEPT, "authorization": f"Bearer {token}"}
        )
        assert good.status_code == 200
        session_id = good.headers["mcp-session-id"]
        (record,) = [r for r in served.store.list() if r.user == "carol"]
        assert served.store.revoke(record.id) == [record]
        listed = raw.post(
            served.url,
            content=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            headers={
                **ACCEPT,
                "authorization": f"Bearer {token}",
                "mcp-session-id": session_id,
                "mcp-protocol-version": "2025-06-18",
            },
        )
        assert listed.status_code == 401  # revoked: refused on the very next request

    async def sdk_client_without_access() -> None:
        with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 401 its own way
            async with http_client(served.url, token) as client:
                await client.list_tools()

    run(sdk_client_without_access)


def test_a_session_is_bound_to_the_token_that_opened_it(served: Served) -> None:
    alice, mallory = served.token("alice"), served.token("mallory")
    with httpx.Client(timeout=60) as raw:
        opened = raw.post(
            served.url,
            content=json.dumps(INIT),
            headers={**ACCEPT, "authorization": f"Bearer {alice}"},
        )
        session_id = opened.headers["mcp-session-id"]
        headers = {**ACCEPT, "mcp-session-id": session_id, "mcp-protocol-version": "2025-06-18"}
        raw.post(
            served.url,
            content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            headers={**headers, "authorization": f"Bearer {alice}"},
        )
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "resources/read",
            "params": {"uri": "hermes://memory/USER.md"},
        }
        stolen = raw.post(
            served.url,
            content=json.dumps(call),
            headers={**headers, "authorization": f"Bearer {mallory}"},
        )
        assert stolen.status_code == 404 and "saturn" not in stolen.text
        mine = raw.post(
            served.url,
            content=json.dumps(call),
            headers={**headers, "authorization": f"Bearer {alice}"},
        )
        assert mine.status_code == 200
        ended = raw.delete(served.url, headers={**headers, "authorization": f"Bearer {mallory}"})
        assert ended.status_code == 404  # cannot end someone else's session either
        assert raw.delete(
            served.url, headers={**headers, "authorization": f"Bearer {alice}"}
        ).status_code in (200, 204)


def test_malformed_requests_get_protocol_errors_and_the_server_lives_on(served: Served) -> None:
    token = served.token("dave")
    auth = {**ACCEPT, "authorization": f"Bearer {token}"}
    with httpx.Client(timeout=60) as raw:
        for body in (b"{not json", b"\xff\xfe\x00garbage", b"[1, 2]", b'"just a string"', b""):
            answer = raw.post(served.url, content=body, headers=auth)
            assert 400 <= answer.status_code < 500, (body, answer.status_code)
            error = answer.json()["error"]
            assert error["code"] in (-32700, -32600, -32602), error
        wrong_type = raw.post(
            served.url, content=json.dumps(INIT), headers={**auth, "content-type": "text/plain"}
        )
        assert 400 <= wrong_type.status_code < 500
        no_session = raw.post(
            served.url,
            content=json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}),
            headers=auth,
        )
        assert 400 <= no_session.status_code < 500
        huge = raw.post(served.url, content=b"[" + b"1," * 3_000_000 + b"1]", headers=auth)
        assert 400 <= huge.status_code < 500

    async def still_serving() -> None:
        async with http_client(served.url, token) as client:
            bad = await client.call_tool("memory", {"action": 7})
            assert bad.is_error
            with pytest.raises(MCPError):
                await client.call_tool("no_such_tool", {})
            with pytest.raises(MCPError):
                await client.read_resource("hermes://memory/../../etc/passwd")
            assert (await client.list_tools()).tools

    run(still_serving)
    assert served.server.proc.poll() is None


def test_the_token_commands(tmp_path: Path) -> None:
    from mcp_helpers import hermes

    home = tmp_path / "home"
    home.mkdir()
    added = hermes(home, "mcp", "token", "add", "--user", "小红", "--label", "laptop")
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip().splitlines()[-1]
    stored = (home / "mcp_tokens.json").read_text(encoding="utf-8")
    assert (home / "mcp_tokens.json").stat().st_mode & 0o777 == 0o600
    assert token not in stored and token.split("_", 2)[2] not in stored
    listed = hermes(home, "mcp", "token", "list", "--json")
    (row,) = json.loads(listed.stdout)
    assert (
        row["user"] == "小红"
        and row["label"] == "laptop"
        and set(row)
        == {
            "id",
            "user",
            "label",
            "created_at",
        }
    )
    table = hermes(home, "mcp", "token", "list")
    assert row["id"] in table.stdout and "小红" in table.stdout
    revoked = hermes(home, "mcp", "token", "revoke", row["id"])
    assert revoked.returncode == 0 and row["id"] in revoked.stdout
    again = hermes(home, "mcp", "token", "revoke", row["id"])
    assert again.returncode != 0 and "token list" in again.stderr
    assert json.loads(hermes(home, "mcp", "token", "list", "--json").stdout) == []
    assert TokenStore(home).verify(token) is None


def test_stateless_2026_clients_are_served_in_their_own_user_scope(served: Served) -> None:
    tokens = {"erin": served.token("erin"), "赵六": served.token("赵六")}

    async def main() -> None:
        for user, token in tokens.items():
            async with http_client(served.url, token, mode="2026-07-28") as client:
                assert client.protocol_version == "2026-07-28"
                added = tool_json(
                    await client.call_tool(
                        "memory", {"action": "add", "target": "user", "content": f"{user} 用 vim。"}
                    )
                )
                assert added["success"] is True
                synced = tool_json(
                    await client.call_tool(
                        "memory_sync_turn",
                        {"user_text": f"{user} asked about vim", "assistant_reply": "done"},
                    )
                )
                rows = {row["id"]: row for row in sessions_rows(served.home)}
                assert rows[synced["session_id"]]["user_id"] == user

    run(main)
