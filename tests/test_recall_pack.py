"""pack_recall: ranked hits → a budgeted block of query-focused excerpts (tiny hand-made hits)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.llm.tokens import estimate_tokens
from hermes_core.recall_pack import (
    GAP,
    RecallHit,
    answer_cue,
    hits_shown,
    pack_recall,
    query_terms,
    safe_cut,
    split_sentences,
)

FILLER = " ".join(
    f"Paragraph {i} talks about gardening tools and soil in general." for i in range(60)
)


def test_empty_input_or_budget_gives_nothing() -> None:
    assert pack_recall([], "anything") == ""
    assert pack_recall([RecallHit("Some text.")], "text", 0) == ""
    assert pack_recall([RecallHit("   ")], "text") == ""


def test_budget_is_respected_for_every_size() -> None:
    hits = [RecallHit(FILLER, "2023/05/30", "assistant")] * 3 + [
        RecallHit(f"Short note {i} about soil.", "2023/06/01", "user") for i in range(30)
    ]
    for budget in (5, 17, 40, 100, 333, 1500):
        text = pack_recall(hits, "soil tools", budget)
        assert estimate_tokens(text) <= budget


def test_a_long_hit_cannot_eat_the_budget() -> None:
    # whole turns cut at the budget would show only the long first hit
    long_hit = RecallHit(FILLER, "2023/05/01", "assistant")
    answer = RecallHit("My sister's wedding is on June 3rd.", "2023/05/02", "user")
    text = pack_recall([long_hit, answer], "When is my sister's wedding?", 200)
    assert "June 3rd" in text
    lines = text.split("\n")
    assert lines[:2] == ["[2023/05/01]", lines[1]] and lines[1].startswith("assistant: ")
    assert lines[2:] == ["[2023/05/02]", "user: My sister's wedding is on June 3rd."]


def test_fair_share_arithmetic() -> None:
    # 4 long hits, 400 tokens: the first pass hands out 0.7 × 400 = 280 tokens, at most
    # max(64, 280 // 4) = 70 a hit; the second pass gives the 120 or so left to the best hit
    hits = [RecallHit(FILLER + f" marker{i}") for i in range(4)]
    lines = pack_recall(hits, "gardening", 400).split("\n")
    assert len(lines) == 4
    assert all(estimate_tokens(line) <= 70 for line in lines[1:])
    assert 150 <= estimate_tokens(lines[0]) <= 400 - 3 * 60


def test_second_pass_gives_leftover_room_to_the_best_hit() -> None:
    short = RecallHit("Soil is fine.")
    long_hit = RecallHit(FILLER)
    text = pack_recall([long_hit, short], "soil", 1000)
    first = text.split("\n")[0]
    # the first pass offered 500 tokens; the short hit left room the long one then used
    assert estimate_tokens(first) > 500
    assert "Soil is fine." in text


def test_excerpt_is_the_sentence_with_the_query_terms_and_its_neighbours() -> None:
    text = (
        "We talked about many things. The weather was grey. "
        "The dentist appointment moved to Friday at 4 pm. Bring the insurance card. " + FILLER
    )
    out = pack_recall(
        [RecallHit(text, "2023/01/02", "user")], "When is the dentist appointment?", 30
    )
    assert "dentist appointment moved to Friday at 4 pm." in out
    assert out.startswith("[2023/01/02]\nuser: " + GAP)
    assert "Bring the insurance card." in out  # the next sentence rides along
    assert "talked about many things" not in out


def test_chinese_sentences_split_on_full_stops() -> None:
    assert split_sentences("今天下雨了。我们去看电影吧！你喜欢吗？好") == [
        "今天下雨了。",
        "我们去看电影吧！",
        "你喜欢吗？",
        "好",
    ]
    text = "".join(f"第{i}段讲园艺和土壤。" for i in range(80)) + "我的航班是六月三日。之后再说。"
    out = pack_recall([RecallHit(text, "2024-06-01", "用户")], "我的航班是哪天？", 40)
    assert "我的航班是六月三日。" in out
    assert out.startswith("[2024-06-01]\n用户: ")
    assert estimate_tokens(out) <= 40


def test_query_terms_en_and_zh() -> None:
    assert query_terms("When did I buy the new Tokenizers?") == ["buy", "new", "tokenizers"]
    assert query_terms("航班 3 点") == ["航班", "3", "点"]
    assert query_terms("咖啡机") == ["咖啡", "啡机"]


def test_stemmed_terms_match_other_forms() -> None:
    text = FILLER + " I finally met the tokenizer team. " + FILLER
    out = pack_recall([RecallHit(text)], "tokenizers", 30)
    assert "tokenizer team" in out


def test_hit_without_query_terms_shows_its_head() -> None:
    out = pack_recall([RecallHit("First sentence here. Second one. " + FILLER)], "zebra", 20)
    assert out.startswith("First sentence here.")


def test_lines_sit_under_their_date_in_rank_order() -> None:
    hits = [
        RecallHit("b about cats.", "2023/02/02", "Bob"),
        RecallHit("a about cats.", "2023/01/01", "Ann"),
        RecallHit("c about cats.", "2023/02/02", "Cy"),
        RecallHit("d about cats.", "", "Di"),
    ]
    assert pack_recall(hits, "cats").split("\n") == [
        "[2023/02/02]",
        "Bob: b about cats.",
        "Cy: c about cats.",
        "[2023/01/01]",
        "Ann: a about cats.",
        "Di: d about cats.",
    ]


def test_hits_shown_counts_lines_not_dates() -> None:
    hits = [RecallHit(f"[note] cat {i}.", "2023/01/01", "") for i in range(3)]
    hits.append(RecallHit("cat 3.", "2023/01/02", "user"))
    block = pack_recall(hits, "cat")
    assert block.count("\n") == 5 and hits_shown(block) == 4
    assert hits_shown("") == 0


def test_duplicates_are_removed() -> None:
    hits = [
        RecallHit("I like green tea.", "d1", "user"),
        RecallHit("i like  GREEN tea!", "d2", "user"),
        RecallHit("Coffee too.", "d3", "user"),
    ]
    lines = pack_recall(hits, "tea").split("\n")
    assert lines == ["[d1]", "user: I like green tea.", "[d3]", "user: Coffee too."]


def test_long_duplicates_are_removed_and_near_misses_kept() -> None:
    base = "We planned the trip. " * 20
    hits = [
        RecallHit(base + "Tickets cost 40 euros."),
        RecallHit(base.replace(" ", "  ").upper() + "Tickets cost 40 euros!"),  # duplicate
        RecallHit(base + "Tickets cost 41 euros."),  # same head, other text: kept
    ]
    assert hits_shown(pack_recall(hits, "tickets", 1500)) == 2


def test_deterministic() -> None:
    hits = [RecallHit(FILLER + f" tea {i}.", f"d{i}", "u") for i in range(20)]
    assert pack_recall(hits, "tea soil", 700) == pack_recall(list(hits), "tea soil", 700)


def test_a_sentence_longer_than_the_share_is_windowed_around_the_term() -> None:
    sentence = "word " * 400 + "the passport number is X123 " + "word " * 400
    out = pack_recall([RecallHit(sentence)], "passport", 30)
    assert "passport" in out
    assert out.startswith(GAP)
    assert estimate_tokens(out) <= 40


def test_markup_and_control_characters_pass_through_without_breaking() -> None:
    text = "<script>alert(1)</script> tea\x00\x1b[31m time. Next."
    out = pack_recall([RecallHit(text)], "tea")
    assert "<script>" in out


def test_safe_cut_never_splits_a_surrogate_pair_or_a_combining_mark() -> None:
    text = "a\ud83d\ude00b"  # a surrogate pair as two code units
    assert safe_cut(text, 2) == 1
    accented = "cafe\u0301s"
    assert safe_cut(accented, 4) == 3
    assert safe_cut("abc", 99) == 3


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.text(min_size=0, max_size=300), min_size=1, max_size=8),
    query=st.text(max_size=30),
    budget=st.integers(min_value=1, max_value=400),
)
def test_any_input_stays_within_budget(texts: list[str], query: str, budget: int) -> None:
    out = pack_recall([RecallHit(t, "d", "s") for t in texts], query, budget)
    assert estimate_tokens(out) <= budget
    out.encode("utf-8", "surrogatepass")  # whole code points only


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_fifty_hits_pack_quickly_enough_to_run_every_turn(lang: str) -> None:
    # not a speed assertion: just that 50 realistic hits pack into a non-empty block
    unit = FILLER if lang == "en" else "今天我们聊了园艺和土壤。" * 40
    hits = [RecallHit(unit + f" {i}", f"2023/05/{i % 28 + 1:02d}", "user") for i in range(50)]
    out = pack_recall(hits, "soil" if lang == "en" else "土壤", 1500)
    assert out.count("\n") >= 10


def test_rare_query_terms_outweigh_common_ones() -> None:
    # "garden" is in every hit, "heron" in one: the heron sentence is shown first
    first = RecallHit(
        "The garden is green and big and lovely today. "
        + "Filler sentence here. " * 30
        + "A heron nests by the pond."
    )
    others = [RecallHit(f"More garden notes {i}.") for i in range(3)]
    out = pack_recall([first, *others], "garden heron", 12).split("\n")[0]
    assert out == GAP + " A heron nests by the pond."
    assert "green and big" not in out


def test_packing_fifty_hits_twice_gives_the_same_block_and_order() -> None:
    hits = [RecallHit(f"Turn {i}: the tea was {i} degrees.", f"d{i % 5}", "u") for i in range(50)]
    out = pack_recall(hits, "tea degrees", 1500)
    assert out == pack_recall(hits, "tea degrees", 1500)
    assert out.index("Turn 0:") < out.index("Turn 5:")  # d0 group first, rank order inside


@pytest.mark.parametrize(
    ("query", "sample", "plain"),
    [
        ("When is the dentist appointment?", "on May 3rd at 4 pm", "at the clinic"),
        ("How many cats does Ann have?", "she has 3 cats", "she has cats"),
        ("Who fixed the bike?", "my neighbour Tom fixed it", "my neighbour fixed it"),
        ("牙医预约是什么时候？", "六月三日下午", "在诊所"),
        ("安有多少只猫？", "她有三个孩子", "她有猫"),
        ("这本书是谁写的？", "作者写了《三体》", "作者写了一本书"),
    ],
)
def test_answer_cue_follows_the_question_word(query: str, sample: str, plain: str) -> None:
    cue = answer_cue(query)
    assert cue is not None
    assert cue.search(sample) and not cue.search(plain)


def test_no_answer_cue_without_a_question_word_that_says_what_the_answer_is() -> None:
    assert answer_cue("Tell me about my garden") is None
    assert answer_cue("我的花园怎么样") is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_sentence_showing_the_answers_kind_goes_first(lang: str) -> None:
    # two sentences share the question's words; the one with a date/amount is shown first
    if lang == "en":
        text = (
            "The budget plan covers influencer marketing for the whole season. "
            + FILLER
            + " Influencer marketing gets $2,000 of the plan."
        )
        query, answer = "How much went to influencer marketing in the plan?", "$2,000"
    else:
        text = (
            "网红营销预算是整个推广计划的一部分。"
            + "今天我们聊了园艺和土壤。" * 60
            + "网红营销预算是两千元。"
        )
        query, answer = "网红营销预算是多少？", "两千元"
    out = pack_recall([RecallHit(text)], query, 40)
    assert answer in out
    assert estimate_tokens(out) <= 40


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_hit_showing_the_answers_kind_gets_room_before_higher_ranked_ones(lang: str) -> None:
    # 30 hits of about the same size, room for about 9: the one with a date is shown although
    # it ranks 20th, because the question asks "when"
    if lang == "en":
        hits = [RecallHit(f"We talked about the trip plans again, note {i}.") for i in range(30)]
        hits[19] = RecallHit("The trip starts on June 3rd, note 19.")
        query, plain = "When does the trip start?", "What about the trip?"
        answer = "June 3rd"
    else:
        hits = [RecallHit(f"我们又聊了一遍旅行的计划和安排，第{i}条。") for i in range(30)]
        hits[19] = RecallHit("旅行六月三日出发，我们很期待。")
        query, plain = "旅行什么时候出发？", "旅行怎么样？"
        answer = "六月三日"
    assert answer in pack_recall(hits, query, 180)
    assert answer not in pack_recall(hits, plain, 180)


def test_what_line_costs_overestimate_is_handed_out_again() -> None:
    # many short hits: the block ends within one hit's line of the budget
    hits = [RecallHit(f"Note {i} says the tea was warm today.", "", "u") for i in range(200)]
    for budget in (300, 500, 1000):
        out = pack_recall(hits, "tea", budget)
        assert budget - 15 <= estimate_tokens(out) <= budget


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.text(min_size=0, max_size=300), min_size=1, max_size=8),
    word=st.sampled_from(["When did", "How many", "Who is", "什么时候", "多少", "谁"]),
    query=st.text(max_size=20),
    budget=st.integers(min_value=1, max_value=400),
)
def test_answer_cues_keep_the_budget_and_whole_characters(
    texts: list[str], word: str, query: str, budget: int
) -> None:
    hits = [RecallHit(t + " 3 June 2024 Tom 三个", "d", "s") for t in texts]
    out = pack_recall(hits, word + query, budget)
    assert estimate_tokens(out) <= budget
    out.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("query", ["How many?", "多少？", "When?", "谁"])
def test_a_question_word_alone_still_packs(query: str) -> None:
    # no search term at all, only the question word: heads are shown, cue hits first
    hits = [RecallHit("Nothing here. More."), RecallHit("We have 3 cats since May 2024. Tom 三个")]
    lines = pack_recall(hits, query, 100).split("\n")
    assert len(lines) == 2 and lines[0].startswith("Nothing here.")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_question_about_the_asker_gives_the_users_own_words_room_first(lang: str) -> None:
    # 30 assistant essays on the topic fill the budget by the 8th; the user's own line ranks
    # 10th: shown when the question is about the asker, not when it asks what you said
    if lang == "en":
        essay = "Music apps differ a lot in catalogue and price. " * 6
        own = "I have been listening on Songbird every day."
        mine, yours = "What music app have I been using?", "What music app did you suggest?"
    else:
        essay = "音乐软件的曲库和价格差别很大。" * 6
        own = "我每天都在用百灵听歌。"
        mine, yours = "我一直在用什么音乐软件？", "你推荐了什么音乐软件？"
    hits = [RecallHit(essay + f" {i}", "", "assistant") for i in range(30)]
    hits[9] = RecallHit(own, "", "user")
    assert own in pack_recall(hits, mine, 500)
    assert own not in pack_recall(hits, yours, 500)
