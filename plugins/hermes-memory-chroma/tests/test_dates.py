"""Explicit dates in queries become time windows (EN and ZH); vague ones do not."""

from __future__ import annotations

from datetime import datetime

import pytest

from hermes_memory_chroma.dates import date_windows, strip_dates


def _days(text: str) -> list[tuple[str, str]]:
    return [
        (
            datetime.fromtimestamp(a).strftime("%Y-%m-%d"),
            datetime.fromtimestamp(b).strftime("%Y-%m-%d"),
        )
        for a, b in date_windows(text)
    ]


@pytest.mark.parametrize(
    ("text", "window"),
    [
        ("What did Maria say on 3 June, 2023?", ("2023-06-01", "2023-06-06")),
        ("When did X happen on May 25, 2022?", ("2022-05-23", "2022-05-28")),
        ("on 31st July 2023", ("2023-07-29", "2023-08-03")),
        ("log of 2023-06-03", ("2023-06-01", "2023-06-06")),
        ("2023年6月3日发生了什么", ("2023-06-01", "2023-06-06")),
        ("What is John doing in August 2023?", ("2023-08-01", "2023-09-08")),
        ("2023年8月我们讨论了什么", ("2023-08-01", "2023-09-08")),
    ],
)
def test_date_windows(text: str, window: tuple[str, str]) -> None:
    assert _days(text) == [window]


@pytest.mark.parametrize("text", ["in June", "3 June", "2023年13月", "version 2023"])
def test_vague_or_invalid_dates_give_nothing(text: str) -> None:
    assert date_windows(text) == []


def test_an_impossible_day_falls_back_to_its_month() -> None:
    assert _days("on 32 June, 2023") == [("2023-06-01", "2023-07-08")]


def test_strip_dates_removes_the_numbers() -> None:
    assert "2023" not in strip_dates("What did Maria share on 16 June, 2023?")
    assert strip_dates("2023年6月3日发生了什么").strip() == "发生了什么"
