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
