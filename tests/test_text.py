"""Shared text helpers: CJK spacing and message text."""

from __future__ import annotations

import sqlite3

import pytest

from hermes_core import recall_pack
from hermes_core.layers.sessions import ranking
from hermes_core.text import (
    ASKS_ABOUT_REPLIES,
    FIRST_PERSON,
    about_the_asker,
    content_text,
    has_cjk,
    space_cjk,
)


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


def test_first_person_is_a_whole_word_with_either_apostrophe() -> None:
    for text in ("what did I buy", "I'm sure", "I’m sure", "I’ve been", "tell me", "my dog"):
        assert FIRST_PERSON.search(text), text
    for text in ("我的狗", "我们", "Mine."):
        assert FIRST_PERSON.search(text), text
    for text in ("the iPhone", "image", "mystery", "domain", "Mike's bike", "Mike’s bike"):
        assert not FIRST_PERSON.search(text), text
    assert not FIRST_PERSON.search("你的狗")


def test_questions_about_the_assistants_replies() -> None:
    for text in (
        "the restaurant you recommended to me",
        "You mentioned my budget",
        "what you told me",
        "What did you recommend I read?",
        "you’ve suggested three hotels",
        "Can you remind me of the brand?",
        "你推荐的餐厅",
        "你之前说过我的预算",
        "您上次提到的书",
        "你跟我说过什么？",
        "你上次对我讲的那本书",
        "提醒我一下那家店的名字",
    ):
        assert ASKS_ABOUT_REPLIES.search(text), text
    for text in ("Can you recommend a movie for me?", "did I tell you about my dog", "你好吗"):
        assert not ASKS_ABOUT_REPLIES.search(text), text


@pytest.mark.parametrize(
    ("query", "mine"),
    [
        ("What streaming service have I been using lately?", True),
        ("Where did my sister move?", True),
        ("I’m trying to decide on a NAS. What do you think?", True),
        ("Can you suggest some accessories for my phone?", True),
        ("What did you recommend I read?", False),
        ("Can you remind me how much I budgeted?", False),
        ("What is the capital of France?", False),
        ("我最近在用哪个音乐软件？", True),
        ("你觉得我该买吗？", True),
        ("你推荐我读哪本书？", False),
        ("提醒我一下我的预算是多少", False),
        ("你跟我说过我该读哪本书？", False),
        ("你和我一起定的计划是什么？", True),
        ("小红去了哪里？", False),
    ],
)
def test_about_the_asker_en_and_zh(query: str, mine: bool) -> None:
    assert about_the_asker(query) is mine


def test_one_detector_serves_the_ranking_and_the_packer() -> None:
    assert recall_pack.about_the_asker is about_the_asker
    assert ranking.about_the_asker is about_the_asker
