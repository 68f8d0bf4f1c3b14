"""Answer in context: the offline stand-in for end-to-end accuracy (no LLM runs).

For one question, the *recall block* is what ``before_turn`` would put in front of the model:
the retriever's turns best first, one line each (``[date] speaker: text``), fenced by
:func:`hermes_core.context.build_memory_context_block` and cut to a token budget
(:func:`hermes_core.llm.tokens.estimate_tokens`; the line that crosses the budget is cut
inside, the rest dropped). The question scores 1 when the block contains the gold answer,
both normalised by :func:`normalize_answer` (case, punctuation, whitespace).

Only *span* questions are scored: those whose normalised answer occurs in their own
evidence text (a computed total or a judgement cannot be found verbatim anywhere);
:func:`is_span` decides.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hermes_core.context import build_memory_context_block
from hermes_core.llm.tokens import estimate_tokens
from hermes_core.text import has_cjk

DEFAULT_BUDGET = 1500
"""Tokens of the recall block (``--budget``)."""
_SPACES = re.compile(r"\s+")


def normalize_answer(text: str) -> str:
    """NFKC, lower case, every punctuation/symbol character replaced by a space, runs of
    whitespace collapsed, ends stripped. ``"The Beagle!"`` → ``"the beagle"``;
    ``"咖啡，拿铁。"`` → ``"咖啡 拿铁"``."""
    folded = unicodedata.normalize("NFKC", str(text)).lower()
    chars = [" " if unicodedata.category(c)[0] in "PSZC" else c for c in folded]
    return _SPACES.sub(" ", "".join(chars)).strip()


def contains_answer(text: str, answer: str) -> bool:
    """Whether normalised ``answer`` occurs in normalised ``text``: as whole words for
    alphabetic answers ("cat" is not found in "category"), as a substring when the answer
    holds CJK characters (no spaces between words). An empty answer is never found."""
    needle = normalize_answer(answer)
    if not needle:
        return False
    haystack = normalize_answer(text)
    if has_cjk(needle):
        return needle in haystack
    return f" {needle} " in f" {haystack} "


def is_span(answer: str, evidence: Iterable[str]) -> bool:
    """A span question: its normalised answer occurs in its own evidence text."""
    return contains_answer("\n".join(evidence), answer)


@dataclass(frozen=True, slots=True)
class ContextLine:
    """One recalled turn as it would be shown: when, who, what."""

    date: str
    speaker: str
    text: str

    def render(self) -> str:
        """``[date] speaker: text`` (parts left out when empty)."""
        head = f"[{self.date}] " if self.date else ""
        who = f"{self.speaker}: " if self.speaker else ""
        return f"{head}{who}{' '.join(self.text.split())}"


def _cut(text: str, tokens: int) -> str:
    """The longest prefix of ``text`` estimated at most ``tokens`` tokens."""
    if tokens <= 0:
        return ""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def recall_block(lines: Sequence[ContextLine], budget: int = DEFAULT_BUDGET) -> str:
    """The fenced recall block of ``lines`` (best first) within ``budget`` estimated tokens,
    fence included; ``""`` when nothing fits or ``lines`` is empty."""
    if budget <= 0 or not lines:
        return ""
    overhead = estimate_tokens(build_memory_context_block("x")) + 1
    room = budget - overhead
    kept: list[str] = []
    used = 0
    for line in lines:
        rendered = line.render()
        cost = estimate_tokens(rendered) + 1
        if used + cost <= room:
            kept.append(rendered)
            used += cost
            continue
        rest = _cut(rendered, room - used - 1)
        if rest:
            kept.append(rest)
        break
    block = build_memory_context_block("\n".join(kept))
    while block and estimate_tokens(block) > budget and kept:
        kept[-1] = _cut(kept[-1], estimate_tokens(kept[-1]) - 8)
        if not kept[-1]:
            kept.pop()
        block = build_memory_context_block("\n".join(kept))
    return block


__all__ = [
    "DEFAULT_BUDGET",
    "ContextLine",
    "contains_answer",
    "is_span",
    "normalize_answer",
    "recall_block",
]
