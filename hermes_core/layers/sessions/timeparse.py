"""Time expressions: ``after``/``before`` arguments and dates mentioned inside a query.

* :func:`parse_bound` turns ``"2026-03-01"``, ``"2026-03-01T12:00"``, ``"7d"``, ``"12h"``,
  ``"2w"`` or ``"3m"`` (months ≈ 30 days) into epoch seconds (relative values count back from
  ``now``). Raises ``ValueError`` with the accepted forms.
* :func:`query_time_window` finds an absolute date in a natural-language query ("on 3 June,
  2023", "in August 2023", "2023-06-03", "June 3rd 2023", "in 2022") and returns the time window
  it denotes plus the query with the date words removed; the ranking boosts messages from that
  window (a date mentioned in a question is strong evidence of *when* it was discussed).
  Chinese dates (``2023年6月3日``, ``2023年6月``) are recognised too.
* Given ``now`` (the time the question is asked), :func:`query_time_window` also resolves
  expressions relative to it when the query names no absolute date: "two weeks ago", "a
  month ago", "last Saturday", "last week/month/year", "yesterday", "in the past three
  months", "this week"; in Chinese "两周前", "一个月前", "上周六", "上个月", "去年", "昨天",
  "过去三个月", "本周". Such windows are marked ``relative`` (people round "a month ago", so
  the window is wider than the named point: :data:`RELATIVE_SLACK`).
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
DAY_S = 86400.0
UNIT_SECONDS = {
    "second": 1,
    "minute": 60,
    "hour": 3600,
    "day": 86400,
    "week": 7 * 86400,
    "fortnight": 14 * 86400,
    "month": 30 * 86400,
    "year": 365 * 86400,
}
"""Every time unit the module reads, in seconds (months ≈ 30 days, years 365): the
``after`` / ``before`` ages of :func:`parse_bound` (:data:`_SHORT_UNITS`) and the units of a
query, English ("two weeks ago") and Chinese (:data:`_ZH_UNITS`: "两周前"), use this one
table."""
_SHORT_UNITS = {
    "s": "second",
    "min": "minute",
    "h": "hour",
    "d": "day",
    "w": "week",
    "m": "month",
    "mo": "month",
    "y": "year",
}
"""The abbreviations of :func:`parse_bound` (``7d``, ``3m`` = three months)."""
_REL = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(" + "|".join(sorted(_SHORT_UNITS, key=len, reverse=True)) + r")\s*$",
    re.IGNORECASE,
)

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
        unit = _SHORT_UNITS[match.group(2).lower()]
        return now - float(match.group(1)) * UNIT_SECONDS[unit]
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
    relative: bool = False
    """Resolved from an expression relative to the question time ("two weeks ago")."""

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


def query_time_window(query: str, now: float | None = None) -> TimeWindow | None:
    """The first absolute date (day, month or year precision) mentioned in ``query``; when
    there is none and ``now`` (epoch seconds of the question) is given, the first expression
    relative to ``now`` (:func:`relative_window`)."""
    if not isinstance(query, str) or not query:
        return None
    found = _absolute_window(query)
    if found is None and now is not None:
        return relative_window(query, now)
    return found


def _absolute_window(query: str) -> TimeWindow | None:
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


_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
_NUMBER_RE = r"\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
_UNIT_RE = "(" + "|".join(u for u, secs in UNIT_SECONDS.items() if secs >= DAY_S) + ")s?"
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_WEEKDAY_RE = "|".join(_WEEKDAYS)
_EN_AGO = re.compile(rf"\b({_NUMBER_RE})\s+{_UNIT_RE}\s+(?:ago|back|earlier)\b", re.I)
_EN_PAST = re.compile(
    rf"\b(?:in|during|over|within|for)\s+the\s+(?:past|last)\s+(?:({_NUMBER_RE})\s+)?"
    rf"{_UNIT_RE}\b",
    re.I,
)
_EN_LAST_WEEKDAY = re.compile(rf"\b(?:last|this past|past)\s+({_WEEKDAY_RE})\b", re.I)
_EN_LAST_UNIT = re.compile(r"\b(last|this|previous)\s+(week|month|year)\b", re.I)
_EN_YESTERDAY = re.compile(r"\b(?:the\s+day\s+before\s+)?yesterday\b", re.I)
_ZH_DIGITS = {
    "一": 1,
    "两": 2,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_VAGUE = {"几": 3.0, "半": 0.5}
"""几 ("a few") read as 3, 半 ("half": 半个月前, 半年) as 0.5."""
_ZH_DIGIT = "[" + "".join(_ZH_DIGITS) + "]"
_ZH_NUMBER_RE = rf"\d{{1,3}}|{_ZH_DIGIT}?十{_ZH_DIGIT}?|{_ZH_DIGIT}|" + "|".join(_ZH_VAGUE)
"""A count in a Chinese time expression: digits, 一 … 九, 十 … 九十九 (十五, 二十, 二十五),
几 or 半; one pattern for both "N 天前" and "过去 N 个月"."""
_ZH_UNITS = {
    "天": "day",
    "日": "day",
    "周": "week",
    "星期": "week",
    "礼拜": "week",
    "月": "month",
    "年": "year",
}
_ZH_UNIT_RE = "(" + "|".join(sorted(_ZH_UNITS, key=len, reverse=True)) + ")"
_ZH_AGO = re.compile(rf"({_ZH_NUMBER_RE})\s*个?\s*{_ZH_UNIT_RE}(?:以前|之前|前)")
_ZH_PAST = re.compile(rf"(?:过去|最近|近|这)\s*的?\s*({_ZH_NUMBER_RE})\s*个?\s*{_ZH_UNIT_RE}")
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_LAST_WEEKDAY = re.compile(r"上(?:个)?(?:周|星期|礼拜)([一二三四五六日天])")
_ZH_LAST_UNIT = re.compile(r"(上个?|本|这个?|今|去)(周|星期|礼拜|月|年)")
_ZH_YESTERDAY = re.compile(r"(大前天|前天|昨天|昨日)")

RELATIVE_SLACK = 0.25
"""A point named relative to the question ("a month ago") matches messages this share of
its distance either side (at least :data:`DAY_SLACK_S`): "a month ago" is 30 ± 7.5 days."""


def _zh_number(text: str) -> float:
    """The value of a match of :data:`_ZH_NUMBER_RE`: "3" → 3, "两" → 2, "十五" → 15,
    "二十" → 20, "二十五" → 25, "几" → 3, "半" → 0.5."""
    if text.isdigit():
        return float(text)
    if text in _ZH_VAGUE:
        return _ZH_VAGUE[text]
    tens, ten, units = text.partition("十")
    if not ten:
        return float(_ZH_DIGITS.get(text, 1))
    return 10.0 * _ZH_DIGITS.get(tens, 1) + _ZH_DIGITS.get(units, 0)


def _en_number(text: str | None) -> float:
    if not text:
        return 1.0
    text = " ".join(text.lower().split())
    return float(text) if text.isdigit() else float(_NUMBER_WORDS.get(text, 1))


def _days(count: float, unit: str) -> float:
    """``count`` ``unit`` s (a key of :data:`UNIT_SECONDS`) in days."""
    return count * UNIT_SECONDS[unit] / DAY_S


def _ago(now: float, days: float) -> tuple[float, float]:
    """The window of a point ``days`` before ``now`` (:data:`RELATIVE_SLACK` either side)."""
    point = now - days * DAY_S
    slack = max(DAY_SLACK_S, RELATIVE_SLACK * days * DAY_S)
    return point - slack, min(point + slack, now + DAY_S)


def _day_start(now: float, days_back: int) -> float:
    day = datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
    return (day - timedelta(days=days_back)).timestamp()


def _last_weekday(now: float, weekday: int) -> tuple[float, float]:
    """The most recent ``weekday`` strictly before the day of ``now`` (± DAY_SLACK_S)."""
    today = datetime.fromtimestamp(now).weekday()
    back = (today - weekday) % 7 or 7
    start = _day_start(now, back)
    return start - DAY_SLACK_S, start + DAY_S + DAY_SLACK_S


def _calendar_unit(now: float, unit: str, which: str) -> tuple[float, float]:
    """``which`` ("last"/"this") week, month or year around ``now``: the last one in full
    (plus a few days of slack: things are told after they happen), this one up to now."""
    day = datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "week":
        this_start = day - timedelta(days=day.weekday())
        last_start = this_start - timedelta(days=7)
    elif unit == "month":
        this_start = day.replace(day=1)
        last_start = (this_start - timedelta(days=1)).replace(day=1)
    else:
        this_start = day.replace(month=1, day=1)
        last_start = this_start.replace(year=this_start.year - 1)
    if which == "this":
        return this_start.timestamp(), now + DAY_S
    slack = DAY_SLACK_S if unit == "week" else MONTH_SLACK_S
    return last_start.timestamp() - DAY_SLACK_S, this_start.timestamp() + slack


def _relative_candidates(query: str, now: float) -> list[tuple[re.Match[str], tuple[float, float]]]:
    out: list[tuple[re.Match[str], tuple[float, float]]] = []
    for m in _EN_AGO.finditer(query):
        out.append((m, _ago(now, _days(_en_number(m.group(1)), m.group(2).lower()))))
    for m in _EN_PAST.finditer(query):
        days = _days(_en_number(m.group(1)), m.group(2).lower())
        out.append((m, (now - days * DAY_S - DAY_SLACK_S, now + DAY_S)))
    for m in _EN_LAST_WEEKDAY.finditer(query):
        out.append((m, _last_weekday(now, _WEEKDAYS[m.group(1).lower()])))
    for m in _EN_LAST_UNIT.finditer(query):
        which = "this" if m.group(1).lower() == "this" else "last"
        out.append((m, _calendar_unit(now, m.group(2).lower(), which)))
    for m in _EN_YESTERDAY.finditer(query):
        back = 2 if m.group(0).lower().startswith("the") else 1
        start = _day_start(now, back)
        out.append((m, (start - DAY_SLACK_S, start + DAY_S + DAY_SLACK_S)))
    for m in _ZH_AGO.finditer(query):
        out.append((m, _ago(now, _days(_zh_number(m.group(1)), _ZH_UNITS[m.group(2)]))))
    for m in _ZH_PAST.finditer(query):
        days = _days(_zh_number(m.group(1)), _ZH_UNITS[m.group(2)])
        out.append((m, (now - days * DAY_S - DAY_SLACK_S, now + DAY_S)))
    for m in _ZH_LAST_WEEKDAY.finditer(query):
        out.append((m, _last_weekday(now, _ZH_WEEKDAYS[m.group(1)])))
    for m in _ZH_LAST_UNIT.finditer(query):
        prefix, unit_zh = m.group(1), m.group(2)
        unit = {"月": "month", "年": "year"}.get(unit_zh, "week")
        if prefix == "今" and unit != "year":
            continue  # 今周/今月 are not said; 今天 is not a window
        if prefix == "去" and unit != "year":
            continue
        which = "last" if prefix in ("上", "上个", "去") else "this"
        out.append((m, _calendar_unit(now, unit, which)))
    for m in _ZH_YESTERDAY.finditer(query):
        back = {"大前天": 3, "前天": 2}.get(m.group(1), 1)
        start = _day_start(now, back)
        out.append((m, (start - DAY_SLACK_S, start + DAY_S + DAY_SLACK_S)))
    return out


def relative_window(query: str, now: float) -> TimeWindow | None:
    """The first expression of ``query`` relative to ``now`` (epoch seconds), as a
    ``relative`` :class:`TimeWindow`, or ``None``. A longer match at the same place wins
    ("上周六" over "上周")."""
    if not isinstance(query, str) or not query:
        return None
    found = _relative_candidates(query, float(now))
    if not found:
        return None
    m, (start, end) = min(found, key=lambda c: (c[0].start(), -len(c[0].group(0))))
    rest = (query[: m.start()] + " " + query[m.end() :]).strip()
    return TimeWindow(start, end, m.group(0), rest, relative=True)


__all__ = [
    "RELATIVE_SLACK",
    "UNIT_SECONDS",
    "TimeWindow",
    "parse_bound",
    "query_time_window",
    "relative_window",
]
