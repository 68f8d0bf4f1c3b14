"""Shared text helpers: CJK spacing and message text."""

from __future__ import annotations

import sqlite3

from hermes_core.text import content_text, has_cjk, space_cjk


def test_space_cjk_makes_short_chinese_queries_match_in_fts5() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61')")
    for text in ("用户喜欢喝咖啡", "我们今天讨论了向量数据库的设计", "The user likes coffee"):
        conn.execute("INSERT INTO t(body) VALUES (?)", (space_cjk(text),))
    raw = conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", ('"咖啡"',)).fetchone()[0]
    assert raw == 0  # unspaced query: the run of characters is one token
    for query, expected in (("咖啡", 1), ("会", 0), ("数据库", 1), ("我", 1), ("coffee", 1)):
        phrase = '"' + space_cjk(query) + '"'
        hits = conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (phrase,)).fetchone()[0]
        assert hits == expected, query


def test_space_cjk_keeps_latin_words_and_collapses_spaces() -> None:
    assert space_cjk("部署 to  staging 服务器") == "部 署 to staging 服 务 器"
    assert space_cjk("plain english") == "plain english"
    assert has_cjk("日本語テキスト") and has_cjk("한국어") and not has_cjk("café")


def test_content_text_shapes() -> None:
    parts = [
        {"type": "text", "text": "look at this"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        "tail",
    ]
    assert content_text(None) == ""
    assert content_text("你好") == "你好"
    assert content_text(parts) == "look at this\ntail"
    assert content_text(parts, image_placeholder="[image]") == "look at this\n[image]\ntail"
    assert content_text({"k": "值"}) == '{"k": "值"}'


def test_like_escape_makes_wildcards_literal() -> None:
    import sqlite3

    from hermes_core.text import like_escape

    conn = sqlite3.connect(":memory:")
    rows = ["100% done", "1000 done", "a_b 部署", "axb 部署", "back\\slash"]
    for needle, expected in (("100%", "100% done"), ("a_b", "a_b 部署"), ("\\", "back\\slash")):
        hits = [
            r
            for r in rows
            if conn.execute(
                "SELECT ? LIKE ? ESCAPE '\\'", (r, f"%{like_escape(needle)}%")
            ).fetchone()[0]
        ]
        assert hits == [expected]
