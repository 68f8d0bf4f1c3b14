"""Answer in context: the offline stand-in for end-to-end accuracy (no LLM runs).

For one question, the *recall block* is what ``before_turn`` would put in front of the model:
the retriever's turns best first, packed by the product's packer
(:func:`hermes_core.recall_pack.pack_recall`: one ``[date] speaker: excerpt`` line per turn,
query-focused excerpts, a fair share of the budget per turn) and fenced by
:func:`hermes_core.context.build_memory_context_block`, all within a token budget
(:func:`hermes_core.llm.tokens.estimate_tokens`, fence included). The question scores 1 when
the block contains the gold answer, both normalised by :func:`normalize_answer` (case,
punctuation, whitespace).

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
from hermes_core.recall_pack import DEFAULT_RECALL_TOKENS, RecallHit, pack_recall
from hermes_core.text import has_cjk

DEFAULT_BUDGET = DEFAULT_RECALL_TOKENS
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

    def hit(self) -> RecallHit:
        """The packer's view of this turn."""
        return RecallHit(self.text, self.date, self.speaker)


def recall_block(
    lines: Sequence[ContextLine], budget: int = DEFAULT_BUDGET, query: str = ""
) -> str:
    """The fenced recall block of ``lines`` (best first) packed for ``query`` within
    ``budget`` estimated tokens, fence included; ``""`` when nothing fits or ``lines`` is
    empty. Without a query each turn shows its head."""
    if budget <= 0 or not lines:
        return ""
    overhead = estimate_tokens(build_memory_context_block("x")) + 1
    text = pack_recall([line.hit() for line in lines], query, budget - overhead)
    return build_memory_context_block(text) if text else ""


__all__ = [
    "DEFAULT_BUDGET",
    "ContextLine",
    "contains_answer",
    "is_span",
    "normalize_answer",
    "recall_block",
]
