"""after/before bounds and dates named inside queries."""

from __future__ import annotations

from datetime import datetime

import pytest

from hermes_core.layers.sessions.timeparse import parse_bound, query_time_window

NOW = datetime(2026, 3, 10, 12, 0).timestamp()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7d", NOW - 7 * 86400),
        ("12h", NOW - 12 * 3600),
        ("2w", NOW - 14 * 86400),
        (" 3m ", NOW - 90 * 86400),
        ("2mo", NOW - 60 * 86400),
        ("1y", NOW - 365 * 86400),
        ("30min", NOW - 1800),
        ("45s", NOW - 45),
        ("2026-03-01", datetime(2026, 3, 1).timestamp()),
        ("2026-03-01T14:30", datetime(2026, 3, 1, 14, 30).timestamp()),
        (1234.5, 1234.5),
    ],
)
def test_parse_bound(value: object, expected: float) -> None:
    assert parse_bound(value, now=NOW) == pytest.approx(expected)


@pytest.mark.parametrize("value", ["yesterday-ish", "", "7 parsecs", True])
def test_parse_bound_rejects(value: object) -> None:
    with pytest.raises(ValueError, match="7d"):
        parse_bound(value, now=NOW)


def test_day_window_and_rest() -> None:
    w = query_time_window("What movie did Joanna watch on 1 May, 2022?")
    assert w is not None
    day = datetime(2022, 5, 1).timestamp()
    assert w.start < day < w.end and w.contains(day + 3600)
    assert not w.contains(day + 10 * 86400)
    assert "2022" not in w.rest and "movie" in w.rest


@pytest.mark.parametrize(
    "query",
    ["trip in July 2022", "July 12, 2022 plans", "2022-07-12 notes", "2022年7月12日 的会议"],
)
def test_various_date_forms(query: str) -> None:
    w = query_time_window(query)
    assert w is not None and w.contains(datetime(2022, 7, 12, 9).timestamp())


def test_month_without_year_matches_any_year() -> None:
    w = query_time_window("When did Melanie go camping in June?")
    assert w is not None and w.month == 6
    assert w.contains(datetime(2023, 6, 15).timestamp())
    assert w.contains(datetime(2021, 7, 3).timestamp())  # told a few days later
    assert not w.contains(datetime(2023, 8, 1).timestamp())


def test_cutoff_is_an_upper_bound() -> None:
    w = query_time_window("How many pets did Andrew have, as of September 2023?")
    assert w is not None
    assert w.contains(datetime(2023, 1, 1).timestamp())
    assert not w.contains(datetime(2023, 11, 1).timestamp())


def test_no_date() -> None:
    assert query_time_window("what did we decide about the cache?") is None
    assert query_time_window("I may come") is None


# Relative times: "now" is Thursday 9 March 2023, 15:47 (local time).
ASKED = datetime(2023, 3, 9, 15, 47).timestamp()


def _day(*ymd_h: int) -> float:
    return datetime(*ymd_h).timestamp()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("query", "inside", "outside"),
    [
        # 14 days back ± a quarter of that (3.5 days)
        ("what did I buy two weeks ago?", (2023, 2, 23, 12), (2023, 2, 18, 12)),
        ("what did I buy 10 days ago?", (2023, 2, 27, 12), (2023, 3, 5, 12)),
        ("the event a month ago", (2023, 2, 7, 12), (2023, 1, 25, 12)),
        ("I cooked something a couple of days ago", (2023, 3, 7, 12), (2023, 3, 1, 12)),
        # the most recent Saturday before Thursday the 9th is the 4th (± 2 days)
        ("jewelry I received last Saturday", (2023, 3, 4, 18), (2023, 2, 25, 18)),
        ("the artist I heard last Friday", (2023, 3, 3, 18), (2023, 3, 9, 12)),
        # the previous calendar month, plus a week for things told after it ended
        ("trips last month", (2023, 2, 14, 12), (2023, 1, 20, 12)),
        ("yoga last week", (2023, 3, 1, 12), (2023, 2, 20, 12)),
        ("dinner parties in the past three months", (2022, 12, 20, 12), (2022, 11, 20, 12)),
        ("what did we fix yesterday", (2023, 3, 8, 20), (2023, 3, 1, 20)),
        ("两周前我买了什么", (2023, 2, 23, 12), (2023, 2, 18, 12)),
        ("一个月前的慈善活动", (2023, 2, 7, 12), (2023, 1, 25, 12)),
        ("三天前的会议", (2023, 3, 6, 12), (2023, 2, 28, 12)),
        ("上周六我收到了什么礼物", (2023, 3, 4, 18), (2023, 2, 25, 18)),
        ("上个月的旅行", (2023, 2, 14, 12), (2023, 1, 20, 12)),
        ("过去三个月吃过的菜", (2022, 12, 20, 12), (2022, 11, 20, 12)),
        ("去年的预算", (2022, 6, 1), (2021, 6, 1)),
        ("昨天讨论的缓存", (2023, 3, 8, 20), (2023, 3, 1, 20)),
        # Chinese counts above ten, and half: one number pattern for "N 天前" and "过去 N 个月"
        ("十五天前的会议", (2023, 2, 22, 12), (2023, 3, 3, 12)),
        ("二十五天前的会议", (2023, 2, 12, 12), (2023, 2, 22, 12)),
        ("半个月前的会议", (2023, 2, 22, 12), (2023, 3, 6, 12)),
        ("过去十二个月的开销", (2022, 3, 20, 12), (2022, 3, 1, 12)),
        ("过去二十天的运动", (2023, 2, 20, 12), (2023, 2, 10, 12)),
        ("in the past two fortnights", (2023, 2, 12, 12), (2023, 2, 5, 12)),
    ],
)
def test_relative_windows(query: str, inside: tuple[int, ...], outside: tuple[int, ...]) -> None:
    w = query_time_window(query, ASKED)
    assert w is not None and w.relative
    assert w.contains(_day(*inside))
    assert not w.contains(_day(*outside))
    assert w.matched not in w.rest


def test_relative_words_leave_the_keywords() -> None:
    w = query_time_window("What kitchen appliance did I buy 10 days ago?", ASKED)
    assert w is not None and w.matched == "10 days ago"
    assert "kitchen appliance" in w.rest and "ago" not in w.rest
    zh = query_time_window("上周六我收到了什么礼物", ASKED)
    assert zh is not None and zh.matched == "上周六" and zh.rest == "我收到了什么礼物"


def test_relative_needs_now_and_absolute_dates_win() -> None:
    assert query_time_window("what did I buy two weeks ago?") is None
    w = query_time_window("two weeks ago, on 1 May, 2022, I watched a movie", ASKED)
    assert w is not None and not w.relative and w.contains(_day(2022, 5, 1, 12))


def test_no_relative_time() -> None:
    assert query_time_window("the last Python release notes", ASKED) is None
    assert query_time_window("I bought a few days of food", ASKED) is None
    assert query_time_window("上海的天气", ASKED) is None
