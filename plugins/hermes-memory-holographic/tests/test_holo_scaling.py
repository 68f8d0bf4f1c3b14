"""The HRR matrix is read once per user and then kept in step by fact id: a search reads
no vector rows, however many facts there are (counted, never timed)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hermes_memory_holographic import hrr as hrr_mod
from hermes_memory_holographic.store import FactStore

pytestmark = pytest.mark.skipif(not hrr_mod.available(), reason="needs the [hrr] extra")

EN = "Alice reviewed the billing service build {n} with Project Atlas"
ZH = "王芳 在 第{n}号 构建 上 评审 支付 服务"


def _filled(path: Path, size: int) -> FactStore:
    store = FactStore(path, hrr_dim=256)
    for n in range(size):
        store.add("u", (EN if n % 2 == 0 else ZH).format(n=n))
    return store


@pytest.mark.parametrize("query", ["billing service build", "支付 服务 构建"])
def test_search_reads_each_vector_once_at_any_size(tmp_path: Path, query: str) -> None:
    per_search = []
    for size in (50, 500):
        store = _filled(tmp_path / f"{size}.db", size)
        try:
            store.search("u", query)  # loads the matrix: one read per fact
            assert store.vector_rows_read == size
            before = store.vector_rows_read
            for _ in range(3):
                assert store.search("u", query)
                store.probe("u", "Alice")
            per_search.append(store.vector_rows_read - before)
        finally:
            store.close()
    assert per_search == [0, 0]


def test_writes_update_the_matrix_by_id(tmp_path: Path) -> None:
    store = _filled(tmp_path / "m.db", 20)
    try:
        store.search("u", "billing")
        loaded = store.vector_rows_read
        fact, _ = store.add("u", "Bob 喜欢 围棋 and chess openings")
        assert store.vector_rows_read == loaded + 1  # only the new row
        assert fact.id in store._user_vectors("u")
        assert [f.id for f in store.search("u", "chess openings")][:1] == [fact.id]
        store.update("u", fact.id, trust_delta=-0.5)  # below min_trust: hidden at once
        assert fact.id not in [f.id for f in store.search("u", "chess openings围棋")]
        store.remove("u", fact.id)
        assert fact.id not in store._user_vectors("u")
        assert len(store._user_vectors("u")) == 20
        assert store.vector_rows_read == loaded + 2  # the update's row; the removal reads none
    finally:
        store.close()


def test_another_process_writes_are_seen(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = _filled(path, 10)
    other = FactStore(path, hrr_dim=256)
    try:
        store.search("u", "billing")
        fact, _ = other.add("u", "Carol prefers green tea 绿茶")
        assert [f.id for f in store.search("u", "green tea")][:1] == [fact.id]
        other.remove("u", fact.id)
        assert fact.id not in store._user_vectors("u")
    finally:
        other.close()
        store.close()


def test_a_failed_write_leaves_no_trace_in_the_matrix(tmp_path: Path) -> None:
    store = _filled(tmp_path / "m.db", 4)
    try:
        store.search("u", "billing")
        fact, _ = store.add("u", "Dan likes rust")
        with pytest.raises(Exception):  # noqa: B017 - clash with an existing fact
            store.update("u", fact.id, content=EN.format(n=0))
        assert len(store._user_vectors("u")) == 5  # re-read after the rollback
        assert isinstance(store._db, sqlite3.Connection)
    finally:
        store.close()
