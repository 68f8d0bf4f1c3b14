"""A keyword search ranks a bounded number of index rows however large the store grows
(counted through ``FactStore.keyword_rows_ranked``, never timed), and the bound does not
cost recall: facts sharing a rare word with the query are found wherever they are, a user
whose facts are old is still served, and no user sees another's facts.

The window sizes are shrunk on the store instance so that a few hundred facts reach the
windowed path the defaults reach at a few thousand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_memory_holographic import hrr as hrr_mod
from hermes_memory_holographic.store import FactStore

EN = "I really like the billing service build {n}"
ZH = "我喜欢支付服务的第{n}号构建"


def _store(path: Path, use_hrr: bool, **sizes: int) -> FactStore:
    store = FactStore(path, use_hrr=use_hrr, hrr_dim=64)
    store.window_min = sizes.get("window_min", 64)
    store.window_target = sizes.get("window_target", 40)
    store.exact_max = sizes.get("exact_max", 100)
    store.rare_max = sizes.get("rare_max", 10)
    return store


def _fill(store: FactStore, user: str, start: int, count: int) -> None:
    for n in range(start, start + count):
        store.add(user, (EN if n % 2 == 0 else ZH).format(n=n))


def _rows_per_search(store: FactStore, query: str) -> int:
    before = store.keyword_rows_ranked
    assert store.search("u", query, limit=5)
    return store.keyword_rows_ranked - before


@pytest.fixture(params=[True, False], ids=["hrr", "keyword"])
def use_hrr(request: pytest.FixtureRequest) -> bool:
    return bool(request.param) and hrr_mod.available()


@pytest.mark.parametrize("query", ["do I still like the billing service?", "我还喜欢支付服务吗"])
def test_rows_ranked_per_search_do_not_grow_with_the_store(
    tmp_path: Path, use_hrr: bool, query: str
) -> None:
    ranked = []
    for size in (200, 800):
        store = _store(tmp_path / f"{size}.db", use_hrr)
        try:
            _fill(store, "u", 0, size)
            ranked.append(_rows_per_search(store, query))
        finally:
            store.close()
    small, large = ranked
    assert 0 < large <= 2 * 64  # about one window, never the 400 facts that match
    assert large <= small + 10


def test_without_the_window_every_match_is_ranked(tmp_path: Path, use_hrr: bool) -> None:
    """The counter is honest: with the exact path forced, the rows ranked are every match."""
    store = _store(tmp_path / "m.db", use_hrr, exact_max=10**9)
    try:
        _fill(store, "u", 0, 600)
        assert _rows_per_search(store, "do I still like the billing service?") == 300
    finally:
        store.close()


@pytest.mark.parametrize(
    ("old", "query"),
    [
        ("I really like the billing service of Zanzibar Telecom", "billing service zanzibar"),
        ("我喜欢支付服务里的鹦鹉图标", "支付服务的鹦鹉"),
    ],
)
def test_an_old_fact_with_a_rare_word_is_found_outside_the_window(
    tmp_path: Path, use_hrr: bool, old: str, query: str
) -> None:
    store = _store(tmp_path / "m.db", use_hrr)
    try:
        fact, _ = store.add("u", old)
        _fill(store, "u", 0, 800)
        found = store.search("u", query, limit=5)
        assert found[0].id == fact.id
        assert store.keyword_rows_ranked <= 2 * 64 + 10  # the window + the rare word's rows
    finally:
        store.close()


def test_a_user_with_only_old_facts_is_served_and_users_stay_apart(
    tmp_path: Path, use_hrr: bool
) -> None:
    store = _store(tmp_path / "m.db", use_hrr)
    try:
        _fill(store, "old", 0, 40)
        _fill(store, "new", 40, 800)  # the recent ids all belong to another user
        found = store.search("old", "I like the billing service", limit=5)
        assert len(found) == 5 and all(f.user_id == "old" for f in found)
        recent = store.search("new", "I like the billing service", limit=5)
        assert len(recent) == 5 and all(f.user_id == "new" for f in recent)
        assert store.search("nobody", "I like the billing service") == []
    finally:
        store.close()


def test_small_stores_rank_exactly(tmp_path: Path, use_hrr: bool) -> None:
    """Below the window sizes nothing changes: every match is ranked by bm25."""
    store = _store(tmp_path / "m.db", use_hrr, window_min=1024)
    try:
        _fill(store, "u", 0, 200)
        store.add("u", "The billing service build is green again, billing fixed")
        # the 100 English facts and this one
        assert _rows_per_search(store, "billing service build") == 101
    finally:
        store.close()


def test_mark_retrieved_keeps_the_sync_mode_and_the_counts(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = FactStore(path, use_hrr=False)
    fact, _ = store.add("u", "Alice likes green tea")
    mode = store._db.execute("PRAGMA synchronous").fetchone()[0]
    store.mark_retrieved("u", [fact.id, fact.id])
    store.mark_retrieved("other", [fact.id])  # another user's id: not counted
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == mode
    store.close()
    again = FactStore(path, use_hrr=False)
    try:
        got = again.get("u", fact.id)
        assert got is not None and got.retrieval_count == 2
    finally:
        again.close()
