"""A long archive still finds old sessions (issue 28, point 5).

Broad queries are ranked in a recent window of message ids (issue 22). A query that mixes a
common word with rare ones ("coffee grinder conical burr", "数据库熔断演练") must still find an
old session that is its only real match: the rare terms are looked up over the whole archive
and their rows ranked with the window's. The window constants are scaled down (as in
``test_sessions_bounded``) so that a few thousand messages exercise the code a 1M-message
archive runs; each test runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.host import MemoryHost
from hermes_core.layers.sessions import ranking
from hermes_core.layers.sessions.archive import SessionStore
from hermes_core.layers.sessions.ranking import SearchFilters, rank
from hermes_core.layers.sessions.search import SessionSearch
from hermes_core.layers.sessions.store import open_configured
from hermes_core.scope import ALL_USERS

NEEDLES = {
    "coffee grinder conical burr": "the new conical burr grinder makes the coffee sweeter",
    "数据库熔断演练": "周五下午我们做了数据库熔断演练，切换只用了八秒",
    "xylophone tokenizer": "my xylophone tokenizer splits each melody into note tokens",
    "缓存雪崩预案": "缓存雪崩预案已经写好了，明天评审",
}
"""Query → the text of the one old message that really matches it. ``coffee``, ``数据库``,
``缓存`` and ``token`` (the stem of "tokenizer") are in every filler message."""


FILLER = 2_000


def _filler(db: SessionStore, n: int, *, user: str | None = None, prefix: str = "f") -> None:
    """``n`` messages in sessions of 20, every one holding the common words of the needle
    queries (and a few words of its own), written in one transaction."""
    with db.transaction():
        for start in range(0, n, 20):
            sid = f"{prefix}{start // 20:05d}"
            db.create_session(sid, user_id=user, started_at=1_700_100_000.0 + start)
            msgs = []
            for i in range(start, min(n, start + 20)):
                text = f"coffee token notes topic{i % 40} 数据库和缓存的记录"
                msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
            db.append_messages(sid, msgs, user_id=user)


def _old_session(
    db: SessionStore, sid: str, text: str, *, user: str | None = None, start: float = 1.6e9
) -> None:
    db.create_session(sid, user_id=user, started_at=start)
    db.append_messages(
        sid,
        [
            {"role": "user", "content": "coffee and token chatter 数据库 缓存"},
            {"role": "assistant", "content": text},
            {"role": "user", "content": "thanks, noted"},
        ],
        user_id=user,
    )


@pytest.fixture
def archive(db: SessionStore, small_window: None) -> SessionStore:
    """Four old sessions, one per needle, then :data:`FILLER` newer messages."""
    for i, text in enumerate(NEEDLES.values()):
        _old_session(db, f"needle{i}", text, start=1.6e9 + i)
    _filler(db, FILLER)
    return db


def test_old_needle_is_found_first(archive: SessionStore) -> None:
    newest = int(archive.read("SELECT MAX(id) FROM messages")[0][0])
    for i, query in enumerate(NEEDLES):
        result = rank(archive, query)
        assert result.cost.windows >= 1, query  # broad: ranked in a recent window...
        needle_ids = [h.message_id for h in result.turns if h.session_id == f"needle{i}"]
        assert needle_ids and max(needle_ids) < newest - FILLER, query  # ...yet found
        assert result.sessions[0].session_id == f"needle{i}", query


def test_without_rare_discovery_the_window_misses_it(
    archive: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scenario can fail: ranked in the recent window only, the old session is gone."""
    monkeypatch.setattr(ranking, "RARE_MAX", 0)
    for i, query in enumerate(NEEDLES):
        assert f"needle{i}" not in {s.session_id for s in rank(archive, query).sessions}


def test_session_search_from_a_later_session_finds_the_needle(archive: SessionStore) -> None:
    search = SessionSearch(archive)
    archive.create_session("later")
    for i, query in enumerate(NEEDLES):
        archive.append_messages("later", [{"role": "user", "content": query}], user_id=ALL_USERS)
        out = search.run({"query": query}, "later")
        assert out["success"] is True
        assert [r["session_id"] for r in out["results"]][:1] == [f"needle{i}"], query


def test_explicit_not_still_excludes_old_rows(archive: SessionStore) -> None:
    found = {s.session_id for s in rank(archive, "token conical").sessions}
    assert "needle0" in found  # found through the rare "conical"...
    excluded = rank(archive, "token conical NOT sweeter")
    assert excluded.cost.windows >= 1
    assert "needle0" not in {s.session_id for s in excluded.sessions}  # ...unless excluded


def test_discovery_stays_bounded(archive: SessionStore) -> None:
    """A word in more messages than ``RARE_MAX`` is not read below the window, and rare
    rows are capped at ``RARE_ROWS_MAX``: the rows ranked do not grow with the archive."""
    for i in range(3 * ranking.RARE_MAX):  # "grinder" is now common in old sessions
        _old_session(archive, f"grind{i}", f"grinder talk {i}", start=1.5e9 + i)
    _filler(archive, 600, prefix="g")
    result = rank(archive, "coffee grinder conical burr")
    assert result.cost.windows >= 1
    assert result.cost.rows_ranked <= 4 * ranking.WINDOW_TARGET + ranking.RARE_ROWS_MAX
    assert result.sessions[0].session_id == "needle0"  # found through "conical", "burr"


def test_common_words_only_stay_in_the_window(archive: SessionStore) -> None:
    """Queries of common words only are ranked as before: recent window, no old rows."""
    result = rank(archive, "coffee token")
    assert result.cost.windows >= 1
    assert not {h.session_id for h in result.turns} & {f"needle{i}" for i in range(4)}


@pytest.mark.parametrize("query", ["coffee grinder conical burr", "数据库熔断演练"])
def test_needle_of_another_user_stays_invisible(
    db: SessionStore, small_window: None, query: str
) -> None:
    text = NEEDLES[query]
    _old_session(db, "bob-old", text, user="bob", start=1.6e9)
    _old_session(db, "alice-old", text, user="alice", start=1.6e9 + 1)
    _filler(db, 1_000, user="alice", prefix="a")
    _filler(db, 1_000, user="bob", prefix="b")
    for user, own in (("alice", "alice-old"), ("bob", "bob-old")):
        result = rank(db, query, SearchFilters(user_id=user))
        assert result.cost.windows >= 1
        assert result.sessions[0].session_id == own
        prefix = user[0]
        assert all(h.session_id == own or h.session_id.startswith(prefix) for h in result.turns)
    nobody = rank(db, query, SearchFilters(user_id="carol"))
    assert nobody.sessions == []


def test_public_api_needle_from_a_later_session(
    home: Path, small_window: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the host: turns written with ``after_turn``, ``session_search`` called by a
    later session of the same user; another user's archive is never searched."""
    host: Any = MemoryHost.open(home)
    try:
        with host.session(user_id="u1") as old:
            old.after_turn("what grinder did I buy?", NEEDLES["coffee grinder conical burr"])
            old.after_turn("还有什么？", NEEDLES["数据库熔断演练"])
        with host.session(user_id="u2") as other:
            other.after_turn("my grinder", NEEDLES["coffee grinder conical burr"])
        db = open_configured(home)
        _filler(db, 1_000, user="u1", prefix="u1f")
        _filler(db, 1_000, user="u2", prefix="u2f")
        db.close()
        with host.session(user_id="u1") as later:
            for query in ("coffee grinder conical burr", "数据库熔断演练"):
                out = json.loads(later.call_tool("session_search", {"query": query}))
                assert out["success"] is True
                found = [r["session_id"] for r in out["results"]]
                assert found[:1] == [old.id], (query, found)
                assert other.id not in found
    finally:
        host.close()
