"""The store: dedup, supersede, history, deletes, TTL expiry, re-embedding, isolation."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_memory_chroma.embedders import HashEmbedder
from hermes_memory_chroma.store import REEMBED_SUFFIX, MemoryStore, NewMemory

DAY = 86400.0

OpenStore = Callable[..., MemoryStore]


def test_add_and_get_round_trip(store: MemoryStore) -> None:
    result = store.add("alice", "The user prefers dark mode.", type="user_profile")
    assert result.status == "added"
    [mem] = store.get("alice", [result.id])
    assert mem.content == "The user prefers dark mode."
    assert mem.type == "user_profile" and mem.user_id == "alice" and mem.active


def test_empty_content_is_refused(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="empty"):
        store.add("alice", "   ")


def test_user_id_is_required(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="user_id"):
        store.add("", "something")


def test_dedup_by_normalised_hash(store: MemoryStore) -> None:
    first = store.add("alice", "Likes green tea.")
    again = store.add("alice", "likes  GREEN tea")
    assert again.status == "duplicate" and again.id == first.id
    assert store.count("alice") == 1


def test_dedup_by_cosine(hermes_home: Path, open_store: OpenStore) -> None:
    s = open_store(hermes_home / "chroma", HashEmbedder(), dedup_cosine=0.9)
    try:
        first = s.add("alice", "deploys with ansible every friday afternoon from the office")
        near = s.add("alice", "deploys with ansible every friday afternoon from the office too")
        assert near.status == "duplicate" and near.id == first.id
        other = s.add("alice", "drinks oolong tea")
        assert other.status == "added"
    finally:
        s.close()


def test_dedup_is_per_user(store: MemoryStore) -> None:
    a = store.add("alice", "Lives in Lisbon.")
    b = store.add("bob", "Lives in Lisbon.")
    assert a.status == b.status == "added" and a.id != b.id


def test_supersede_by_subject_keeps_history(store: MemoryStore) -> None:
    old = store.add("alice", "Alice lives in Berlin.", type="user_profile", subject="location")
    new = store.add("alice", "Alice moved to Paris.", type="user_profile", subject="Location")
    assert new.superseded == (old.id,)
    active = store.list_memories("alice")
    assert [m.content for m in active] == ["Alice moved to Paris."]
    everything = store.list_memories("alice", include_superseded=True)
    [berlin] = [m for m in everything if m.id == old.id]
    assert berlin.superseded_by == new.id and not berlin.active
    assert [m.id for m in store.history("alice", new.id)] == [old.id, new.id]
    assert [m.id for m in store.history("alice", old.id)] == [old.id, new.id]
    # superseded memories leave the keyword index
    assert store.fts.search("alice", "Berlin", 5) == []
    assert [i for i, _ in store.fts.search("alice", "Paris", 5)] == [new.id]


def test_supersede_by_similarity_same_type_only(hermes_home: Path, open_store: OpenStore) -> None:
    s = open_store(
        hermes_home / "chroma", HashEmbedder(), supersede_threshold=0.7, dedup_cosine=0.99
    )
    try:
        a = s.add(
            "alice", "project status: migration to postgres is half done", type="project_status"
        )
        b = s.add(
            "alice", "project status: migration to postgres is almost done", type="project_status"
        )
        assert b.superseded == (a.id,)
        # a similar text of another type does not replace it
        c = s.add("alice", "project status: migration to postgres is done", type="todo")
        assert c.superseded == ()
        # dialogue memories never supersede each other
        d1 = s.add("alice", "user: hello there friend how are you", type="dialogue")
        d2 = s.add("alice", "user: hello there friend how are you doing", type="dialogue")
        assert d2.superseded == () and s.get("alice", [d1.id])[0].active
    finally:
        s.close()


def test_memory_id_makes_writes_idempotent(store: MemoryStore) -> None:
    first = store.add("alice", "user: hi\nassistant: hello", memory_id="dlg_1", type="dialogue")
    second = store.add("alice", "user: hi\nassistant: hello", memory_id="dlg_1", type="dialogue")
    assert first.id == second.id == "dlg_1"
    assert store.count("alice", include_superseded=True) == 1


def test_delete_memory_removes_chroma_fts_and_recall_rows(store: MemoryStore) -> None:
    mem = store.add("alice", "The wifi password hint is the cat's name.")
    store.note_recall("alice", [mem.id])
    assert store.delete_memory("alice", mem.id)
    assert store.get("alice", [mem.id]) == []
    assert store.fts.search("alice", "wifi", 5) == []
    assert store.fts.recall_counts("alice", [mem.id]) == {}
    assert not store.delete_memory("alice", mem.id)


def test_delete_memory_of_another_user_is_refused(store: MemoryStore) -> None:
    mem = store.add("alice", "Alice's secret plan.")
    assert not store.delete_memory("bob", mem.id)
    assert store.get("alice", [mem.id])


def test_clear_user_memory_removes_everything_of_that_user_only(store: MemoryStore) -> None:
    store.add("alice", "Alice likes jazz.", type="user_profile", subject="music")
    store.add("alice", "Alice likes blues now.", type="user_profile", subject="music")
    store.add("bob", "Bob likes jazz.")
    assert store.clear_user_memory("alice") == 2
    assert store.count("alice", include_superseded=True) == 0
    assert store.fts.count("alice") == 0
    assert "alice" not in store.users()
    assert store.count("bob") == 1 and store.fts.search("bob", "jazz", 5)


def test_ttl_expires_only_old_never_recalled_low_value(store: MemoryStore) -> None:
    now = time.time()
    old = now - 100 * DAY
    stale = store.add("alice", "user: small talk about weather", type="dialogue", created_at=old)
    recalled = store.add("alice", "user: talked about the garden", type="dialogue", created_at=old)
    valuable = store.add("alice", "Alice is allergic to nuts.", type="user_profile", created_at=old)
    fresh = store.add("alice", "user: weather again today", type="dialogue", created_at=now)
    store.note_recall("alice", [recalled.id])
    gone = store.expire("alice", ttl_days=90, low_value_types=["dialogue", "note"], now=now)
    assert gone == [stale.id]
    left = {m.id for m in store.list_memories("alice")}
    assert left == {recalled.id, valuable.id, fresh.id}
    assert store.fts.search("alice", "small", 5) == []


def test_add_many_is_searchable_and_keeps_metadata(store: MemoryStore) -> None:
    ids = store.add_many(
        "alice",
        [
            NewMemory(
                "Ann: I adopted a puppy.",
                type="dialogue",
                session_id="D1",
                id="D1:1",
                index_text="Bob: news? Ann: I adopted a puppy.",
                extra={"speaker": "Ann"},
            ),
            NewMemory("Bob: Congrats!", type="dialogue", session_id="D1", id="D1:2"),
        ],
    )
    assert ids == ["D1:1", "D1:2"]
    [mem] = store.get("alice", ["D1:1"])
    assert mem.extra["speaker"] == "Ann" and mem.session_id == "D1"
    # the keyword index holds the index text (with its neighbour)
    assert [i for i, _ in store.fts.search("alice", "news", 5)] == ["D1:1"]


def test_reembed_on_embedder_change(hermes_home: Path, open_store: OpenStore) -> None:
    root = hermes_home / "chroma"
    first = open_store(root, HashEmbedder(dim=256))
    a = first.add("alice", "Alice plays the cello.")
    first.add("alice", "Alice lives in Oslo.", subject="location")
    first.add("alice", "Alice lives in Bergen.", subject="location")
    first.close()

    calls: list[tuple[int, int]] = []
    second = open_store(
        root,
        HashEmbedder(dim=128),
        reembed_progress=lambda _u, _n: lambda d, t: calls.append((d, t)),
    )
    try:
        assert second.needs_reembed("alice")
        # any access re-embeds instead of failing on the 256 vs 128 dimension
        hits = second.dense("alice", second.embedder.embed_query("cello"), 5)
        assert hits and hits[0][0].id == a.id
        assert calls and calls[-1] == (3, 3)
        assert not second.needs_reembed("alice")
        # superseded memories survive the re-embed with their link
        assert second.count("alice", include_superseded=True) == 3
        assert second.count("alice") == 2
        assert second.stats()["dim"] == 128
    finally:
        second.close()


def test_explicit_reembed_returns_count_and_progress(
    hermes_home: Path, open_store: OpenStore
) -> None:
    root = hermes_home / "chroma"
    first = open_store(root, HashEmbedder(dim=64))
    first.add("bob", "Bob likes chess.")
    first.close()
    second = open_store(root, HashEmbedder(dim=96))
    try:
        seen: list[tuple[int, int]] = []
        assert second.reembed("bob", lambda d, t: seen.append((d, t))) == 1
        assert seen == [(1, 1)]
        assert second.reembed("bob") == 0  # nothing stale any more
        assert second.reembed("bob", force=True) == 1
    finally:
        second.close()


def test_interrupted_reembed_is_recovered(hermes_home: Path, open_store: OpenStore) -> None:
    root = hermes_home / "chroma"
    s = open_store(root, HashEmbedder())
    s.add("alice", "Alice collects stamps.")
    name = s.collection_name("alice")
    # simulate a crash after the old collection was dropped but before the rename
    s._client.get_collection(name).modify(name=name + REEMBED_SUFFIX)
    s._collections.clear()
    try:
        assert [m.content for m in s.list_memories("alice")] == ["Alice collects stamps."]
    finally:
        s.close()


def test_closed_store_refuses_work(store: MemoryStore) -> None:
    store.close()
    store.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        store.add("alice", "x")


def test_stats_lists_users(store: MemoryStore) -> None:
    store.add("alice", "a fact")
    store.add("bob", "b fact")
    stats = store.stats()
    assert {u["user_id"] for u in stats["users"]} == {"alice", "bob"}
    assert all(u["active"] == u["indexed"] == 1 for u in stats["users"])


def test_dense_never_returns_superseded_even_when_they_crowd_the_top(
    hermes_home: Path, open_store: OpenStore
) -> None:
    """The unfiltered fast path over-fetches a little; when superseded rows crowd the
    nearest neighbours it must fall back to chroma's filter, never return them."""
    store = open_store(hermes_home / "chroma", HashEmbedder(), dedup_cosine=1.01)
    query = "alice favourite coffee order at the corner cafe"
    old_ids = [
        store.add("alice", f"{query} variant{i}", subject=f"coffee-{i}").id for i in range(30)
    ]
    assert len(set(old_ids)) == 30
    keep = [store.add("alice", f"unrelated fact number {i} about gardening").id for i in range(6)]
    replacement = store.add("alice", "Alice now drinks tea at home.")
    store.supersede("alice", old_ids, replacement.id)
    hits = store.dense("alice", store.embedder.embed_query(query), 5)
    assert len(hits) == 5
    ids = {mem.id for mem, _ in hits}
    assert not ids & set(old_ids)
    assert ids <= {*keep, replacement.id}
    assert all(mem.active and mem.user_id == "alice" for mem, _ in hits)
    store.close()


def test_dense_rows_come_from_the_read_cache_and_follow_writes(store: MemoryStore) -> None:
    first = store.add("alice", "Alice keeps her notes in Obsidian.")
    vector = store.embedder.embed_query("where does alice keep notes")
    [(mem, _)] = store.dense("alice", vector, 1)
    assert mem.id == first.id and mem.active
    store.supersede("alice", [first.id], store.add("alice", "Alice moved her notes to Logseq.").id)
    assert all(m.id != first.id for m, _ in store.dense("alice", vector, 2))
