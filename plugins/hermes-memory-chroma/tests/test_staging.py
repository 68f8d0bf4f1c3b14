"""Batched writes: new memories are staged (outbox in fts.db, visible to every read) and
reach chromadb in one upsert per collection. Pinned by counting chromadb write calls and
by a real crash (a child process that exits without closing the store)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hermes_memory_chroma import store as store_module
from hermes_memory_chroma.embedders import HashEmbedder
from hermes_memory_chroma.retriever import RecallParams, Retriever
from hermes_memory_chroma.store import MemoryStore

USER = "alice"


def _embedded_only(store: MemoryStore) -> None:
    if store.shared:
        pytest.skip("server mode writes every row at once (other hosts read the collections)")


def _live_ids(store: MemoryStore, user: str = USER) -> set[str]:
    coll = store._client.get_collection(store.collection_name(user))
    return {str(i) for i in coll.get(include=[])["ids"]}


def test_turns_are_written_in_batches_not_one_call_each(store: MemoryStore) -> None:
    _embedded_only(store)
    turns = 3 * store_module.FLUSH_ROWS
    for n in range(turns):
        store.add(USER, f"user: turn {n} about pony {n}", type="dialogue", memory_id=f"d{n}")
    # one upsert per FLUSH_ROWS staged rows, however many turns
    assert store.chroma_writes == 3
    assert store.count(USER) == turns and len(_live_ids(store)) == turns
    store.add(USER, "user: one more", type="dialogue", memory_id="last")
    assert store.chroma_writes == 3 and "last" not in _live_ids(store)
    assert store.flush(USER) == 1 and "last" in _live_ids(store)


def test_staged_rows_are_recalled_and_checked_before_they_are_written(
    store: MemoryStore,
) -> None:
    _embedded_only(store)
    first = store.add(USER, "Alice keeps her notes in Obsidian.", type="fact")
    assert store.chroma_writes == 0
    hits = Retriever(store, RecallParams()).search(USER, "where are Alice's notes", record=False)
    assert [h.memory.id for h in hits] == [first.id]
    assert hits[0].dense_rank == 1 and hits[0].bm25_rank == 1
    again = store.add(USER, "alice keeps her notes in obsidian")  # same normalised text
    assert again.status == "duplicate" and again.id == first.id
    assert store.add(USER, "Alice keeps notes in Obsidian now.", memory_id=first.id).id == first.id
    assert store.chroma_writes == 0 and store.count(USER) == 1


def test_a_staged_row_superseded_goes_straight_to_history(store: MemoryStore) -> None:
    _embedded_only(store)
    turns = [store.add(USER, f"user: turn {n}", type="dialogue").id for n in range(5)]
    chunk = store.add(USER, "project_status: turns 0-4", type="project_status").id
    store.supersede(USER, turns, chunk)
    assert store.get(USER, turns) == [] and store.count(USER) == 1
    assert store.chroma_writes == 0
    store.flush(USER)
    assert store.chroma_writes == 2  # one upsert to the live, one to the history collection
    assert _live_ids(store) == {chunk}
    chain = store.history(USER, chunk)
    assert {m.id for m in chain} == {*turns, chunk}
    assert all(m.superseded_by == chunk for m in chain if m.id != chunk)
    assert store.count(USER, include_superseded=True) == 6


def test_deleting_or_clearing_staged_rows_writes_nothing(store: MemoryStore) -> None:
    _embedded_only(store)
    gone = store.add(USER, "a secret the user takes back").id
    kept = store.add(USER, "Alice likes green tea.").id
    replaced = store.add(USER, "user: an old turn", type="dialogue").id
    store.supersede(USER, [replaced], kept)  # staged straight for history
    assert store.delete_memory(USER, replaced) and not store.delete_memory(USER, replaced)
    assert store.delete_memory(USER, gone)
    assert store.fts.staged(USER) and all(row[0] != gone for row in store.fts.staged(USER))
    store.flush(USER)
    assert _live_ids(store) == {kept}
    store.add("bob", "Bob likes chess.")
    assert store.clear_user_memory("bob") == 1
    assert store.fts.staged("bob") == [] and store.count("bob") == 0
    store.flush()
    assert store.count("bob") == 0


def test_staged_rows_survive_a_crash_and_are_written_on_the_next_open(tmp_path: Path) -> None:
    root = tmp_path / "chroma"
    child = textwrap.dedent(
        f"""
        import os
        from pathlib import Path
        from hermes_memory_chroma.embedders import HashEmbedder
        from hermes_memory_chroma.store import MemoryStore
        store = MemoryStore(Path({str(root)!r}), HashEmbedder())
        for n in range(5):
            store.add("alice", f"user: crash turn {{n}} about kites", type="dialogue",
                      memory_id=f"c{{n}}")
        store.supersede("alice", ["c0"], "c4")
        assert store.chroma_writes == 0
        os._exit(0)  # a crash: no close, no flush
        """
    )
    subprocess.run([sys.executable, "-c", child], check=True, timeout=300)
    reopened = MemoryStore(root, HashEmbedder())
    try:
        assert reopened.count(USER) == 4
        assert _live_ids(reopened) == {"c1", "c2", "c3", "c4"}
        assert {m.id for m in reopened.list_memories(USER, include_superseded=True)} == {
            f"c{n}" for n in range(5)
        }
        assert reopened.fts.staged(USER) == []
        hits = Retriever(reopened, RecallParams()).search(USER, "kites", record=False)
        assert {h.memory.id for h in hits} == {"c1", "c2", "c3", "c4"}
    finally:
        reopened.close()


def test_close_writes_what_is_staged(tmp_path: Path) -> None:
    root = tmp_path / "chroma"
    first = MemoryStore(root, HashEmbedder())
    mem = first.add(USER, "Alice moved to Bergen.").id
    first.close()
    second = MemoryStore(root, HashEmbedder())
    try:
        assert second.fts.staged(USER) == []
        assert mem in _live_ids(second)
    finally:
        second.close()


def test_duplicate_and_history_checks_are_sqlite_lookups_after_a_one_time_backfill(
    tmp_path: Path,
) -> None:
    """An fts.db written before the duplicate keys and history ids were kept: they are read
    from chromadb once on open, then duplicates and replaced turns are still recognised."""
    root = tmp_path / "chroma"
    first = MemoryStore(root, HashEmbedder())
    kept = first.add(USER, "Alice likes green tea.").id
    first.add(USER, "user: turn one", type="dialogue", memory_id="t1")
    chunk = first.add(USER, "project_status: turn one", type="project_status").id
    first.supersede(USER, ["t1"], chunk)
    first.close()
    with sqlite3.connect(root / "fts.db") as db:  # as an older version left it
        db.execute("UPDATE memory_rows SET hash = NULL, type = NULL")
        db.execute("DELETE FROM retired")
        db.execute("DELETE FROM retired_complete")
    db.close()

    store = MemoryStore(root, HashEmbedder())
    try:
        assert store.add(USER, "alice likes GREEN tea").id == kept  # duplicate by hash
        resent = store.add(USER, "user: turn one", type="dialogue", memory_id="t1")
        assert resent.status == "duplicate"  # already stored, then replaced
        assert store.fts.unhashed(USER) == [] and store.fts.is_retired(USER, "t1") is True
        assert store.count(USER) == 2
    finally:
        store.close()


def test_flushing_live_rows_only_leaves_replaced_turns_in_the_outbox(store: MemoryStore) -> None:
    _embedded_only(store)
    turns = [store.add(USER, f"user: turn {n}", type="dialogue").id for n in range(3)]
    chunk = store.add(USER, "project_status: turns 0-2", type="project_status").id
    store.supersede(USER, turns, chunk)
    assert store.flush(USER, history=False) == 1 and store.chroma_writes == 1
    assert _live_ids(store) == {chunk}
    assert sorted(row[0] for row in store.fts.staged(USER)) == sorted(turns)
    assert store.flush(USER) == 3 and store.fts.staged(USER) == []
    assert store.count(USER, include_superseded=True) == 4


def test_server_mode_writes_every_row_at_once(store: MemoryStore) -> None:
    if not store.shared:
        pytest.skip("embedded mode batches its writes")
    first = store.add(USER, "Alice keeps her notes in Obsidian.").id
    turn = store.add(USER, "user: a turn", type="dialogue").id
    store.supersede(USER, [turn], first)
    assert store.fts.staged(USER) == [] and store.chroma_writes >= 3
    assert _live_ids(store) == {first}
    assert store.add(USER, "alice keeps her notes in obsidian").status == "duplicate"
