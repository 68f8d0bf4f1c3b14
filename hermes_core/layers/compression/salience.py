"""How salient is a line of a compacted span? Deterministic scoring, English and Chinese.

:func:`score_line` gives a line of text a salience score from what it *says*, not where it
stands: things someone marked (remember, note, important, must, never, always, 记住, 注意,
必须, 不要, 务必…), constraints and decisions, numbers with units, ports, versions, error codes
and error lines, paths, URLs, identifiers, dates and deadlines, names. The source weighs in
(a user's substantive request counts more than an assistant's narration; a tool's output
counts only for what it signals), and :func:`template_of` lets callers discount lines that
repeat with only their numbers changed (log noise, polling loops).

:func:`is_filler` recognises messages that carry no request ("ok", "continue", "继续",
"好的", "sounds good, thanks!"), so they are never taken for a goal or a pending ask.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from hermes_core.context import is_trivial_prompt

Source = Literal["user", "assistant", "tool", "previous"]

MARKED = re.compile(
    r"(?i)\b(remember|keep in mind|note(?: that)?|nb|important(?:ly)?|crucial|critical|"
    r"must(?:n't)?|never|always|don't|do not|make sure|be sure|heads[- ]up|warning|"
    r"caution|whatever you do)\b"
    r"|记住|记得|注意|重要|关键|必须|不要|别忘|务必|千万|切记|一定要|不许|禁止|不准|提醒"
)
"""Things a user or agent explicitly marked as worth keeping."""

CONSTRAINT = re.compile(
    r"(?i)\b(only|avoid|prefer(?:s|red|ence)?|rather than|instead of|not allowed|forbidden|"
    r"no more than|at most|at least|no later than|deadline|due|limit(?:ed)?|capped|"
    r"required|requires?|requirement|policy|retention|retain|keep (?:it|them|backups?|logs?)|"
    r"can't|cannot|won't|shouldn't|should|needs? to|has to|have to|off[- ]limits|"
    r"read[- ]only|allow(?:ed)?|approval|approve[sd]?|sign(?:s|ed)? off)\b"
    r"|只能|不能|不可以|不行|偏好|喜欢用|宁可|而不是|至少|至多|最多|不超过|以内|截止|之前|"
    r"要求|保留|策略|应该|需要|得先|只读|审批|批准|签字|同意"
)
DECISION = re.compile(
    r"(?i)\b(decided|decision|we'll use|we will use|let's use|let's go with|go with|"
    r"agreed|chose|chosen|choose|going with|went with|settled on|switch(?:ed|ing)? to|"
    r"opted|picked|the plan is|plan:|final(?:ly)?|instead)\b"
    r"|决定|选定|选了|采用|确定用|就用|改用|换成|定了|就定|敲定|最终选|方案是"
)
ERROR_LINE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception|Fault)\b|\b(?:ERROR|FATAL|FAILED|FAILURE|CRITICAL|PANIC)\b"
    r"|(?i:^\s*(?:error|fatal|panic|failed|failure|e)\b\s*[:!\]]|\berror:|\bfailed to\b|"
    r"\bfailed with\b|\bnot found\b|permission denied|access denied|connection refused|"
    r"no such file|no space left|timed out|\btimeout\b|traceback|segmentation fault|"
    r"exit (?:code|status) [1-9]\d*|errno|oomkilled|crashloopbackoff|unauthori[sz]ed|forbidden)"
    r"|错误[:：码]|出错|报错|(?<!成)失败(?!率)|异常[:：]|抛出异常|拒绝访问|连接被拒绝|权限不足|"
    r"磁盘已满|空间不足|超时"
)
"""A line reporting a failure. Stricter than a word search: "a 12% drop in errors" or "the
error rate" in a page is prose, not a failure."""
ERROR_CODE = re.compile(
    r"\b[A-Z]{1,6}-?\d{3,6}\b|\b(?:HTTP|status|code|错误码|状态码)\s*[:=]?\s*\d{3,}\b"
    r"|(?i:\b(?:exit (?:code|status)|errno|sqlstate|returncode)\s*[:=]?\s*-?\w+)"
    r"|\b0x[0-9a-fA-F]{4,}\b"
)
PORT = re.compile(
    r"(?i)\bport\s*(?:is|=|:|#|of|number)?\s*\d{2,5}\b|(?<![\d.]):\d{2,5}\b(?![.:]\d)"
    r"|端口(?:号)?\s*(?:是|为|:|：|=)?\s*\d{2,5}"
)
VERSION = re.compile(r"(?i)(?<![\w.])v?\d+\.\d+(?:\.\d+)+(?:[-+][\w.]+)?\b|\bv\d+(?:\.\d+)?\b")
_UNITS = (
    r"%|ms|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|d|days?|weeks?|months?|"
    r"years?|yrs?|b|kb|mb|gb|tb|kib|mib|gib|tib|k|m|px|rpm|rps|qps|tps|req/s|cores?|cpus?|"
    r"vcpus?|replicas?|nodes?|shards?|users?|rows?|records?|items?|workers?|threads?|"
    r"connections?|retries|times|x|usd|eur|gbp|rmb|cny|yuan|dollars?|euros?"
)
_NUMBER_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty|sixty|ninety|hundred|thousand|million|a dozen|a couple of|half an?"
)
_ZH_UNITS = (
    r"元|块|万|亿|个月|个|次|天|周|年|小时|分钟|分半|分|秒|毫秒|台|条|行|倍|人|张|份|兆|号|公里|米|"
    r"成|折|岁|桌|间|层|遍|项"
)
NUMBER_UNIT = re.compile(
    rf"(?i)[$€£¥]\s?\d[\d,.]*|\b\d[\d,]*(?:\.\d+)?\s?(?:{_UNITS})\b"
    rf"|\b(?:{_NUMBER_WORDS})[ -](?:{_UNITS})\b"
    rf"|\d[\d,]*(?:\.\d+)?\s?(?:{_ZH_UNITS}|G|M)"
    rf"|[零一二两三四五六七八九十百千万亿半几]+\s?(?:{_ZH_UNITS})"
)
ANY_NUMBER = re.compile(r"\d{2,}|[零一二三四五六七八九十百千万亿两]{2,}")
PATH = re.compile(
    r"(?:(?<![\w/.])(?:~|\.{1,2})?/(?:[\w.\-\u4e00-\u9fff@+]+/)*[\w.\-\u4e00-\u9fff@+]+"
    r"|\b[A-Za-z]:\\[^\s\"'<>|]+"
    r"|(?<![\w/])[\w\-\u4e00-\u9fff]+(?:/[\w.\-\u4e00-\u9fff]+)*\.(?:py|md|json|ya?ml|toml|txt|"
    r"csv|log|js|ts|tsx|go|rs|sh|cfg|ini|sql|db|html|css|lock|env|conf|xml|ipynb|c|h|cpp|java|"
    r"tf|tfvars|proto|gz|zip|tar|bak|dump|pem|crt|key|service|rb|php|kt|swift))"
)
URL = re.compile(r"\b(?:https?|s3|gs|postgres(?:ql)?|mysql|redis|ftp|ssh)://[^\s<>\"')\]]+")
COMMAND = re.compile(r"`([^`\n]{2,200})`|^\s*\$ (.{2,200})$", re.MULTILINE)
IDENTIFIER = re.compile(
    r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b"  # snake_case
    r"|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w+\b"  # camelCase, CamelCase
    r"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"  # ENV_VARS
    r"|\b[A-Z][A-Z0-9]+-\d+\b"  # tickets
    r"|\b[\w-]+(?:\.[\w-]+)+\.(?:internal|local|lan|com|net|io|org|dev|svc|cluster|cn)\b"
    r"|\b(?=[a-z0-9-]*\d)(?=[a-z0-9-]*[a-z])[a-z0-9]+(?:-[a-z0-9]+)+\b"  # host-01, db-eu-2
    r"|\b[0-9a-f]{7,40}\b"  # hashes
    r"|\b\w+@[\w.-]+\.\w+\b"  # e-mail
)
DATE = re.compile(
    r"(?i)\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:tomorrow|tonight|eod|eow|"
    r"end of (?:day|week|month|quarter)|next week|q[1-4])\b"
    r"|\b\d{4}-\d{2}-\d{2}\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}\b"
    r"|周[一二三四五六日天]|星期[一二三四五六日天]|明天|后天|下周|月底|年底|\d{1,2}月\d{1,2}[日号]"
)
PROPER_NAME = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?")
REQUEST = re.compile(
    r"(?i)^(?:please|pls|can you|could you|would you|i need|we need|i want|we want|let's|"
    r"make|add|fix|write|build|set up|setup|migrate|deploy|create|update|change|move|find|"
    r"check|run|help|implement|refactor|investigate|look into|figure out|compare|draft|plan)\b"
    r"|请|帮我|帮忙|麻烦|需要|我想|我们要|想要|能不能|可以.*吗|给我|把"
)
REFINEMENT = re.compile(
    r"(?i)^(?:(?:oh|ok|okay|and|so|also)[, ]+)?(?:also|additionally|actually|instead|"
    r"change (?:it|that)|make (?:it|sure)|update:|correction|scratch that|"
    r"on second thought|one more thing)\b"
    r"|还要|另外|改成|改为|换成|更正|补充一下|再加|顺便"
)
"""A user sentence that refines the goal: it *starts* like one ("Also…", "Actually…",
"改成…"); a "but" in the middle of chat is not a refinement."""
GREETING = re.compile(
    r"(?i)^(?:hi|hey|hello|yo|hiya|howdy|morning|good (?:morning|afternoon|evening)|there|"
    r"all|team|folks|嗨|哈喽|哈啰|你好|你好呀|您好|在吗|在不在|在嘛|早|早上好|早安|上午好|下午好|"
    r"晚上好|大家好)$"
)
"""One word of a greeting ("hey, morning", "hi there", "在吗", "早上好")."""
_FILLER_WORDS = frozenset(
    {
        "good",
        "great",
        "perfect",
        "alright",
        "right",
        "fine",
        "so",
        "then",
        "please",
        "pls",
        "ty",
        "again",
        "now",
        "on",
        "ahead",
        "go",
        "keep",
        "going",
        "much",
        "very",
        "a",
        "lot",
        "谢",
        "啦",
        "吧",
        "了",
        "哦",
        "噢",
        "呀",
        "啊",
        "那",
        "就",
    }
)
CHATTER = re.compile(
    r"(?i)\b(haha+|lol|lmao|hehe|:\)|:d|weather|weekend|coffee|lunch|sounds good|"
    r"awesome|cool|nice one|no worries|cheers|thanks|thank you|great job|good morning|"
    r"good night)\b|哈哈|呵呵|嘿嘿|天气|周末|咖啡|午饭|辛苦了|谢谢|太好了|不错"
)
LOG_NOISE = re.compile(
    r"(?i)^\s*(?:\[?\d{4}-\d{2}-\d{2}[t ][\d:.,]+z?\]?|\d{2}:\d{2}:\d{2})?\s*\[?"
    r"(?:info|debug|trace|notice)\b"
)
_DIGITS = re.compile(r"\d+")
_HEX = re.compile(r"\b[0-9a-f]{6,}\b")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"[A-Za-z]{2,}")
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True, slots=True)
class Salience:
    """A line's score and the strongest signal found (``anchor``: where a clip should be
    centred; empty when nothing specific was found)."""

    score: float
    kinds: tuple[str, ...]
    anchor: str = ""

    def has(self, *kinds: str) -> bool:
        return any(k in self.kinds for k in kinds)


_WEIGHTS: tuple[tuple[str, re.Pattern[str], float], ...] = (
    ("marked", MARKED, 4.0),
    ("error", ERROR_LINE, 3.0),
    ("code", ERROR_CODE, 2.5),
    ("decision", DECISION, 2.5),
    ("constraint", CONSTRAINT, 2.0),
    ("port", PORT, 2.5),
    ("version", VERSION, 2.0),
    ("quantity", NUMBER_UNIT, 2.0),
    ("url", URL, 2.0),
    ("path", PATH, 2.0),
    ("date", DATE, 1.5),
    ("identifier", IDENTIFIER, 1.5),
    ("command", COMMAND, 1.5),
    ("number", ANY_NUMBER, 0.7),
    ("name", PROPER_NAME, 0.8),
)
_BASE: dict[str, float] = {"user": 3.5, "assistant": 0.8, "tool": 0.0, "previous": 2.0}
_TOOL_FULL_WEIGHT = frozenset({"error", "code", "port", "url", "path", "identifier", "command"})
"""Signals a tool's output carries at full weight; its prose (docs, pages, logs) counts at
:data:`_TOOL_PROSE` — tool output is evidence that can be fetched again, the user's words
are not."""
_TOOL_PROSE = 0.5
_WEAK_KINDS = frozenset({"date", "name", "number", "question"})
_TOOL_ERROR = 5.0
_ENTITY_KINDS = frozenset(
    {"error", "code", "port", "version", "url", "path", "identifier", "command"}
)
SATURATION_FREE = 6
"""Sentences a lexical signal may appear in before its weight starts to shrink."""
_META_PREFIX = re.compile(
    r"(?i)^\s*\[(?=[^\]\n]{0,40}(?:\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}|\d{1,2}月))[^\]\n]{1,40}\]\s*"
)
"""A leading time stamp (``[1:56 pm on 8 May, 2023]``, ``[2026-03-01 10:00]``): metadata,
not what was said."""


def template_of(text: str) -> str:
    """``text`` with digits, hex runs and spacing normalised: lines that differ only in
    numbers (timestamps, counters, ids) share a template."""
    lowered = _HEX.sub("#", text.lower())
    return _SPACE.sub(" ", _DIGITS.sub("#", lowered)).strip()


def is_filler(text: str) -> bool:
    """True for a message that asks for nothing: empty, a slash command, a bare
    acknowledgement ("ok", "continue", "继续", "好的") or a short pleasantry made of
    acknowledgements and chatter ("sounds good, thanks!", "好的，谢谢")."""
    if is_trivial_prompt(text):
        return True
    stripped = _META_PREFIX.sub("", text.strip())
    if is_trivial_prompt(stripped):
        return True
    if len(stripped) > 60 or any(
        p.search(stripped) for p in (PATH, URL, ANY_NUMBER, ERROR_LINE, COMMAND)
    ):
        return False
    rest = CHATTER.sub(" ", stripped)
    parts = [p for p in re.split(r"[\s,，。.!！?？~…;；:：、]+", rest) if p]
    return all(
        is_trivial_prompt(p) or GREETING.match(p) or p.lower() in _FILLER_WORDS for p in parts
    )


def saturation(counts: Mapping[str, int]) -> dict[str, float]:
    """Weight factors for signal kinds that are everywhere in a span.

    ``counts`` maps a kind to how many user/assistant sentences carry it. A lexical signal
    (marked, constraint, decision, quantity, date, name...) in up to :data:`SATURATION_FREE`
    sentences keeps its weight; beyond, its weight shrinks with the log of its frequency —
    in a chat where "important" or "always" is in every other sentence, it no longer marks
    anything. Entity signals (errors, codes, ports, versions, paths, URLs, identifiers) are
    never saturated: each one is a different fact.
    """
    out: dict[str, float] = {}
    for kind, count in counts.items():
        if kind in _ENTITY_KINDS or count <= SATURATION_FREE:
            continue
        out[kind] = 1.0 / (1.0 + math.log2(count / SATURATION_FREE))
    return out


@dataclass(frozen=True, slots=True)
class _Signals:
    """What the regular expressions found in one line (memoised: logs repeat lines)."""

    found: tuple[tuple[str, float, str], ...]
    """``(kind, weight for this source, matched text)``."""
    request: bool
    question: bool
    chatter: bool
    log_noise: bool
    words: float


@functools.lru_cache(maxsize=1 << 16)
def _signals(stripped: str, source: Source) -> _Signals:
    found: list[tuple[str, float, str]] = []
    for kind, pattern, weight in _WEIGHTS:
        match = pattern.search(stripped)
        if match is None:
            continue
        if kind == "error" and source == "assistant" and not ERROR_CODE.search(stripped):
            weight = 1.0  # an agent talking about an error is not the error line itself
        elif kind == "error" and source == "tool":
            weight = _TOOL_ERROR  # what a tool reports failing is what the next turn needs
        if source == "tool" and kind not in _TOOL_FULL_WEIGHT:
            weight *= _TOOL_PROSE
        found.append((kind, weight, match.group(0)))
    is_user = source == "user"
    return _Signals(
        found=tuple(found),
        request=is_user and REQUEST.search(stripped) is not None,
        question=is_user and stripped.endswith(("?", "？")),
        chatter=CHATTER.search(stripped) is not None,
        log_noise=source == "tool" and LOG_NOISE.search(stripped) is not None,
        words=len(_WORD.findall(stripped)) + len(_CJK.findall(stripped)) / 2,
    )


def score_line(text: str, source: Source, factors: Mapping[str, float] | None = None) -> Salience:
    """Salience of one line or sentence from ``source`` (see the module docstring).

    Each kind of signal counts once (a line with five numbers is not five times as
    salient); user requests and questions add to the user's base; chatter and log noise
    subtract; very short fragments without signals score 0. ``factors`` (from
    :func:`saturation`) scale the weight of kinds that are everywhere in the span.
    """
    stripped = text.strip()
    if source != "tool":
        stripped = _META_PREFIX.sub("", stripped)
    if not stripped or (source == "user" and is_filler(stripped)):
        return Salience(0.0, ())
    factors = factors or {}
    signals = _signals(stripped, source)
    score = _BASE[source]
    kinds: list[str] = []
    anchor = ""
    for kind, weight, matched in signals.found:
        score += weight * factors.get(kind, 1.0)
        kinds.append(kind)
        if not anchor and weight >= 1.5:
            anchor = matched
    if signals.request:
        score += 1.0 * factors.get("request", 1.0)
        kinds.append("request")
    if signals.question:
        score += 0.5 * factors.get("question", 1.0)
        kinds.append("question")
    if signals.chatter:
        score -= 1.5
    if signals.log_noise and "error" not in kinds:
        score *= 0.3
    strong = [k for k in kinds if k not in _WEAK_KINDS]
    if signals.words < 3 and not kinds:
        score = 0.0
    elif source == "user" and signals.words < 4 and not strong:
        score *= 0.4  # "ugh monday": a date-like word is not a request
    elif signals.words > 60:
        score *= 0.8  # a wall of text: its signals are diluted
    return Salience(max(score, 0.0), tuple(kinds), anchor)


def repetition_discount(count: int) -> float:
    """Factor for a line whose template occurs ``count`` times in the span (1 → 1.0)."""
    return 1.0 / (1.0 + math.log2(count)) if count > 1 else 1.0


__all__ = [
    "COMMAND",
    "CONSTRAINT",
    "DECISION",
    "ERROR_LINE",
    "MARKED",
    "PATH",
    "REFINEMENT",
    "URL",
    "Salience",
    "Source",
    "is_filler",
    "repetition_discount",
    "saturation",
    "score_line",
    "template_of",
]
