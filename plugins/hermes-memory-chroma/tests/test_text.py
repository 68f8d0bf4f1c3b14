"""Pure text helpers: normalisation, hashing, CJK splitting, FTS5 query building."""

from __future__ import annotations

import sqlite3

import pytest

from hermes_memory_chroma.text import content_hash, fts_query, normalize, split_cjk


def test_normalize_folds_case_punctuation_and_width() -> None:
    assert normalize("  The User LIKES tea!! ") == "the user likes tea"
    assert normalize("ＡＢＣ，用户") == "abc 用 户"


def test_content_hash_collides_for_cosmetic_differences_only() -> None:
    assert content_hash("Likes tea.") == content_hash("likes   TEA")
    assert content_hash("Likes tea.") != content_hash("Likes coffee.")
    assert content_hash("我喜欢咖啡。") == content_hash("我喜欢咖啡")


def test_split_cjk_spaces_every_cjk_character() -> None:
    assert split_cjk("我们讨论了vector数据库") == "我 们 讨 论 了 vector 数 据 库"


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("Which editor do I like?", '"editor"'),
        ("咖啡", '"咖 啡"'),
        ("我喜欢喝什么饮料？", '"饮 料"'),
    ],
)
def test_fts_query_builds_terms(query: str, fragment: str) -> None:
    expr = fts_query(query)
    assert expr is not None and fragment in expr


def test_fts_query_drops_stopwords_and_neutralises_syntax() -> None:
    expr = fts_query('what is the "NEAR(" OR * AND -x')
    assert expr is not None
    assert '"the"' not in expr and '"what"' not in expr
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(c, tokenize='porter unicode61')")
    db.execute("INSERT INTO t VALUES ('near and x')")
    db.execute("SELECT * FROM t WHERE t MATCH ?", (expr,)).fetchall()  # no syntax error


def test_fts_query_of_only_punctuation_is_none() -> None:
    assert fts_query("?!...") is None
    assert fts_query("") is None


def test_fts_query_keeps_stopwords_when_nothing_else_is_left() -> None:
    assert fts_query("what is it") is not None
