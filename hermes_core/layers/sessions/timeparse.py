"""Time expressions: ``after``/``before`` arguments and dates mentioned inside a query.

* :func:`parse_bound` turns ``"2026-03-01"``, ``"2026-03-01T12:00"``, ``"7d"``, ``"12h"``,
  ``"2w"`` or ``"3m"`` (months ≈ 30 days) into epoch seconds (relative values count back from
  ``now``). Raises ``ValueError`` with the accepted forms.
* :func:`query_time_window` finds an absolute date in a natural-language query ("on 3 June,
  2023", "in August 2023", "2023-06-03", "June 3rd 2023", "in 2022") and returns the time window
  it denotes plus the query with the date words removed; the ranking boosts messages from that
  window (a date mentioned in a question is strong evidence of *when* it was discussed).
  Chinese dates (``2023年6月3日``, ``2023年6月``) are recognised too.
"""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

_MONTHS = {
    name.lower(): i
    for i in range(1, 13)
    for name in (calendar.month_name[i], calendar.month_abbr[i])
}
_MONTHS["sept"] = 9
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_REL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdwy]|min|mo)\s*$", re.IGNORECASE)
_UNITS = {
    "s": 1,
    "min": 60,
    "h": 3600,
    "d": 86400,
    "w": 7 * 86400,
    "m": 30 * 86400,
    "mo": 30 * 86400,
    "y": 365 * 86400,
}

_DAY_MONTH_YEAR = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\.?,?\s+(\d{{4}})\b", re.I
)
_MONTH_DAY_YEAR = re.compile(
    rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE})\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.I)
_FULL_MONTHS = "|".join(calendar.month_name[i] for i in range(1, 13))
_MONTH_ONLY = re.compile(rf"\b(?:in|during|since|of)\s+({_FULL_MONTHS})\b", re.I)
_CUTOFF = re.compile(r"\b(?:as of|by|before|until|till|up to)\s*$", re.I)
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_ISO_MONTH = re.compile(r"\b(\d{4})-(\d{2})\b")
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b", re.I)
_ZH_DAY = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_ZH_MONTH = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月")

DAY_SLACK_S = 2 * 86400
"""A day mentioned in a query matches messages up to this far from it (people say "on
Monday" about something discussed a day or two around it)."""
MONTH_SLACK_S = 7 * 86400
"""Things that happened in a month are often told a few days after it ends."""


def parse_bound(value: object, *, now: float | None = None) -> float:
    """Epoch seconds for an ``after``/``before`` argument. Relative forms (``7d``) count
    back from ``now``. Raises ``ValueError`` naming the accepted forms."""
    now = time.time() if now is None else now
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    match = _REL.match(text)
    if match:
        unit = match.group(2).lower()
        return now - float(match.group(1)) * _UNITS[unit]
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        pass
    raise ValueError(
        f"cannot read time {text!r}: use an ISO date like 2026-03-01 (or 2026-03-01T14:30) "
        "or a relative age like 7d, 12h, 2w, 3m"
    )


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """``[start, end)`` in epoch seconds, the matched text, and the query without it."""

    start: float
    end: float
    matched: str
    rest: str
    month: int | None = None
    """Set for a month named without a year ("in June"): any year's June matches."""

    def contains(self, ts: float) -> bool:
        """Whether epoch ``ts`` falls in the window (month windows: that month or the first
        week after it, in any year)."""
        if self.month is None:
            return self.start <= ts < self.end
        try:
            day = datetime.fromtimestamp(ts)
        except (OverflowError, OSError, ValueError):
            return False
        shifted = day - timedelta(seconds=MONTH_SLACK_S)
        return self.month in (day.month, shifted.month)


def _window(year: int, month: int, day: int | None) -> tuple[float, float] | None:
    try:
        if day is not None:
            start = datetime(year, month, day)
            return (
                start.timestamp() - DAY_SLACK_S,
                (start + timedelta(days=1)).timestamp() + DAY_SLACK_S,
            )
        last = calendar.monthrange(year, month)[1]
        start = datetime(year, month, 1)
        end = datetime(year, month, last) + timedelta(days=1)
        return start.timestamp(), end.timestamp() + MONTH_SLACK_S
    except ValueError:
        return None


def query_time_window(query: str) -> TimeWindow | None:
    """The first absolute date (day, month or year precision) mentioned in ``query``."""
    if not isinstance(query, str) or not query:
        return None
    candidates: list[tuple[re.Match[str], tuple[float, float] | None]] = []
    for m in _DAY_MONTH_YEAR.finditer(query):
        candidates.append(
            (m, _window(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1))))
        )
    for m in _MONTH_DAY_YEAR.finditer(query):
        candidates.append(
            (m, _window(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2))))
        )
    for m in _ISO_DAY.finditer(query):
        candidates.append((m, _window(int(m.group(1)), int(m.group(2)), int(m.group(3)))))
    for m in _ZH_DAY.finditer(query):
        candidates.append((m, _window(int(m.group(1)), int(m.group(2)), int(m.group(3)))))
    if not candidates:
        for m in _MONTH_YEAR.finditer(query):
            candidates.append((m, _window(int(m.group(2)), _MONTHS[m.group(1).lower()], None)))
        for m in _ISO_MONTH.finditer(query):
            if 1 <= int(m.group(2)) <= 12:
                candidates.append((m, _window(int(m.group(1)), int(m.group(2)), None)))
        for m in _ZH_MONTH.finditer(query):
            if 1 <= int(m.group(2)) <= 12:
                candidates.append((m, _window(int(m.group(1)), int(m.group(2)), None)))
    if not candidates:
        for m in _YEAR.finditer(query):
            year = int(m.group(1))
            candidates.append(
                (m, (datetime(year, 1, 1).timestamp(), datetime(year + 1, 1, 1).timestamp()))
            )
    if not candidates:
        for m in _MONTH_ONLY.finditer(query):
            month = _MONTHS[m.group(1).lower()]
            rest = (query[: m.start()] + " " + query[m.end() :]).strip()
            return TimeWindow(float("-inf"), float("inf"), m.group(0), rest, month)
    for m, window in sorted(candidates, key=lambda c: c[0].start()):
        if window is None:
            continue
        if _CUTOFF.search(query[: m.start()]):
            # "as of May 2023", "before June 2023": a cut-off, not the time of the topic
            window = (float("-inf"), window[1])
        rest = (query[: m.start()] + " " + query[m.end() :]).strip()
        return TimeWindow(window[0], window[1], m.group(0), rest)
    return None


__all__ = ["TimeWindow", "parse_bound", "query_time_window"]
