"""Entity extraction (EN + ZH) and personalised PageRank on hand-made graphs."""

from __future__ import annotations

import math

import pytest

from hermes_memory_chroma.entities import entity_idf, extract_entities, personalized_pagerank


def test_english_names_and_keyphrases() -> None:
    found = extract_entities("Yes, Caroline went to New York for the pottery workshops.")
    assert {"caroline", "new york"} <= found
    assert {"potter", "worksh"} <= found  # keyphrases folded to six letters
    assert "yes" not in found and "the" not in found and "for" not in found
    # a sentence-initial function word is not a name, and short words are not keyphrases
    assert extract_entities("The cat sat.") == set()


def test_chinese_terms_are_character_pairs() -> None:
    found = extract_entities("我们做了数据库熔断演练，Alice 也参加了")
    assert {"数据", "据库", "熔断", "演练", "alice"} <= found
    assert "我们" not in found  # a pair holding a particle (我) is no term


def test_idf_is_log_one_plus_n_over_df() -> None:
    idf = entity_idf({"m1": ["a", "b"], "m2": ["a"], "m3": ["c", "c"]})
    assert idf["a"] == pytest.approx(math.log(1 + 3 / 2))
    assert idf["c"] == pytest.approx(math.log(1 + 3 / 1))


def test_ppr_on_a_five_node_graph() -> None:
    # m1 -x- m2 -y- m3 ; m4 stands alone (entity z)
    links = {"m1": ["x"], "m2": ["x", "y"], "m3": ["y"], "m4": ["z"]}
    scores = personalized_pagerank(links, {"m1": 1.0}, alpha=0.5, iterations=1)
    # one step: m1 keeps its restart share 0.5, the walked 0.5 sits on entity x
    assert scores == {"m1": pytest.approx(0.5)}
    scores = personalized_pagerank(links, {"m1": 1.0}, alpha=0.5, iterations=2)
    # x's 0.5 × 0.5 splits between m1 and m2
    assert scores["m1"] == pytest.approx(0.5 + 0.125)
    assert scores["m2"] == pytest.approx(0.125)
    scores = personalized_pagerank(links, {"m1": 1.0}, alpha=0.3, iterations=30)
    # two hops away, never reached from m1 when unconnected
    assert scores["m1"] > scores["m2"] > scores["m3"] > 0
    assert "m4" not in scores
    total = sum(scores.values())
    assert 0 < total < 1  # the rest of the mass sits on entities


def test_ppr_entity_seeds_idf_and_empty_seeds() -> None:
    links = {"m1": ["x", "common"], "m2": ["x"], "m3": ["common"], "m4": ["common"]}
    from_entity = personalized_pagerank(links, {}, {"x": 1.0}, alpha=0.5, iterations=1)
    assert from_entity == {"m1": pytest.approx(0.25), "m2": pytest.approx(0.25)}
    idf = {"x": 3.0, "common": 1.0}
    weighted = personalized_pagerank(links, {"m1": 1.0}, alpha=0.5, iterations=2, idf=idf)
    # from m1, 3/4 of the walk goes to the rare entity x, so m2 beats m3
    assert weighted["m2"] > weighted["m3"]
    assert personalized_pagerank(links, {}) == {}
    assert personalized_pagerank(links, {}, {"unknown": 1.0}) == {}
