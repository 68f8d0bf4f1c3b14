"""Modes host and platform against a loopback server implementing the documented routes."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fake_mem0 import FakeMem0Server
from hermes_memory_mem0 import Mem0Provider
from mem0_testutil import make_session

from hermes_core import MemoryWrite, Turn
from hermes_core.testing.fakes import make_turn
from hermes_core.testing.harness import tool_result as tool


@pytest.fixture(params=["host", "platform"])
def remote(
    request: pytest.FixtureRequest, make_provider: Callable[..., Mem0Provider]
) -> Iterator[tuple[FakeMem0Server, Mem0Provider]]:
    flavor = request.param
    with FakeMem0Server(flavor, api_key="m0-key") as server:
        if flavor == "host":
            provider = make_provider(mode="host", host=server.url, api_key="m0-key")
        else:
            provider = make_provider(mode="platform", platform_url=server.url, api_key="m0-key")
        yield server, provider


def test_routes_and_auth_headers(remote, home: Path) -> None:  # type: ignore[no-untyped-def]
    server, provider = remote
    s = make_session(home, user_id="alice")
    out = tool(provider, s, "mem0_add", content="Alice prefers dark roast coffee.")
    assert out["success"], out
    found = tool(provider, s, "mem0_search", query="coffee roast")
    assert [r["memory"] for r in found["results"]] == ["Alice prefers dark roast coffee."]
    paths = [(r.method, r.path) for r in server.requests]
    if server.flavor == "host":
        assert ("POST", "/memories") in paths and ("POST", "/search") in paths
        assert all(r.headers.get("x-api-key") == "m0-key" for r in server.requests)
    else:
        assert ("POST", "/v1/memories/") in paths and ("POST", "/v2/memories/search/") in paths
        assert all(r.headers.get("authorization") == "Token m0-key" for r in server.requests)
    add = next(r for r in server.requests if r.method == "POST" and "search" not in r.path)
    assert add.body["user_id"] == "alice"
    assert add.body["agent_id"] == "hermes"
    assert add.body["infer"] is False  # mem0_add stores verbatim
    assert add.body["metadata"]["channel"] == "cli"


def test_wrong_key_is_a_counted_failure(home: Path, make_provider) -> None:  # type: ignore[no-untyped-def]
    with FakeMem0Server("host", api_key="right") as server:
        provider = make_provider(mode="host", host=server.url, api_key="wrong")
        out = tool(provider, make_session(home), "mem0_search", query="x")
        assert out["success"] is False and "401" in out["error"]
        assert provider.breaker.failures == 1


def test_update_and_delete_are_scoped(remote, home: Path) -> None:  # type: ignore[no-untyped-def]
    server, provider = remote
    alice, bob = make_session(home, "alice"), make_session(home, "bob")
    mem_id = tool(provider, alice, "mem0_add", content="我住在上海。")["results"][0]["id"]
    # Bob can neither change nor delete Alice's memory; the answer does not leak it.
    for name, args in (("mem0_update", {"content": "hacked"}), ("mem0_delete", {})):
        out = tool(provider, bob, name, memory_id=mem_id, **args)
        assert out["success"] is False and "not found" in out["error"]
        assert "上海" not in json.dumps(out, ensure_ascii=False)
    assert server.memories[mem_id]["memory"] == "我住在上海。"
    assert tool(provider, alice, "mem0_update", memory_id=mem_id, content="我住在北京。")["success"]
    assert server.memories[mem_id]["memory"] == "我住在北京。"
    assert tool(provider, alice, "mem0_delete", memory_id=mem_id)["success"]
    assert mem_id not in server.memories
    gone = tool(provider, alice, "mem0_delete", memory_id=mem_id)
    assert gone["success"] is False and "not found" in gone["error"]


def test_sync_sends_capped_turn_with_infer(remote, home: Path) -> None:  # type: ignore[no-untyped-def]
    server, provider = remote
    s = make_session(home, "alice")
    long_reply = "Noted, you like hiking. " + "More words follow here. " * 40
    turn = Turn(session_id="s1", number=1, user_text="I love hiking in the Alps.", reply=long_reply)
    provider.sync(s, turn)
    provider.sync(s, turn)  # a resent turn is not stored twice
    adds = [r for r in server.requests if r.method == "POST" and "search" not in r.path]
    assert len(adds) == 1
    body = adds[0].body
    assert body["infer"] is True  # the server runs its own LLM
    contents = [m["content"] for m in body["messages"]]
    assert contents[0] == "I love hiking in the Alps."
    assert len(contents[1]) <= 450 and contents[1].endswith(".")
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]


def test_sync_infer_off_by_setting(home: Path, make_provider) -> None:  # type: ignore[no-untyped-def]
    with FakeMem0Server("host") as server:
        provider = make_provider(mode="host", host=server.url, sync_infer=False)
        provider.sync(
            make_session(home), Turn(session_id="s1", number=1, user_text="hi there", reply="hello")
        )
        assert server.requests[-1].body["infer"] is False


def test_prefetch_recalls_only_own_memories(remote, home: Path) -> None:  # type: ignore[no-untyped-def]
    _server, provider = remote
    alice, bob = make_session(home, "alice"), make_session(home, "bob")
    tool(provider, alice, "mem0_add", content="Alice's cat is called Miso.")
    tool(provider, bob, "mem0_add", content="Bob's cat is called Pepper.")
    provider.on_turn_start(alice, "what is my cat called?")
    got = provider.prefetch(alice, "what is my cat called?")
    assert got is not None and got.count == 1
    assert got.text.splitlines()[0] == "## Mem0 Memory"
    assert "Miso" in got.text and "Pepper" not in got.text
    assert provider.prefetch(make_session(home, "carol"), "cat") is None


def test_a_slow_server_costs_prefetch_only_its_short_wait(  # type: ignore[no-untyped-def]
    remote, home: Path, make_provider
) -> None:
    server, _ = remote
    where = {"host": server.url} if server.flavor == "host" else {"platform_url": server.url}
    provider = make_provider(mode=server.flavor, api_key="m0-key", prefetch_wait=0.2, **where)
    s = make_session(home, "alice")
    tool(provider, s, "mem0_add", content="Alice's cat is called Miso. 她的猫叫味噌。")
    # the end of a turn refreshes, in the background, what the next prefetch can fall back on
    provider.on_turn_end(s, make_turn("what is my cat called?", session_id=s.id))
    for _ in range(100):
        if provider._cached.get(s.id):
            break
        time.sleep(0.05)
    assert provider._cached.get(s.id), "the background search never finished"

    server.delay = 3.0
    started = time.monotonic()
    got = provider.prefetch(s, "我的猫叫什么？")
    waited = time.monotonic() - started
    # the fresh search cannot have answered: the text is the cached result, after the wait
    assert got is not None and "Miso" in got.text
    assert waited < server.delay


def test_breaker_trips_after_five_server_errors(remote, home: Path) -> None:  # type: ignore[no-untyped-def]
    server, provider = remote
    s = make_session(home, "alice")
    server.fail_next(5, 503)
    for _ in range(5):
        assert tool(provider, s, "mem0_search", query="anything")["success"] is False
    before = len(server.requests)
    out = tool(provider, s, "mem0_search", query="anything")
    assert out["success"] is False and "Mem0 is paused after 5 consecutive failures" in out["error"]
    assert len(server.requests) == before  # paused: no request was sent
    assert provider.prefetch(s, "anything") is None
    checks = provider.health_check(home)
    assert any(not c.ok and "breaker" in c.name for c in checks)


def test_not_found_and_validation_do_not_trip(remote, home: Path) -> None:  # type: ignore[no-untyped-def]
    server, provider = remote
    s = make_session(home, "alice")
    for _ in range(7):
        assert tool(provider, s, "mem0_delete", memory_id="no-such-id")["success"] is False
    server.fail_next(7, 422)
    for _ in range(7):
        assert tool(provider, s, "mem0_search", query="x")["success"] is False
    assert provider.breaker.failures == 0
    assert tool(provider, s, "mem0_search", query="x")["success"] is True


def test_on_memory_write_mirrors(remote, home: Path) -> None:  # type: ignore[no-untyped-def]
    server, provider = remote
    s = make_session(home, "alice")
    provider.on_memory_write(
        s, MemoryWrite(action="add", target="user", content="Prefers tabs over spaces.")
    )
    (mem,) = server.memories.values()
    assert mem["memory"] == "Prefers tabs over spaces." and mem["infer"] is False
    provider.on_memory_write(
        s,
        MemoryWrite(
            action="replace",
            target="user",
            content="Prefers spaces over tabs.",
            previous_content="Prefers tabs over spaces.",
        ),
    )
    assert [m["memory"] for m in server.memories.values()] == ["Prefers spaces over tabs."]
    provider.on_memory_write(
        s,
        MemoryWrite(
            action="remove", target="user", content="", previous_content="Prefers spaces over tabs."
        ),
    )
    assert server.memories == {}


def test_default_user_id_when_session_has_none(remote, home: Path) -> None:  # type: ignore[no-untyped-def]
    server, provider = remote
    tool(provider, make_session(home, None), "mem0_add", content="x y z")
    assert next(iter(server.memories.values()))["user_id"] == "hermes-user"
