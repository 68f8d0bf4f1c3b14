"""Cost that does not grow with the store, pinned by counting rows, never by timing.

The stores of 200 and 2,000 memories are built once and copied as directories, so those tests
run embedded; the others run in both modes (``conftest.py``): a server's collections are the
same ``Collection`` class over HTTP.

A wrapper around chromadb's ``Collection.get`` / ``Collection.query`` counts the rows every
call returns (and records any id lookup that also carries a metadata filter, which makes
chromadb scan the whole collection). The same recall, turn sync and compaction write run
against a store of 200 and one of 2,000 memories (five of six superseded, as the no-LLM
compaction leaves them) must read the same number of rows.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.models.Collection import Collection

from hermes_memory_chroma import fts as fts_module
from hermes_memory_chroma.embedders import HashEmbedder
from hermes_memory_chroma.fts import FtsIndex
from hermes_memory_chroma.retriever import RecallParams, Retriever
from hermes_memory_chroma.store import DEDUP_PROBE, MemoryStore, NewMemory

USER = "alice"
EN = "project atlas status review notes for the billing service build {n}"
ZH = "项目 atlas 状态 评审 记录 支付 服务 构建 {n}"


@dataclass
class Reads:
    """Rows returned by chromadb per call kind, and filtered id lookups seen."""

    rows: dict[str, int] = field(default_factory=lambda: {"get": 0, "query": 0})
    filtered_id_lookups: int = 0

    def total(self) -> int:
        return sum(self.rows.values())

    def reset(self) -> None:
        self.rows = {"get": 0, "query": 0}
        self.filtered_id_lookups = 0


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Reads]:
    seen = Reads()
    real_get, real_query = Collection.get, Collection.query

    def get(self: Collection, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("ids") is not None and kwargs.get("where"):
            seen.filtered_id_lookups += 1
        out = real_get(self, *args, **kwargs)
        seen.rows["get"] += len(out["ids"])
        return out

    def query(self: Collection, *args: Any, **kwargs: Any) -> Any:
        out = real_query(self, *args, **kwargs)
        seen.rows["query"] += sum(len(ids) for ids in out["ids"])
        return out

    monkeypatch.setattr(Collection, "get", get)
    monkeypatch.setattr(Collection, "query", query)
    yield seen


CANDIDATES = 20
COLD_BOUND = 4 * CANDIDATES
"""A cold recall reads at most: one vector query and three id lookups (dense, keyword and
feedback candidates), each of at most ``CANDIDATES`` rows."""


def _build(root: Path, size: int) -> None:
    """``size`` dialogue turns, every sixth one a compaction chunk that supersedes the five
    turns before it (what the provider does without an LLM); EN and ZH in blocks of six."""
    store = MemoryStore(root, HashEmbedder(), dedup_cosine=1.01)
    items = [
        NewMemory(
            (EN if (n // 6) % 2 == 0 else ZH).format(n=n),
            type="dialogue" if n % 6 else "project_status",
            id=f"m{n}",
            created_at=1_700_000_000.0 + n,
        )
        for n in range(size)
    ]
    store.add_many(USER, items)
    for n in range(0, size, 6):
        store.supersede(USER, [f"m{k}" for k in range(n + 1, min(n + 6, size))], f"m{n}")
    store.close()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """The 200- and 2,000-memory stores, built once for the module."""
    roots = {}
    for size in (200, 2000, 60):
        roots[size] = tmp_path_factory.mktemp(f"store{size}")
        _build(roots[size], size)
    return roots


def _fill(built: dict[int, Path], size: int, into: Path) -> MemoryStore:
    """A private copy of the built store of ``size``, opened cold like a new process."""
    shutil.copytree(built[size], into)
    return MemoryStore(into, HashEmbedder(), dedup_cosine=1.01)


def _measure(reads: Reads, action: Callable[..., object], *args: Any, **kwargs: Any) -> int:
    """Rows chromadb returned while ``action(*args, **kwargs)`` ran."""
    reads.reset()
    action(*args, **kwargs)
    assert reads.filtered_id_lookups == 0
    return reads.total()


@pytest.mark.parametrize("query", ["billing service build status", "支付 服务 状态"])
def test_recall_reads_a_bounded_number_of_rows_at_200_and_2000_memories(
    built: dict[int, Path], tmp_path: Path, reads: Reads, query: str
) -> None:
    counts = []
    for size in (200, 2000):
        store = _fill(built, size, tmp_path / f"s{size}")
        retriever = Retriever(store, RecallParams(candidates=CANDIDATES, feedback_weight=0.5))
        first = _measure(reads, retriever.search, USER, query, record=False)
        again = _measure(reads, retriever.search, USER, query, record=False)
        assert retriever.search(USER, query, record=False)  # it does recall something
        counts.append((first, again))
        store.close()
    assert all(first <= COLD_BOUND for first, _ in counts), counts
    # warm: the rows come from the read cache, only the vector query reads chroma
    assert counts[0][1] == counts[1][1] == CANDIDATES, counts


def test_turn_sync_and_compaction_writes_read_the_same_rows_at_any_size(
    built: dict[int, Path], tmp_path: Path, reads: Reads
) -> None:
    counts = []
    for size in (200, 2000):
        store = _fill(built, size, tmp_path / f"s{size}")
        turn = "user: a brand new turn about ponies"
        sync = _measure(reads, store.add, USER, turn, type="dialogue", memory_id="dlg_x")
        resent = _measure(reads, store.add, USER, turn, type="dialogue", memory_id="dlg_x")
        compaction = _measure(
            reads,
            store.add,
            USER,
            "project_status: ponies are next",
            type="project_status",
            dedup_skip_types=("dialogue",),
        )
        supersede = _measure(reads, store.supersede, USER, ["dlg_x"], "m0")
        counts.append((sync, resent, compaction, supersede))
        # the turn is staged: its duplicate, existence and history checks are SQLite
        # lookups, the near-duplicate probe one vector query; nothing is written yet
        assert sync <= DEDUP_PROBE and store.chroma_writes == 0, (sync, store.chroma_writes)
        store.close()
    assert counts[0] == counts[1], counts


def test_live_collection_holds_only_active_memories(built: dict[int, Path], tmp_path: Path) -> None:
    store = _fill(built, 60, tmp_path / "s")
    try:
        live = store._client.get_collection(store.collection_name(USER))
        history = store._client.get_collection(store.history_name(USER))
        assert live.count() == store.count(USER) == 10
        assert history.count() == 50
        assert store.count(USER, include_superseded=True) == 60
        assert all(m.active for m in store.list_memories(USER))
        # history keeps the chain, the keyword index only the active rows
        assert [m.id for m in store.history(USER, "m0")] == [f"m{k}" for k in range(6)]
        assert store.fts.count(USER) == 10
        # deleting a superseded memory removes it from history too
        assert store.delete_memory(USER, "m3")
        assert store.count(USER, include_superseded=True) == 59
    finally:
        store.close()


def test_a_schema_1_store_is_migrated_on_open(
    tmp_path: Path, open_store: Callable[..., MemoryStore]
) -> None:
    """Stores written before the history collection kept superseded rows in the live one."""
    root = tmp_path / "old"
    store = open_store(root, HashEmbedder(), dedup_cosine=1.01)
    keep = store.add(USER, "Alice lives in Bergen.", subject="location")
    store.flush(USER)  # staged rows reach chromadb
    name = store.collection_name(USER)
    live = store._client.get_collection(name)
    vector = store.embedder.embed_documents(["Alice lived in Oslo."])
    meta = dict(live.get(ids=[keep.id], include=["metadatas"])["metadatas"][0])
    meta.update(superseded_by=keep.id, hash="old", created_at=float(meta["created_at"]) - 60)
    live.add(ids=["old1"], embeddings=vector, documents=["Alice lived in Oslo."], metadatas=[meta])
    live.modify(metadata={**(live.metadata or {}), "schema": 1})
    store.close()

    reopened = open_store(root, HashEmbedder(), dedup_cosine=1.01)
    try:
        assert [m.id for m in reopened.list_memories(USER)] == [keep.id]
        assert reopened._client.get_collection(name).count() == 1
        assert [m.id for m in reopened.history(USER, keep.id)] == ["old1", keep.id]
        assert reopened._client.get_collection(name).metadata["schema"] == 2
        hits = reopened.dense(USER, reopened.embedder.embed_query("Alice lives"), 5)
        assert [m.id for m, _ in hits] == [keep.id]
    finally:
        reopened.close()


def test_the_read_cache_follows_writes_by_id(
    tmp_path: Path, reads: Reads, open_store: Callable[..., MemoryStore]
) -> None:
    store = open_store(tmp_path / "c", HashEmbedder())
    try:
        first = store.add(USER, "Alice keeps notes in Obsidian.")
        reads.reset()
        [mem] = store.get(USER, [first.id])
        assert mem.content == "Alice keeps notes in Obsidian." and reads.rows["get"] == 0
        other = store.add(USER, "Bob likes chess.", type="note")
        reads.reset()
        assert [m.id for m in store.get(USER, [first.id, other.id])] == [first.id, other.id]
        assert reads.rows["get"] == 0  # a write does not drop the cache
        store.supersede(USER, [first.id], other.id)
        assert store.get(USER, [first.id]) == []  # gone from the live rows at once
    finally:
        store.close()


def _vm_steps(index: FtsIndex, action: Callable[..., object], *args: Any) -> int:
    """SQLite virtual-machine steps (in units of 100) while ``action`` runs: grows with the
    rows a statement scans, whatever the machine's speed."""
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0

    index._db.set_progress_handler(tick, 100)
    try:
        action(*args)
    finally:
        index._db.set_progress_handler(None, 100)
    return steps[0]


def test_keyword_index_replaces_and_deletes_one_row_not_a_scan(tmp_path: Path) -> None:
    steps = []
    for size in (200, 2000):
        index = FtsIndex(tmp_path / f"fts{size}.db")
        index.upsert(USER, [(f"m{n}", EN.format(n=n)) for n in range(size)])
        upsert = _vm_steps(index, index.upsert, USER, [("m7", "replaced text 替换")])
        delete = _vm_steps(index, index.delete, USER, ["m8", "m9"])
        assert index.count(USER) == size - 2 and "m7" in index.ids(USER)
        assert [i for i, _ in index.search(USER, "替换", 5)] == ["m7"]
        steps.append((upsert, delete))
        index.close()
    (small_up, small_del), (big_up, big_del) = steps
    assert big_up <= 2 * small_up + 5 and big_del <= 2 * small_del + 5, steps


def test_an_index_without_the_row_map_is_mapped_on_open(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    index = FtsIndex(path)
    index.upsert(USER, [("a", "alpha text"), ("b", "beta 文本")])
    with index._db:  # as written before the row map existed
        index._db.execute("DELETE FROM memory_rows")
        index._db.execute("PRAGMA user_version = 0")
    index.close()
    reopened = FtsIndex(path)
    try:
        assert reopened.ids(USER) == {"a", "b"} and reopened.count(USER) == 2
        reopened.delete(USER, ["a"])
        assert reopened.count() == 1 and [i for i, _ in reopened.search(USER, "文本", 5)] == ["b"]
    finally:
        reopened.close()


# --------------------------------------------------------------------------- keyword search

WORDS = ("billing", "service", "review", "build", "atlas", "status", "notes", "tests")


def _texts(size: int, first: str = "") -> list[tuple[str, str]]:
    """``size`` texts sharing common words (every one matches a broad query); the first
    one also says ``first``; every tenth one is Chinese."""
    out = []
    for n in range(size):
        if n % 10 == 9:
            text = f"支付 服务 评审 构建 第{n}条 记录"
        else:
            text = " ".join(WORDS[(n + k) % len(WORDS)] for k in range(4)) + f" item{n}"
        if n == 0 and first:
            text += " " + first
        out.append((f"m{n}", text))
    return out


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Window sizes scaled down so that a few thousand texts count as a large store."""
    monkeypatch.setattr(fts_module, "EXACT_ROWS", 300)
    monkeypatch.setattr(fts_module, "WINDOW_ROWS", 100)
    monkeypatch.setattr(fts_module, "RARE_MAX", 10)


@pytest.mark.parametrize("others", [True, False], ids=["newer-rows-of-bob", "alice-alone"])
@pytest.mark.parametrize("query", ["billing service build status", "支付 服务 评审"])
def test_keyword_search_ranks_a_bounded_number_of_rows_at_any_size(
    tmp_path: Path, small_windows: None, query: str, others: bool
) -> None:
    costs, steps = [], []
    for size in (1000, 8000):
        index = FtsIndex(tmp_path / f"k{size}.db")
        index.upsert(USER, _texts(size))
        if others:  # rows of another user, all newer than alice's window
            bob = [(f"b{n}", "billing service 支付 服务") for n in range(size // 4)]
            index.upsert("bob", bob)
        hits = index.search(USER, query, 20)
        assert len(hits) == 20 and all(mem_id.startswith("m") for mem_id, _ in hits)
        costs.append(index.last_cost)
        steps.append(_vm_steps(index, index.search, USER, query, 20))
        index.close()
    small, big = costs
    assert small.windows == big.windows >= 1, costs
    # the window holds WINDOW_ROWS texts (×4 when the Chinese query finds too few there):
    # what is ranked and read does not grow with the store
    assert small.rows_ranked == big.rows_ranked <= 400, costs
    assert big.counted <= small.counted + 20, costs
    assert steps[1] <= steps[0] * 1.5 + 5, steps


def test_a_small_store_is_ranked_exactly_by_fts5(tmp_path: Path, small_windows: None) -> None:
    index = FtsIndex(tmp_path / "k.db")
    index.upsert(USER, _texts(200))
    hits = index.search(USER, "billing atlas", 10)
    assert index.last_cost.windows == 0 and index.last_cost.rows_ranked > 100
    # the same order FTS5's bm25() gives over every match of the user's text
    expected = [
        str(r[0])
        for r in index._db.execute(
            "SELECT mem_id FROM memory_fts WHERE memory_fts MATCH ? AND user_id = ? "
            "ORDER BY bm25(memory_fts, 1.0, 0.0, 0.0, 0.0), rowid LIMIT 10",
            ('content:"billing" OR content:"atlas"', USER),
        )
    ]
    assert [mem_id for mem_id, _ in hits] == expected
    index.close()


def test_an_old_text_with_a_rare_word_is_found_outside_the_window(
    tmp_path: Path, small_windows: None
) -> None:
    index = FtsIndex(tmp_path / "k.db")
    index.upsert(USER, _texts(3000, first="zeppelin"))
    hits = index.search(USER, "billing service zeppelin", 5)
    assert index.last_cost.windows == 1
    assert hits[0][0] == "m0"  # the rare word outweighs the recent common matches
    index.close()


def test_a_window_without_enough_matches_widens(tmp_path: Path, small_windows: None) -> None:
    index = FtsIndex(tmp_path / "k.db")
    items = _texts(3000)
    # "legacy" is in 60 old texts (more than RARE_MAX) and none of the newest
    items = [(i, t + (" legacy" if n < 60 else "")) for n, (i, t) in enumerate(items)]
    index.upsert(USER, items)
    hits = index.search(USER, "legacy", 20)
    assert len(hits) == 20 and {int(i[1:]) for i, _ in hits} <= set(range(60))
    assert index.last_cost.windows > 1
    index.close()


def test_other_users_never_show_in_a_windowed_search(tmp_path: Path, small_windows: None) -> None:
    index = FtsIndex(tmp_path / "k.db")
    index.upsert(USER, _texts(1000))
    index.upsert("bob", [(f"b{n}", f"billing zeppelin secret{n}") for n in range(500)])
    for query in ("billing zeppelin", "secret3 billing"):
        hits = index.search(USER, query, 50)
        assert hits and all(mem_id.startswith("m") for mem_id, _ in hits)
        assert index.last_cost.windows >= 1
    assert index.search("carol", "billing", 5) == []
    index.close()


def test_an_index_without_the_owner_column_is_rebuilt_on_open(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE VIRTUAL TABLE memory_fts USING fts5(
            content, mem_id UNINDEXED, user_id UNINDEXED, tokenize='porter unicode61');
        CREATE TABLE memory_rows (user_id TEXT NOT NULL, mem_id TEXT NOT NULL,
            row INTEGER NOT NULL, PRIMARY KEY (user_id, mem_id)) WITHOUT ROWID;
        INSERT INTO memory_fts(rowid, content, mem_id, user_id) VALUES
            (5, 'alpha text', 'a', 'alice'), (9, 'beta 文 本', 'b', 'alice'),
            (11, 'alpha beta', 'c', 'bob');
        INSERT INTO memory_rows VALUES ('alice', 'a', 5), ('alice', 'b', 9), ('bob', 'c', 11);
        PRAGMA user_version = 1;
        """
    )
    db.commit()
    db.close()
    index = FtsIndex(path)
    try:
        assert [i for i, _ in index.search("alice", "alpha", 5)] == ["a"]
        assert [i for i, _ in index.search("bob", "alpha", 5)] == ["c"]
        assert [i for i, _ in index.search("alice", "文本", 5)] == ["b"]
        index.delete("alice", ["b"])  # the row map still points at the same rowids
        assert index.count("alice") == 1 and index.count() == 2
    finally:
        index.close()
