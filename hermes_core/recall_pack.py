"""Packing ranked recall hits into a token-budgeted block of query-focused excerpts.

A retriever answers with hits best first; what reaches the model is a few hundred to a few
thousand tokens. Whole hits, cut where the budget ends, let one long turn (an assistant's
essay) push out the short turn that holds the answer. :func:`pack_recall` instead gives each
hit a line ``speaker: excerpt`` under its ``[date]``, where the excerpt is the hit's
sentences that carry the query's terms (weighted by how rare each term is among the hits),
each followed by its next and previous sentence, then the rest of the hit in order; a hit
without any query term shows its head. When the question word says what the answer looks
like (:func:`answer_cue`: a date for *when*/什么时候, an amount for *how many*/多少, a name
for *who*/*where*/*which*/谁/哪里), a sentence with query terms that also shows such a thing
counts as if it held one more term as rare as the rarest, and a hit that shows one gets its
room as if it ranked ``CUE_RANK`` (4) times higher. For a question about the asker
(:func:`hermes_core.text.about_the_asker`: I, my, 我, not "you recommended", 你推荐) a hit
whose speaker is ``user`` gets its room as if it ranked ``OWN_WORDS_RANK`` (2) times higher.

Contract of :func:`pack_recall`:

* **Budget.** The returned text is estimated at most ``max_tokens`` tokens by
  :func:`hermes_core.llm.tokens.estimate_tokens`; ``""`` when nothing fits.
* **Fair share.** First pass, best hit first, over ``first_pass`` (0.7) of the budget: each
  hit gets at most ``max(min_share, that room / hits)`` tokens (64 at least), so no hit can
  eat the budget while later hits wait. Second pass, best hit first: all the room left lets
  kept hits grow, then gives hits the first pass left out a line. Line costs are counted
  as upper bounds, so up to ``REFILLS`` (2) more rounds hand out what the rendered block
  left unused. "Best first" is rank order, with the hits moved up as above.
* **Kept.** Each hit's ``date`` is the ``[date]`` line its group of lines sits under
  (groups in the order of their best hit, lines in rank order inside) and its ``speaker``
  leads its line.
* **Dedupe.** A hit whose text (case, spacing and punctuation ignored) equals an earlier
  hit's, or is empty, is dropped.
* **Sentences.** English splits after ``.!?`` followed by space and at line breaks; Chinese
  (and Japanese) after ``。！？``. A sentence longer than the room left shows a window
  around its first query term, never cut inside a surrogate pair or before a combining
  mark. Left-out stretches show as ``…``.
* **Deterministic**: same input, same output; no clock, no randomness, no I/O.
"""

from __future__ import annotations

import math
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from hermes_core.llm.tokens import estimate_tokens, wide_chars
from hermes_core.text import CJK_CHAR, CJK_RANGES, about_the_asker

DEFAULT_RECALL_TOKENS = 1500
"""Default token budget of one recall block (``memory.recall_max_tokens``)."""
MIN_SHARE = 64
"""Fewest tokens the first pass offers a hit (its line and date) however many hits there are."""
WINDOW_MIN = 12
"""Fewest tokens worth a window of a sentence that does not fit whole (after the first)."""
FIRST_PASS = 0.7
"""Share of the budget the first pass hands out; the rest goes to the best hits first."""
GAP = "…"
"""Marks text left out between or around excerpt pieces."""
CUE_RANK = 4
"""A hit that shows what the answer looks like (:func:`answer_cue`) gets its room as if it
ranked this many times higher."""
OWN_WORDS_RANK = 2
"""For a question about the asker (I, my, 我; not you, 你), a hit whose speaker is ``user``
gets its room as if it ranked this many times higher: what the user said of themselves."""
REFILLS = 2
"""Extra rounds that hand out what the rendered block left unused (line costs are upper
bounds)."""

_SENTENCE_END = re.compile(r"([.!?][\"'”’)\]]*)\s+|([。！？][”’」』）]*)\s*|\s*\n\s*")
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


_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    "forty|fifty|hundred|thousand|million|dozen|half|once|twice"
)
_ZH_DIGITS = "0-9零〇一二两三四五六七八九十百千万"


@dataclass(frozen=True, slots=True)
class AnswerCue:
    """What an answer looks like: ``pattern`` finds it in lower-cased text when ``folded``,
    else in the text as written (names need their capitals)."""

    kind: str
    pattern: re.Pattern[str]
    folded: bool

    def search(self, text: str) -> bool:
        """Whether ``text`` shows such a thing."""
        return self.pattern.search(text.lower() if self.folded else text) is not None


# the date pattern opens with a lookahead on its possible first characters (a fast scan)
_ANSWER_LOOKS: dict[str, AnswerCue] = {
    # dates and times: month and day names, years, 3rd, 5/12, 7 pm, yesterday; 六月三日, 周五, 昨天
    "date": AnswerCue(
        "date",
        re.compile(
            rf"(?=[a-z0-9{_ZH_DIGITS}星礼周昨今明前后上下这本])(?:"
            rf"\b(?:{_MONTHS}|{_WEEKDAYS}|yesterday|today|tomorrow|tonight|weekend|ago"
            r"|(?:last|next|this)\s+(?:week|month|year|night)|(?:19|20)\d\d"
            r"|\d{1,2}(?:st|nd|rd|th)|\d{1,2}[:/.]\d{1,2}|\d{1,2}\s*(?:am|pm))\b"
            rf"|[{_ZH_DIGITS}]+\s*[年月日号点]|[星礼]期|周[一二三四五六日天末]|[昨今明前后]天"
            r"|[上下这本]个?[周月])"
        ),
        folded=True,
    ),
    # amounts: digits, currency and percent signs, number words; 三个, 两次, 五百元
    "number": AnswerCue(
        "number",
        re.compile(
            rf"\d|[$€£¥%％]|(?=[a-z])\b(?:{_NUMBER_WORDS})\b"
            rf"|[{_ZH_DIGITS}]+\s*[个次元块岁斤公里米小时分钟天周月年倍件张本]"
        ),
        folded=True,
    ),
    # names: a capitalised word inside a sentence (not its first word), a 《title》
    "name": AnswerCue("name", re.compile(r"[\w,;:\"'“‘] [\"“]?[A-Z][\w'’-]+|《[^》]+》"), False),
}
_ASKS_FOR = (
    (
        "number",
        re.compile(
            r"(?i)\b(?:how\s+(?:many|much|long|old|far|often|big|tall)"
            r"|what\s+(?:percentage|number|amount|price|size))\b"
            r"|多少|多久|多长|多大|几[个次岁年天位件本张]"
        ),
    ),
    (
        "date",
        re.compile(
            r"(?i)\b(?:when|(?:what|which)\s+(?:date|day|time|year|month))\b"
            r"|什么时候|何时|哪一?[天年月]|几[号点月]|星期几|周几"
        ),
    ),
    (
        "name",
        re.compile(
            r"(?i)\b(?:who|whom|whose|where|which\s+\w+|what(?:'s|\s+is|\s+was)?\s+(?:the\s+)?name)\b"
            r"|谁|哪里|哪儿|在哪|哪个|哪家|叫什么"
        ),
    ),
)


def answer_cue(query: str) -> AnswerCue | None:
    """What the answer to ``query`` looks like, when its question word says
    so (first that applies): amounts for how many/much/long (多少, 几个), dates and times for
    when (什么时候, 哪天), names for who/where/which (谁, 哪里); ``None`` otherwise."""
    for kind, asks in _ASKS_FOR:
        if asks.search(query):
            return _ANSWER_LOOKS[kind]
    return None


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One ranked hit as it may be shown: when (``date``), who (``speaker``), what (``text``)."""

    text: str
    date: str = ""
    speaker: str = ""


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


def _needles(terms: Sequence[str]) -> list[tuple[str, bool]]:
    """Each term as searched in lower-cased text: ``(needle, at word start only)``. CJK
    terms are substrings; a word is found by its stem at a word start (``tokenizers``
    finds ``tokenizer``; a stem keeps at least four letters)."""
    out = []
    for term in terms:
        if CJK_CHAR.match(term):
            out.append((term, False))
        else:
            out.append((term[: max(4, len(term) - 3)] if len(term) > 5 else term, True))
    return out


def _find_terms(lowered: str, needles: Sequence[tuple[str, bool]]) -> list[tuple[int, int]]:
    """``(offset, term index)`` of every occurrence of the needles in ``lowered`` (a hit's
    ``text.lower()``, whose offsets equal ``text``'s for almost all text)."""
    spots: list[tuple[int, int]] = []
    for index, (needle, word_start) in enumerate(needles):
        at = lowered.find(needle)
        while at >= 0:
            if not word_start or at == 0 or not lowered[at - 1].isalnum():
                spots.append((at, index))
            at = lowered.find(needle, at + 1)
    return spots


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` (ends after ``.!?`` + space, after
    ``。！？``, at line breaks; closing quotes and brackets stay with their sentence), blank
    stretches left out."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end(match.lastindex) if match.lastindex else match.start()
        if end > start and (not text[start].isspace() or text[start:end].strip()):
            spans.append((start, end))
        start = match.end()
    if start < len(text) and text[start:].strip():
        spans.append((start, len(text)))
    return spans


def split_sentences(text: str) -> list[str]:
    """``text``'s sentences, whitespace inside each collapsed, empty ones left out."""
    return [" ".join(text[a:b].split()) for a, b in _sentence_spans(text)]


def _dedupe_key(text: str) -> str:
    """``text`` without case, punctuation and runs of spaces: equal keys, same hit."""
    return " ".join(text.casefold().translate(_KEY_DROP).split())


class _Seen:
    """Dedupe keys seen so far; the full key of a long text is made only when an earlier
    text starts the same way (keys equal ⇒ their first 40 key characters are equal)."""

    HEAD = 40

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {}  # head of the key → texts kept with it

    def add(self, text: str) -> bool:
        """False when ``text`` is empty or duplicates an earlier one; else remember it."""
        head = _dedupe_key(text[: self.HEAD * 3])[: self.HEAD]
        if len(head) < self.HEAD and len(text) > self.HEAD * 3:
            head = _dedupe_key(text)  # mostly punctuation: the whole key decides
        if not head:
            return False
        earlier = self.texts.setdefault(head, [])
        if earlier:
            key = _dedupe_key(text)
            if any(_dedupe_key(other) == key for other in earlier):
                return False
        earlier.append(text)
        return True


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
    wide = wide_chars(sentence)
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


def _chars(text: str) -> tuple[int, int]:
    """``(wide, rest)`` characters of ``text`` as :func:`estimate_tokens` counts them."""
    wide = wide_chars(text)
    return wide, len(text) - wide


@dataclass(slots=True)
class _Plan:
    """One hit being packed: where the query terms are, and (once it is first grown) its
    sentences, their sizes and the order to add them in. A line's cost is counted as
    :func:`estimate_tokens` counts (wide characters + a quarter of the rest, its newline and
    a space and a gap mark per sentence included), so little room is lost to rounding."""

    hit: RecallHit
    spots: list[tuple[int, int]]  # (offset in text, term index)
    wide: int  # the speaker prefix's and newline's, then the chosen sentences' too
    rest: int
    spans: list[tuple[int, int]] = field(default_factory=list)
    sizes: list[tuple[int, int]] = field(default_factory=list)
    order: list[int] = field(default_factory=list)
    positions: dict[int, list[int]] = field(default_factory=dict)
    chosen: dict[int, str] = field(default_factory=dict)  # index → sentence or its window
    windowed: dict[int, tuple[int, int]] = field(default_factory=dict)  # index → its size
    next_pick: int = 0
    prepared: bool = False
    rank: int = 0  # place among the distinct hits, best first
    cue: AnswerCue | None = None  # what the answer looks like, when the query says so
    cue_text: str = ""  # the text ``cue`` searches (lower-cased when folded)
    shows_cue: bool = False  # the text shows what the answer looks like

    def sentence(self, i: int) -> str:
        """Sentence ``i`` with its runs of whitespace collapsed (never longer than its span,
        whose size is what it is charged)."""
        a, b = self.spans[i]
        return " ".join(self.hit.text[a:b].split())

    @property
    def kept(self) -> bool:
        return bool(self.chosen)

    def cost(self, wide: int = 0, rest: int = 0) -> int:
        """Tokens of this line with ``wide``/``rest`` more characters."""
        return self.wide + wide + (self.rest + rest + 3) // 4

    def prepare(self, weights: Sequence[float]) -> None:
        """Split into sentences and order them: the sentences holding query terms by the
        summed weight of their distinct terms (ties: earlier first), each followed by its
        next and previous sentence, then every other sentence in order."""
        self.prepared = True
        text = self.hit.text
        spans = _sentence_spans(text)
        self.spans = spans
        if wide_chars(text):
            self.sizes = [_chars(text[a:b]) for a, b in spans]
        else:  # no wide characters anywhere: a sentence costs its length (an upper bound)
            self.sizes = [(0, b - a) for a, b in spans]
        starts = [a for a, _ in spans]
        terms_in: dict[int, set[int]] = {}
        for offset, term in self.spots:
            i = max(0, bisect_right(starts, offset) - 1)
            terms_in.setdefault(i, set()).add(term)
            self.positions.setdefault(i, []).append(max(0, offset - starts[i]))
        score = {i: sum(weights[t] for t in found) for i, found in terms_in.items()}
        if self.cue is not None and self.shows_cue and score:
            bonus = max(weights)  # the answer's kind counts as much as the rarest term
            for i in score:
                if self.cue.pattern.search(self.cue_text, *spans[i]):
                    score[i] += bonus
        ranked = sorted(score, key=lambda i: (-score[i], i))
        order: list[int] = []
        for i in ranked:
            order.extend(j for j in (i, i + 1, i - 1) if 0 <= j < len(spans))
        order.extend(range(len(spans)))
        self.order = list(dict.fromkeys(order))

    def render(self) -> str:
        """``speaker: excerpt`` (the date is the group's header)."""
        parts: list[str] = []
        previous = -1
        for i in sorted(self.chosen):
            if (parts and i != previous + 1) or (not parts and i > 0):
                parts.append(GAP)
            parts.append(self.chosen[i])
            previous = i
        if previous < len(self.spans) - 1 and not parts[-1].endswith(GAP):
            parts.append(GAP)
        who = f"{self.hit.speaker}: " if self.hit.speaker else ""
        return who + " ".join(parts)

    def _take(self, i: int, piece: str, size: tuple[int, int]) -> None:
        if i in self.windowed:
            old = self.windowed.pop(i)
            self.wide -= old[0]
            self.rest -= old[1]
        self.chosen[i] = piece
        self.wide += size[0]
        self.rest += size[1]

    def grow(self, allowance: int, weights: Sequence[float]) -> int:
        """Add sentences in priority order while the line costs at most ``allowance`` more
        tokens; a sentence too long for what is left shows a window around its query
        terms (widened to the whole sentence by a later call when it fits). The tokens the
        line grew by (its speaker and newline included the first time)."""
        before = self.cost() if self.kept else 0
        limit = before + allowance
        if not self.kept and self.cost(0, 4) > limit:
            return 0
        if not self.prepared:
            self.prepare(weights)
        for i in list(self.windowed):  # a window first: the whole sentence when it fits
            wide, rest = self.sizes[i]
            old_wide, old_rest = self.windowed[i]
            if self.cost(wide - old_wide, rest + 3 - old_rest) <= limit:
                self._take(i, self.sentence(i), (wide, rest + 3))
        while self.next_pick < len(self.order):
            i = self.order[self.next_pick]
            if i in self.chosen:
                self.next_pick += 1
                continue
            wide, rest = self.sizes[i]
            if self.cost(wide, rest + 3) <= limit:  # a space and a gap mark at most
                self._take(i, self.sentence(i), (wide, rest + 3))
                self.next_pick += 1
                continue
            room = limit - self.cost() - 1
            if room >= WINDOW_MIN or not self.chosen:
                piece = _window(self.sentence(i), self.positions.get(i, []), room)
                if piece:
                    size = _chars(piece)
                    self._take(i, piece, (size[0], size[1] + 1))
                    self.windowed[i] = (size[0], size[1] + 1)
                    self.next_pick += 1
            break
        return self.cost() - before if self.kept else 0


def _plans(hits: Sequence[RecallHit], query: str) -> tuple[list[_Plan], list[float]]:
    """Plans of the distinct non-empty hits, in order, and each query term's weight
    (``log(1 + hits / hits containing it)``: a term every hit has weighs little)."""
    terms = query_terms(query)
    needles = _needles(terms)
    cue = answer_cue(query)
    seen = _Seen()
    plans: list[_Plan] = []
    df = [0] * len(terms)
    for hit in hits:
        if not seen.add(hit.text):
            continue
        lowered = hit.text.lower()
        spots = _find_terms(lowered, needles)
        for term in {t for _, t in spots}:
            df[term] += 1
        who = f"{hit.speaker}: " if hit.speaker else ""
        wide, rest = _chars(who)
        plan = _Plan(hit, spots, wide, rest + 1, rank=len(plans))
        if cue is not None:
            plan.cue = cue
            plan.cue_text = lowered if cue.folded else hit.text
            plan.shows_cue = cue.pattern.search(plan.cue_text) is not None
        plans.append(plan)
    weights = [math.log(1.0 + len(plans) / n) if n else 0.0 for n in df]
    return plans, weights


def _date_header(date: str) -> str:
    return f"[{date}]"


_DATE_LINE = re.compile(r"\[[^\]\n]*\]")


def pack_recall(
    hits: Sequence[RecallHit],
    query: str,
    max_tokens: int = DEFAULT_RECALL_TOKENS,
    *,
    min_share: int = MIN_SHARE,
    first_pass: float = FIRST_PASS,
) -> str:
    """``hits`` (best first) packed into at most ``max_tokens`` estimated tokens of
    query-focused ``speaker: excerpt`` lines under ``[date]`` headers (see the module
    docstring for the full contract). ``""`` when ``hits`` is empty or nothing fits."""
    if max_tokens <= 0 or not hits:
        return ""
    plans, weights = _plans(hits, query)
    if not plans:
        return ""
    room = max_tokens
    dated: set[str] = set()

    def grow(plan: _Plan, allowance: int) -> int:
        date = plan.hit.date
        header = 0
        if date and date not in dated and not plan.kept:
            wide, rest = _chars(_date_header(date))
            header = wide + (rest + 1 + 3) // 4
        spent = plan.grow(allowance - header, weights)
        if spent and header:
            dated.add(date)
            spent += header
        return spent

    first_room = int(max_tokens * first_pass)
    share = max(min_share, first_room // len(plans))
    # hits showing what the answer looks like are visited as if ranked CUE_RANK× higher,
    # the user's own words OWN_WORDS_RANK× for a question about the asker; the block still
    # lists every hit in rank order
    mine = about_the_asker(query)

    def visit_key(plan: _Plan) -> float:
        key = (plan.rank + 1) / (CUE_RANK if plan.shows_cue else 1)
        if mine and plan.hit.speaker.casefold() == "user":
            key /= OWN_WORDS_RANK
        return key

    visit = sorted(plans, key=visit_key)
    for plan in visit:  # first pass: a fair share each, best first
        if max_tokens - room >= first_room:
            break
        room -= grow(plan, min(share, room))
    refills = 0
    text = ""
    while True:  # then all that is left to the best hits, in order
        grown = 0
        for plan in visit:
            if room <= 0:
                break
            spent = grow(plan, room)
            room -= spent
            grown += spent
        if refills and not grown:
            return text
        text = _render(plans, max_tokens)
        # line costs are upper bounds: what the rendered block left unused is handed out again
        room = max_tokens - estimate_tokens(text)
        refills += 1
        if room <= 0 or refills > REFILLS:
            return text


def _render(plans: Sequence[_Plan], max_tokens: int) -> str:
    """Kept lines grouped under their date (groups in the order of their best hit, lines in
    rank order inside), dropped from the end in the never-expected case of an overrun."""
    kept = [plan for plan in plans if plan.kept]
    while kept:
        groups: dict[str, list[str]] = {}
        for plan in kept:
            groups.setdefault(plan.hit.date, []).append(plan.render())
        lines: list[str] = []
        for date, rendered in groups.items():
            if date:
                lines.append(_date_header(date))
            lines.extend(rendered)
        text = "\n".join(lines)
        if estimate_tokens(text) <= max_tokens:
            return text
        kept.pop()
    return ""


def hits_shown(block: str) -> int:
    """How many hits a block made by :func:`pack_recall` shows (its lines that are not a
    ``[date]`` header; a hit's line always starts with its speaker or its text)."""
    return sum(1 for line in block.splitlines() if line and not _DATE_LINE.fullmatch(line))


def focus_excerpt(text: str, query: str, max_tokens: int) -> str:
    """One text cut to at most ``max_tokens`` estimated tokens around ``query``'s terms (the
    same excerpt :func:`pack_recall` gives a lone hit); ``text`` unchanged when it fits."""
    if estimate_tokens(text) <= max_tokens:
        return text
    return pack_recall([RecallHit(text)], query, max_tokens)


__all__ = [
    "CUE_RANK",
    "DEFAULT_RECALL_TOKENS",
    "FIRST_PASS",
    "GAP",
    "MIN_SHARE",
    "OWN_WORDS_RANK",
    "REFILLS",
    "AnswerCue",
    "RecallHit",
    "about_the_asker",
    "answer_cue",
    "focus_excerpt",
    "hits_shown",
    "pack_recall",
    "query_terms",
    "safe_cut",
    "split_sentences",
]
