"""Explicit dates in a query ("on 3 June, 2023", "in August 2023", "2023-06-03",
"2023年6月3日", "2023年8月") as time windows, for the retriever's time prior.

Only dates with a year are used (a bare "June" is ambiguous). A day gives a window of
± ``DAY_SLACK_DAYS``; a month gives the month plus ``MONTH_SLACK_DAYS`` after it (people
mention things a little after they happen). Times are local-time epoch seconds, like the
memories' ``created_at``. Pure functions, no I/O.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta

DAY_SLACK_DAYS = 2
MONTH_SLACK_DAYS = 7

_MONTHS = {
    name.lower(): i
    for i in range(1, 13)
    for name in (calendar.month_name[i], calendar.month_abbr[i])
}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "ymd"),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), "ymd"),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.I), "dmy"),
    (re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I), "mdy"),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?!\s*\d)"), "ym"),
    (re.compile(rf"\b({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.I), "my"),
]


def _day_window(year: int, month: int, day: int) -> tuple[float, float] | None:
    try:
        start = datetime(year, month, day)
    except ValueError:
        return None
    lo = start - timedelta(days=DAY_SLACK_DAYS)
    hi = start + timedelta(days=DAY_SLACK_DAYS + 1)
    return lo.timestamp(), hi.timestamp()


def _month_window(year: int, month: int) -> tuple[float, float] | None:
    if not 1 <= month <= 12 or not 1900 <= year <= 2200:
        return None
    start = datetime(year, month, 1)
    days = calendar.monthrange(year, month)[1]
    end = start + timedelta(days=days + MONTH_SLACK_DAYS)
    return start.timestamp(), end.timestamp()


def date_windows(text: str) -> list[tuple[float, float]]:
    """Time windows ``(start, end)`` of the explicit dates in ``text``, in order found.
    A span matched by a more precise pattern is not matched again by a vaguer one."""
    windows: list[tuple[float, float]] = []
    taken: list[tuple[int, int]] = []
    for pattern, kind in _PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            g = m.groups()
            window: tuple[float, float] | None
            if kind == "ymd":
                window = _day_window(int(g[0]), int(g[1]), int(g[2]))
            elif kind == "dmy":
                window = _day_window(int(g[2]), _MONTHS[g[1].lower()], int(g[0]))
            elif kind == "mdy":
                window = _day_window(int(g[2]), _MONTHS[g[0].lower()], int(g[1]))
            elif kind == "ym":
                window = _month_window(int(g[0]), int(g[1]))
            else:
                window = _month_window(int(g[1]), _MONTHS[g[0].lower()])
            if window is not None:
                windows.append(window)
                taken.append((m.start(), m.end()))
    return windows


def strip_dates(text: str) -> str:
    """``text`` without the date expressions :func:`date_windows` understands (so day and
    year numbers do not act as keywords)."""
    out = text
    for pattern, _kind in _PATTERNS:
        out = pattern.sub(" ", out)
    return out


__all__ = ["DAY_SLACK_DAYS", "MONTH_SLACK_DAYS", "date_windows", "strip_dates"]
