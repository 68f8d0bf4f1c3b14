"""Bounded archive search and storing each message text once (issue 22, point 4).

Complexity is pinned without timing: the ranking's own counters (:class:`Cost`) and the
SQLite virtual-machine steps of a search (progress handler) at two archive sizes. The window
constants are scaled down so that small archives exercise the same code a 1M-message archive
does; latency figures are in docs/benchmarks.md (``hermes-memory bench sessions``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.layers.sessions import ranking
from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.fts import FTS_TOKENIZER, index_fields
from hermes_core.layers.sessions.ranking import SearchFilters, rank
from hermes_core.layers.sessions.schema import MIGRATIONS, SCHEMA_VERSION, is_contentless
from hermes_core.layers.sessions.search import SessionSearch
from hermes_core.layers.sessions.store import open_configured
from hermes_core.scope import ALL_USERS


def _fill(db: SessionDB, n: int, *, user: str | None = None, prefix: str = "s") -> None:
    """``n`` messages in sessions of 20; every message holds the broad words ("coffee" in
    all, "deploy" in half, "数据库" in a third); one in 97 the rare "kubernetes"."""
    with db.transaction():
        for start in range(0, n, 20):
            sid = f"{prefix}{start // 20:05d}"
            db.create_session(sid, user_id=user, started_at=1_700_000_000.0 + start)
            msgs = []
            for i in range(start, min(n, start + 20)):
                words = ["coffee", f"topic{i % 50}", "notes"]
                if i % 2:
                    words.append("deploy")
                if i % 3 == 0:
                    words.append("数据库里的记录")
                if i % 97 == 0:
                    words.append("kubernetes")
                msgs.append(
                    {"role": "user" if i % 2 == 0 else "assistant", "content": " ".join(words)}
                )
            db.append_messages(sid, msgs, user_id=user)


def _vm_steps(db: SessionDB, fn: object) -> int:
    """SQLite virtual-machine steps (in units of 100) run by ``fn()`` on this thread."""
    steps = 0

    def tick() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn = db._conn()
    conn.set_progress_handler(tick, 100)
    try:
        fn()  # type: ignore[operator]
    finally:
        conn.set_progress_handler(None, 100)
    return steps


@pytest.fixture
def archives(tmp_path: Path, small_window: None) -> Iterator[tuple[SessionDB, SessionDB]]:
    small = SessionDB.open(tmp_path / "small")
    large = SessionDB.open(tmp_path / "large")
    _fill(small, 2_000)
    _fill(large, 8_000)
    yield small, large
    small.close()
    large.close()


@pytest.mark.parametrize("query", ["coffee", "coffee deploy", "数据库", "deploy 数据库"])
def test_broad_discovery_reads_a_bounded_number_of_rows(
    archives: tuple[SessionDB, SessionDB], query: str
) -> None:
    small, large = archives
    costs = [rank(db, query).cost for db in (small, large)]
    for cost in costs:
        assert cost.windows >= 1  # ranked in a recent window, not over every match
        assert cost.rows_ranked <= 4 * ranking.WINDOW_TARGET + ranking.RARE_ROWS_MAX
        assert cost.postings_read <= 2 * 4 * ranking.WINDOW_TARGET
    steps = [_vm_steps(db, lambda db=db: rank(db, query)) for db in (small, large)]
    assert steps[1] <= 1.5 * steps[0] + 50, steps  # 4x the archive, about the same work


def test_unbounded_ranking_would_grow(
    archives: tuple[SessionDB, SessionDB], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counters can fail: ranking every match reads rows in proportion to the archive."""
    monkeypatch.setattr(ranking, "EXACT_MAX", 10**9)
    monkeypatch.setattr(ranking, "PRF_WEIGHT", 0.0)  # the feedback pass would rank as many again
    small, large = archives
    rows = [rank(db, "coffee").cost.rows_ranked for db in (small, large)]
    assert rows == [2_000, 8_000]


def test_selective_queries_still_rank_the_whole_archive(
    archives: tuple[SessionDB, SessionDB], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the primary ranking only: the feedback pass's expansion words are broad here
    monkeypatch.setattr(ranking, "PRF_WEIGHT", 0.0)
    _, large = archives
    result = rank(large, "kubernetes")
    assert result.cost.windows == 0
    assert result.cost.rows_ranked == len(range(0, 8_000, 97))  # old matches included


def test_window_widens_when_filters_leave_too_few(tmp_path: Path, small_window: None) -> None:
    """A user whose messages are old still finds them: the window widens past the recent
    messages of another user (and never returns that user's rows)."""
    db = SessionDB.open(tmp_path / "h")
    _fill(db, 600, user="alice", prefix="a")
    _fill(db, 3_000, user="bob", prefix="b")
    for query in ("coffee", "数据库"):
        result = rank(db, query, SearchFilters(user_id="alice"))
        sessions = {hit.session_id for hit in result.turns}
        assert sessions and all(s.startswith("a") for s in sessions)
        assert len(result.turns) >= ranking.CANDIDATES
        bob = rank(db, query, SearchFilters(user_id="bob"))
        assert all(h.session_id.startswith("b") for h in bob.turns)
    db.close()


def test_window_ranks_fuller_matches_first(
    tmp_path: Path, small_window: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the window stage alone: feedback would add its expansion words' scores on top
    monkeypatch.setattr(ranking, "PRF_WEIGHT", 0.0)
    db = SessionDB.open(tmp_path / "h")
    _fill(db, 1_500)
    result = rank(db, "topic7 数据库")
    assert result.cost.windows >= 1
    texts = {
        m.id: m.content
        for sid in {h.session_id for h in result.turns}
        for m in db.get_messages(sid)
    }
    both = [
        h
        for h in result.turns
        if "topic7 " in texts[h.message_id] + " " and "数据库" in texts[h.message_id]
    ]
    one = [
        h
        for h in result.turns
        if not ("topic7 " in texts[h.message_id] + " " and "数据库" in texts[h.message_id])
    ]
    assert both and one
    # the window's BM25 (before the neighbour/session stages) puts fuller matches first
    assert min(h.bm25 for h in both) > max(h.bm25 for h in one)
    assert result.turns[0] in both
    db.close()


# ----------------------------------------------------------------- text stored once


@pytest.mark.sqlite_only  # the SQLite file itself
def test_index_keeps_no_copy_of_the_text(db: SessionDB) -> None:
    db.append_messages(
        "s", [{"role": "user", "content": "我喜欢喝咖啡 and dark roast"}], user_id=ALL_USERS
    )
    assert is_contentless(db._conn())
    assert db.read("SELECT body, meta FROM messages_fts") == [(None, None)]
    tables = {r[0] for r in db.read("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "messages_fts_content" not in tables
    indexes = {r[0] for r in db.read("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "idx_messages_session" not in indexes and "idx_messages_session_id" in indexes


@pytest.mark.parametrize(
    ("query", "expected"),
    [("咖啡", ["zh"]), ("猫", ["ja"]), ("ねこ", ["ja"]), ("roast", ["en"]), ("kubectl", ["tool"])],
)
def test_cjk_and_english_search_on_contentless_index(
    db: SessionDB, query: str, expected: list[str]
) -> None:
    db.append_messages("zh", [{"role": "user", "content": "我喜欢喝咖啡"}], user_id=ALL_USERS)
    db.append_messages("ja", [{"role": "user", "content": "猫が好き、ねこです"}], user_id=ALL_USERS)
    db.append_messages(
        "en", [{"role": "assistant", "content": "a dark roast it is"}], user_id=ALL_USERS
    )
    db.append_messages(
        "tool",
        [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "1", "function": {"name": "shell", "arguments": '{"cmd": "kubectl"}'}}
                ],
            }
        ],
        user_id=ALL_USERS,
    )
    assert [s.session_id for s in rank(db, query).sessions] == expected


def _fts_rowids(db: SessionDB, word: str) -> list[int]:
    return db.fts_rowids(f'"{word}"')


def test_deleting_sessions_removes_their_index_rows(db: SessionDB) -> None:
    """Rows are removed with the exact text they were indexed with (recomputed): after the
    delete no term of theirs is left in the index — tool calls, names, CJK, redacted secrets
    and text beyond the cap included."""
    long = "start " + "filler " * 3000 + " tailword"
    secret = "my key is sk-abcdefghijklmnopqrstuvwxyz0123456789 keep it"
    db.append_messages(
        "gone",
        [
            {"role": "user", "name": "Maria", "content": "我喜欢喝咖啡 " + secret},
            {
                "role": "assistant",
                "content": "calling",
                "tool_calls": [
                    {"id": "1", "function": {"name": "web_fetch", "arguments": '{"url": "x.io"}'}}
                ],
            },
            {"role": "tool", "name": "web_fetch", "tool_call_id": "1", "content": long},
        ],
        user_id=ALL_USERS,
    )
    db.append_messages("kept", [{"role": "user", "content": "咖啡 stays here"}], user_id=ALL_USERS)
    assert _fts_rowids(db, "maria") and _fts_rowids(db, "web_fetch")
    assert db.delete_sessions(["gone"]) == 3
    for word in ("maria", "web_fetch", "calling", "start", "filler", "x", "喝", "keep"):
        assert _fts_rowids(db, word) == [], word
    kept = _fts_rowids(db, "咖")
    assert len(kept) == 1
    if db.backend == "sqlite":  # FTS5's own bookkeeping (on PostgreSQL the index is a column)
        assert db.read("SELECT COUNT(*) FROM messages_fts")[0][0] == 1
        db.read("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")


def test_index_cap_recorded_and_applied_by_reindex(home: Path) -> None:
    first = open_configured(home, index_char_cap=100)
    first.append_messages(
        "s", [{"role": "user", "content": "a " * 80 + "needle"}], user_id=ALL_USERS
    )
    first.close()
    again = open_configured(home, index_char_cap=4096)
    assert again.index_char_cap == 100  # the index was built with 100: removal needs it
    assert _fts_rowids(again, "needle") == []
    assert again.reindex() == 1
    assert again.index_char_cap == 4096 and _fts_rowids(again, "needle") != []
    assert again.delete_sessions(["s"]) == 1
    assert _fts_rowids(again, "a") == []
    again.close()


# ----------------------------------------------------------------- migration from schema 6


def _write_schema6(path: Path) -> None:
    """An archive as hermes-core schema 6 wrote it: FTS5 with its own copy of the text and
    both message indexes."""
    conn = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:4]:
        step(conn)
    conn.execute(
        f"CREATE VIRTUAL TABLE messages_fts USING fts5(body, meta, tokenize='{FTS_TOKENIZER}')"
    )
    MIGRATIONS[5](conn)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (6)")
    rows = [
        ("a1", "alice", "user", "我喜欢喝咖啡", None),
        ("a1", "alice", "assistant", "Noted: you like coffee, dark roast", None),
        ("b1", "bob", "user", "猫が好き and coffee too", "Bob"),
        ("n1", None, "user", "deploy the coffee service", None),
    ]
    for i, (sid, user, role, text, name) in enumerate(rows, start=1):
        conn.execute(
            "INSERT OR IGNORE INTO sessions(id, source, user_id, started_at) VALUES (?,?,?,?)",
            (sid, "cli", user, 1_700_000_000.0),
        )
        conn.execute(
            "INSERT INTO messages(id, session_id, role, content, name, timestamp) "
            "VALUES (?,?,?,?,?,?)",
            (i, sid, role, text, name, 1_700_000_000.0 + i),
        )
        body, meta = index_fields(text, name=name)
        conn.execute("INSERT INTO messages_fts(rowid, body, meta) VALUES (?,?,?)", (i, body, meta))
    conn.close()


@pytest.mark.sqlite_only  # the SQLite file itself
def test_archive_of_schema_6_is_migrated_and_searchable(home: Path) -> None:
    _write_schema6(home / "state.db")
    db = open_configured(home)
    assert db.schema_version() == SCHEMA_VERSION == 7
    assert is_contentless(db._conn())
    indexes = {r[0] for r in db.read("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "idx_messages_session" not in indexes
    search = SessionSearch(db)

    def found(query: str, user: str | None) -> list[str]:
        out = search.run({"query": query}, "current", user_id=user)
        return [r["session_id"] for r in out["results"]]

    assert found("咖啡", "alice") == ["a1"]
    assert found("coffee", "alice") == ["a1"]
    assert found("猫", "bob") == ["b1"]
    assert found("猫", "alice") == []  # another user's archive stays invisible
    assert found("coffee", None) == ["n1"]
    assert found("咖啡", "bob") == []
    # new messages and deletes work on the migrated index
    db.append_messages("a2", [{"role": "user", "content": "更多咖啡"}], user_id="alice")
    assert sorted(found("咖啡", "alice")) == ["a1", "a2"]
    assert db.delete_sessions(["a1"]) == 2
    assert found("咖啡", "alice") == ["a2"]
    assert _fts_rowids(db, "roast") == []
    db.close()
    again = open_configured(home)  # opening again changes nothing
    assert again.schema_version() == 7 and found_rows(again) == 3
    again.close()


def found_rows(db: SessionDB) -> int:
    return int(db.read("SELECT COUNT(*) FROM messages_fts")[0][0])
