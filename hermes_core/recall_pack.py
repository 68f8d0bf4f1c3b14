"""Packing ranked recall hits into a token-budgeted block of query-focused excerpts.

A retriever answers with hits best first; what reaches the model is a few hundred to a few
thousand tokens. Whole hits, cut where the budget ends, let one long turn (an assistant's
essay) push out the short turn that holds the answer. :func:`pack_recall` instead gives each
hit a line ``[date] speaker: excerpt`` where the excerpt is the hit's sentences that carry
the query's terms (weighted by how rare each term is among the hits), each with its next and
previous sentence for context, then the rest of the hit in order; a hit without any query
term shows its head.

Contract of :func:`pack_recall`:

* **Budget.** The returned text (lines joined by ``\\n``) is estimated at most ``max_tokens``
  tokens by :func:`hermes_core.llm.tokens.estimate_tokens`; ``""`` when nothing fits.
* **Fair share.** First pass, best hit first: each hit gets at most
  ``max(min_share, room / hits)`` tokens (its header included), so no hit can eat the
  budget while later hits wait. Second pass, best hit first: the room left over lets kept
  hits grow, then hits the first pass left out get a line, while room remains.
* **Kept.** Each hit's ``date`` and ``speaker`` lead its line; lines keep the hits' order.
* **Dedupe.** A hit whose text (case, spacing and punctuation ignored) equals an earlier
  hit's, or is empty, is dropped.
* **Sentences.** English splits after ``.!?`` followed by space and at line breaks; Chinese
  (and Japanese) after ``。！？``. A sentence longer than a hit's share is cut to a window
  around its first query term, never inside a surrogate pair or before a combining mark.
  Left-out stretches show as ``…``.
* **Deterministic**: same input, same output; no clock, no randomness, no I/O.
"""

from __future__ import annotations

import math
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from hermes_core.llm.tokens import estimate_tokens
from hermes_core.text import CJK_CHAR, CJK_RANGES

DEFAULT_RECALL_TOKENS = 1500
"""Default token budget of one recall block (``memory.recall_max_tokens``)."""
MIN_SHARE = 64
"""Fewest tokens the first pass offers a hit (header included) however many hits there are."""
GAP = "…"
"""Marks text left out between or around excerpt pieces."""

_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s+|[。！？][”’」』）]*\s*|\s*\n\s*")
_WORD = re.compile(rf"[^\W_{CJK_RANGES}]+|[{CJK_RANGES}]+")
_KEY_DROP = str.maketrans(
    "", "", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~…。，、！？；：“”‘’（）《》「」"
)
_STOPWORDS = frozenset(
    (  # noqa: SIM905 - a word list read as prose
        "a an and are as at be been but by can could did do does for from had has have how i "
        "in is it its me my of on or our so that the their them there they this to was we "
        "were what when where which who whom whose why will with would you your about after "
        "before any ever some tell remind again much many"
    ).split()
)


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One ranked hit as it may be shown: when (``date``), who (``speaker``), what (``text``)."""

    text: str
    date: str = ""
    speaker: str = ""

    def header(self) -> str:
        """``[date] speaker: `` (parts left out when empty)."""
        head = f"[{self.date}] " if self.date else ""
        return head + (f"{self.speaker}: " if self.speaker else "")


def query_terms(query: str) -> list[str]:
    """The query's search terms, lower-cased, in order, without repeats: words that are not
    stop words (digits kept, other single letters dropped) and, for Chinese/Japanese runs,
    each two-character window (a lone character stands for itself)."""
    terms: list[str] = []
    for match in _WORD.finditer(query.casefold()):
        word = match.group(0)
        if CJK_CHAR.match(word):
            grams = [word] if len(word) == 1 else [word[i : i + 2] for i in range(len(word) - 1)]
            terms.extend(grams)
        elif word not in _STOPWORDS and (len(word) > 1 or word.isdigit()):
            terms.append(word)
    return list(dict.fromkeys(terms))


def _term_regex(terms: Sequence[str]) -> re.Pattern[str] | None:
    """One pattern finding every term (group ``t<i>`` for ``terms[i]``), overlapping matches
    included: CJK as a substring, a word by its stem at a word start (``tokenizers`` finds
    ``tokenizer``; a stem keeps at least four letters)."""
    if not terms:
        return None
    alternatives = []
    for i, term in enumerate(terms):
        if CJK_CHAR.match(term):
            body = re.escape(term)
        else:
            stem = term[: max(4, len(term) - 3)] if len(term) > 5 else term
            body = rf"(?<![^\W_]){re.escape(stem)}"
        alternatives.append(f"(?P<t{i}>{body})")
    return re.compile(f"(?=(?:{'|'.join(alternatives)}))", re.IGNORECASE)


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` (ends after ``.!?`` + space, after
    ``。！？``, at line breaks), blank stretches left out."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.start() if text[match.start()].isspace() else match.start() + 1
        end = max(end, start)
        while end < match.end() and not text[end].isspace():
            end += 1  # closing quotes or brackets stay with their sentence
        if text[start:end].strip():
            spans.append((start, end))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def split_sentences(text: str) -> list[str]:
    """``text``'s sentences, whitespace inside each collapsed, empty ones left out."""
    return [" ".join(text[a:b].split()) for a, b in _sentence_spans(text)]


def _dedupe_key(text: str) -> str:
    return " ".join(text.casefold().translate(_KEY_DROP).split())


def safe_cut(text: str, index: int) -> int:
    """``index`` moved back (or forward when it would reach 0) so that cutting ``text``
    there splits no surrogate pair and leaves no combining mark, variation selector or
    zero-width joiner at the start of the second part."""
    index = max(0, min(len(text), index))

    def bad(i: int) -> bool:
        if i <= 0 or i >= len(text):
            return False
        c = text[i]
        if "\udc00" <= c <= "\udfff" and "\ud800" <= text[i - 1] <= "\udbff":
            return True
        return (
            bool(unicodedata.combining(c))
            or c in "\u200d\ufe0e\ufe0f"
            or ("\ufe00" <= c <= "\ufe0f")
        )

    back = index
    while bad(back):
        back -= 1
    if back > 0:
        return back
    while bad(index):
        index += 1
    return index


def _window(sentence: str, positions: Sequence[int], tokens: int) -> str:
    """A part of ``sentence`` estimated at most ``tokens`` tokens (gap marks included),
    starting a little before the first query term."""
    if tokens <= 1:
        return ""
    wide = sum(1 for c in sentence if CJK_CHAR.match(c))
    chars_per_token = 1.0 if wide * 2 > len(sentence) else 4.0
    width = int((tokens - 1) * chars_per_token)
    first = positions[0] if positions else 0
    start = safe_cut(sentence, max(0, first - width // 4))
    end = safe_cut(sentence, start + width)
    while end > start:
        piece = (GAP if start else "") + sentence[start:end] + (GAP if end < len(sentence) else "")
        if estimate_tokens(piece) <= tokens:
            return piece
        end = safe_cut(sentence, end - max(1, (end - start) // 8))
    return ""


@dataclass(slots=True)
class _Plan:
    """One hit being packed: where the query terms are, and (once it is first grown) its
    sentences, their costs and the order to add them in."""

    hit: RecallHit
    spots: list[tuple[int, int]]  # (offset in text, term index)
    header_cost: int
    sentences: list[str] = field(default_factory=list)
    costs: list[int] = field(default_factory=list)
    order: list[int] = field(default_factory=list)
    positions: dict[int, list[int]] = field(default_factory=dict)
    chosen: set[int] = field(default_factory=set)
    partial: str = ""
    next_pick: int = 0
    kept: bool = False
    prepared: bool = False

    def prepare(self, weights: Sequence[float]) -> None:
        """Split into sentences and order them: the sentences holding query terms by the
        summed weight of their distinct terms (ties: earlier first), each followed by its
        next and previous sentence, then every other sentence in order."""
        self.prepared = True
        text = self.hit.text
        spans = _sentence_spans(text)
        self.sentences = [" ".join(text[a:b].split()) for a, b in spans]
        self.costs = [estimate_tokens(s) for s in self.sentences]
        starts = [a for a, _ in spans]
        terms_in: dict[int, set[int]] = {}
        for offset, term in self.spots:
            i = max(0, bisect_right(starts, offset) - 1)
            terms_in.setdefault(i, set()).add(term)
            self.positions.setdefault(i, []).append(max(0, offset - starts[i]))
        score = {i: sum(weights[t] for t in found) for i, found in terms_in.items()}
        order: list[int] = []
        for i in sorted(score, key=lambda i: (-score[i], i)):
            order.extend(j for j in (i, i + 1, i - 1) if 0 <= j < len(spans))
        order.extend(range(len(spans)))
        self.order = list(dict.fromkeys(order))

    def render(self) -> str:
        parts: list[str] = []
        previous = -1
        for i in sorted(self.chosen):
            if (parts and i != previous + 1) or (not parts and i > 0):
                parts.append(GAP)
            parts.append(self.sentences[i])
            previous = i
        if self.partial:
            parts.append(self.partial)
        elif self.chosen and previous < len(self.sentences) - 1:
            parts.append(GAP)
        return self.hit.header() + " ".join(parts)

    def grow(self, allowance: int, weights: Sequence[float]) -> int:
        """Add sentences in priority order while they fit ``allowance`` more tokens (the
        first sentence of a hit that shows nothing yet is cut to fit); the tokens spent,
        its header included the first time."""
        if not self.kept and self.header_cost + 2 > allowance:
            return 0
        if not self.prepared:
            self.prepare(weights)
        spent = 0 if self.kept else self.header_cost
        while self.next_pick < len(self.order) and not self.partial:
            i = self.order[self.next_pick]
            cost = self.costs[i] + 1
            if spent + cost <= allowance:
                self.chosen.add(i)
                spent += cost
                self.next_pick += 1
                continue
            if not self.chosen:
                piece = _window(self.sentences[i], self.positions.get(i, []), allowance - spent)
                if piece:
                    self.partial = piece
                    spent += estimate_tokens(piece) + 1
            break
        if not self.chosen and not self.partial:
            return 0  # the header alone is not worth a line
        self.kept = True
        return spent


def _plans(hits: Sequence[RecallHit], query: str) -> tuple[list[_Plan], list[float]]:
    """Plans of the distinct non-empty hits, in order, and each query term's weight
    (``log(1 + hits / hits containing it)``: a term every hit has weighs little)."""
    terms = query_terms(query)
    pattern = _term_regex(terms)
    seen: set[str] = set()
    plans: list[_Plan] = []
    df = [0] * len(terms)
    for hit in hits:
        key = _dedupe_key(hit.text)
        if not key or key in seen:
            continue
        seen.add(key)
        spots: list[tuple[int, int]] = []
        if pattern is not None:
            for match in pattern.finditer(hit.text):
                group = match.lastgroup
                if group is not None:
                    spots.append((match.start(), int(group[1:])))
        for term in {t for _, t in spots}:
            df[term] += 1
        plans.append(_Plan(hit, spots, estimate_tokens(hit.header())))
    weights = [math.log(1.0 + len(plans) / n) if n else 0.0 for n in df]
    return plans, weights


def pack_recall(
    hits: Sequence[RecallHit],
    query: str,
    max_tokens: int = DEFAULT_RECALL_TOKENS,
    *,
    min_share: int = MIN_SHARE,
) -> str:
    """``hits`` (best first) packed into at most ``max_tokens`` estimated tokens of
    ``[date] speaker: excerpt`` lines focused on ``query`` (see the module docstring for the
    full contract). ``""`` when ``hits`` is empty or nothing fits."""
    if max_tokens <= 0 or not hits:
        return ""
    plans, weights = _plans(hits, query)
    if not plans:
        return ""
    room = max_tokens
    share = max(min_share, room // len(plans))
    for plan in plans:  # first pass: a fair share each, best first
        if room <= 0:
            break
        room -= plan.grow(min(share, room), weights) + (1 if plan.kept else 0)
    for plan in plans:  # second pass: leftover room to the best hits, then to left-out ones
        if room <= 2:
            break
        was_kept = plan.kept
        room -= plan.grow(room, weights)
        if plan.kept and not was_kept:
            room -= 1
    lines = [plan.render() for plan in plans if plan.kept and (plan.chosen or plan.partial)]
    text = "\n".join(lines)
    while lines and estimate_tokens(text) > max_tokens:  # estimates are sub-additive; be sure
        lines.pop()
        text = "\n".join(lines)
    return text


def focus_excerpt(text: str, query: str, max_tokens: int) -> str:
    """One text cut to at most ``max_tokens`` estimated tokens around ``query``'s terms (the
    same excerpt :func:`pack_recall` gives a lone hit); ``text`` unchanged when it fits."""
    if estimate_tokens(text) <= max_tokens:
        return text
    return pack_recall([RecallHit(text)], query, max_tokens)


__all__ = [
    "DEFAULT_RECALL_TOKENS",
    "GAP",
    "MIN_SHARE",
    "RecallHit",
    "focus_excerpt",
    "pack_recall",
    "query_terms",
    "safe_cut",
    "split_sentences",
]
