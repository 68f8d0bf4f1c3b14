"""Full-text search: English stemming, CJK 1/2/3+ characters, tools, caps, the sanitiser."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.layers.sessions import db as dbmod
from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.fts import build_match, parse_query, split_cjk
from hermes_core.layers.sessions.ranking import rank
from hermes_core.layers.sessions.search import SessionSearch
from hermes_core.scope import ALL_USERS


@pytest.fixture
def corpus(db: SessionDB, add_session: Any) -> SessionDB:
    add_session(db, "en", [("user", "We deployed the billing service to production yesterday")])
    add_session(db, "zh", [("user", "用户喜欢喝咖啡，我们今天讨论了向量数据库的设计")])
    add_session(db, "ja", [("assistant", "記憶のテストです")])
    add_session(db, "other", [("user", "Nothing relevant: tea and biscuits")])
    return db


def _sessions(db: SessionDB, query: str) -> list[str]:
    return [s.session_id for s in rank(db, query).sessions]


@pytest.mark.parametrize("query", ["deploying", "deploys", "DEPLOY", "deployed"])
def test_porter_stemming(corpus: SessionDB, query: str) -> None:
    assert _sessions(corpus, query) == ["en"]


@pytest.mark.parametrize(
    "query",
    ["咖", "会", "咖啡", "记忆", "数据库", "向量数据库", "讨论了向量数据库的设计", "喝 咖啡"],
)
def test_chinese_queries_of_every_length(db: SessionDB, add_session: Any, query: str) -> None:
    add_session(db, "zh", [("user", "用户喜欢喝咖啡。明天开会讨论向量数据库的设计和记忆系统")])
    add_session(db, "en", [("user", "coffee and databases in English only")])
    assert _sessions(db, query) == ["zh"]


def test_chinese_does_not_match_unrelated(corpus: SessionDB) -> None:
    assert _sessions(corpus, "茶叶") == []
    assert _sessions(corpus, "記憶") == ["ja"]


def test_mixed_language_query(corpus: SessionDB) -> None:
    assert set(_sessions(corpus, "billing 咖啡")) == {"en", "zh"}


def test_tool_names_and_arguments_are_indexed(db: SessionDB) -> None:
    db.append_messages(
        "t",
        [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "1",
                        "type": "function",
                        "function": {
                            "name": "web_fetch",
                            "arguments": '{"url": "https://kubernetes.io/docs"}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "1", "name": "web_fetch", "content": "ok"},
        ],
        user_id=ALL_USERS,
    )
    assert _sessions(db, "web_fetch") == ["t"]
    assert _sessions(db, "kubernetes") == ["t"]


def test_huge_tool_output_is_capped_in_index(db: SessionDB) -> None:
    big = "start " + "filler " * 5000 + " needleattheend"
    db.append_messages("t", [{"role": "tool", "name": "cat", "content": big}], user_id=ALL_USERS)
    assert _sessions(db, "start") == ["t"]
    assert _sessions(db, "needleattheend") == []  # beyond the 8192-char cap
    # the index keeps no copy of the text (contentless); the message itself is stored whole
    if db.backend == "sqlite":
        assert db.read("SELECT body FROM messages_fts")[0][0] is None
    assert db.get_messages("t")[0].content == big


def test_split_cjk() -> None:
    assert split_cjk("喝咖啡ok") == " 喝  咖  啡 ok"
    assert split_cjk("plain") == "plain"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("deploying the app", '"deploying" OR "app"'),
        ("chat-send", '"chat send"'),
        ('"exact phrase', '"exact phrase"'),
        ("foo OR", '"foo"'),
        ("a NOT b", '("a") NOT ("b")'),
        ("memo*", '"memo"*'),
        ("(((", None),
        ('"', None),
        ("", None),
        ("咖啡", '"咖 啡"'),
    ],
)
def test_build_match_examples(query: str, expected: str | None) -> None:
    assert build_match(query) == expected


def test_stopwords_kept_when_nothing_else() -> None:
    assert build_match("the") == '"the"'
    assert [t.words for t in parse_query("what is the plan")] == [
        ("what",),
        ("is",),
        ("the",),
        ("plan",),
    ]


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.sampled_from(
            [
                *list("abcXYZ 019\"'()*-:^+.,!?{}[]~`\\/|<>@#$%&=;_\t\n"),
                " AND ",
                " OR ",
                " NOT ",
                "NEAR",
                "咖",
                "啡",
                "数",
                "é",
                "\u200b",
                "\x00",
                "🙂",
                "deploy",
                "chat",
                " the ",
                "2023",
                "June",
            ]
        ),
        max_size=25,
    ).map("".join)
)
def test_any_query_is_valid_fts5(db_with_rows: SessionDB, query: str) -> None:
    match = build_match(query)
    if match is not None:
        db_with_rows.fts_rowids(match)  # the backend accepts it (FTS5 MATCH / tsquery)
    rank(db_with_rows, query)  # never raises
    out = SessionSearch(db_with_rows).run({"query": query})
    assert out["success"] is True or "error" in out
    assert out["success"] is True


@pytest.fixture
def db_with_rows(db: SessionDB, add_session: Any) -> SessionDB:
    add_session(db, "s", [("user", "abc XYZ 019 chat-send 咖啡 数据 é NEAR and or not")])
    return db


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_unicode_builds_valid_match(query: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(body, meta, tokenize='porter unicode61')")
    conn.execute("INSERT INTO f VALUES ('some text', '')")
    match = build_match(query)
    if match is not None:
        conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (match,)).fetchall()
    conn.close()


def test_without_fts5_storage_works_and_search_explains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dbmod, "probe_fts5", lambda conn: "FTS5 missing (simulated)")
    store = SessionDB.open(tmp_path)
    assert not store.fts_enabled
    store.append_messages("s", [{"role": "user", "content": "still stored"}], user_id=ALL_USERS)
    assert store.get_messages("s")[0].content == "still stored"
    out = SessionSearch(store).run({"query": "stored"})
    assert out["success"] is False
    assert "FTS5 missing (simulated)" in out["error"]
    browse = SessionSearch(store).run({})
    assert browse["success"] is True and browse["count"] == 1
    store.close()


def test_full_width_forms_match_ascii_both_ways(db: SessionDB, add_session: Any) -> None:
    """A CJK input method in full-width mode types ｎｇｉｎｘ / ２０２４; those find the ASCII
    text, and full-width text in the archive is found by an ASCII query."""
    add_session(db, "ascii", [("user", "重启 nginx 之后 port 8080 可以访问了")])
    add_session(db, "wide", [("user", "ＤＯＣＫＥＲ 镜像 构建失败")])
    add_session(db, "other", [("user", "今天天气不错 sunny day")])
    assert _sessions(db, "ｎｇｉｎｘ") == ["ascii"]
    assert _sessions(db, "８０８０") == ["ascii"]
    assert _sessions(db, "docker") == ["wide"]
    assert _sessions(db, "Ｄｏｃｋｅｒ 镜像") == ["wide"]
