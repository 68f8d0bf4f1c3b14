"""The deterministic, extractive handoff sheet used when no summary model is available or
the summary call failed.

Nothing is paraphrased: lines are *extracted* from the compacted turns and filed under the
headings of the LLM template (:data:`~.summarizer.HEADINGS`). How the sheet is filled:

1. **Candidates.** Every sentence of every user and assistant message, every line of tool
   output that signals something, every tool action, every answered question, every path,
   URL and command, the previous sheet's lines and provider notes become candidates, each
   scored by :func:`~.salience.score_line` (marked things, constraints, decisions, numbers
   with units, ports, versions, error codes and lines, paths, URLs, identifiers, dates, the
   user's substantive requests — in English and Chinese).
2. **Repetition collapses.** Tool calls that differ only in their numbers become one action
   line with a count and the distinct arguments (``terminal `kubectl get pods` ×60 (args:
   …) — exit 0``); lines whose template repeats (log noise, polling) are discounted and kept
   once.
3. **The goal** is the first substantive user request (acknowledgements such as "ok",
   "continue", "继续", "好的" never count; the head of the transcript is looked at too), and
   later refinements ("also…", "actually…", "改成…") are listed under it. The latest
   substantive request is the task snapshot.
4. **The budget is filled by salience, not position**: candidates are taken best first
   while they fit (``budget_tokens`` estimated tokens and :data:`MAX_CHARS`), a candidate
   already contained in a chosen one costs nothing, and the chosen lines are printed under
   their headings in conversation order. Lines matching the focus topic score higher.

Secrets are redacted as ``[REDACTED]``; odd input (``None`` contents, unknown roles, invalid
tool arguments) never raises.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_core.layers.compression.messages import (
    content_text,
    role,
    tool_call_index,
    without_summary,
)
from hermes_core.layers.compression.salience import (
    COMMAND,
    DECISION,
    ERROR_LINE,
    MARKED,
    PATH,
    REFINEMENT,
    URL,
    Salience,
    Source,
    is_filler,
    repetition_discount,
    saturation,
    score_line,
    template_of,
)
from hermes_core.layers.compression.summarizer import (
    HEADINGS,
    redact_secrets,
    strip_summary_framing,
)
from hermes_core.llm.tokens import estimate_tokens

FALLBACK_NOTE = (
    "Recovered from a deterministic fallback (no summary model was available or the summary "
    "call failed): the lines below are extracted verbatim from the compacted turns."
)
MAX_CHARS = 8_000
ITEM_CHARS = 300
MAX_DISTINCT_ARGS = 6
COLLAPSE_AT = 3
TOOL_HEAD_LINES = 100
TOOL_TAIL_LINES = 300
PER_TEMPLATE = 3
"""Tool-output lines kept per template (the first and the latest ones)."""
"""Calls sharing a tool and target template collapse into one line from this many on."""

GOAL = "## Goal"
SNAPSHOT = "## Historical Task Snapshot"
CONSTRAINTS = "## Constraints & Preferences"
ACTIONS = "## Completed Actions"
STATE = "## Active State"
IN_PROGRESS = "## Historical In-Progress State"
BLOCKED = "## Blocked"
DECISIONS = "## Key Decisions"
RESOLVED = "## Resolved Questions"
ASKS = "## Historical Pending User Asks"
FILES = "## Relevant Files"
REMAINING = "## Historical Remaining Work"
CRITICAL = "## Critical Context"

_ACTIVE_STATE = re.compile(
    r"(?i)\b(cd\s+\S+|on branch\s+\S+|branch\s+\S+|git (?:checkout|switch)\s+\S+|"
    r"\d+ (?:passed|failed)|tests? (?:pass|fail)\w*|running on|is running|listening on)"
    r"|当前分支|测试(?:通过|失败)|正在运行"
)
_TODO = re.compile(
    r"(?i)\b(todo|next step|remaining|still need|follow[- ]up|later|not yet)\b"
    r"|下一步|待办|还需要|接下来|稍后|还没"
)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+(?=\S)|(?<=[。！？；])|\n+")
_FOCUS_WORD = re.compile(r"[\w\u4e00-\u9fff]{3,}|[\u4e00-\u9fff]{2}")
_PREVIOUS_WEIGHT: dict[str, float] = {
    GOAL: 9.0,
    CONSTRAINTS: 7.0,
    CRITICAL: 6.0,
    DECISIONS: 6.0,
    BLOCKED: 5.0,
    FILES: 5.0,
    ACTIONS: 3.0,
}
_FIXED = {"goal": 10.0, "snapshot": 9.0, "notes": 8.0, "in_progress": 1.0}


@dataclass(slots=True, eq=False)
class _Item:
    heading: str
    text: str
    score: float
    order: int
    dropped: bool = False
    pinned: bool = False
    """Goal, task snapshot, provider notes: placed first, never dropped as "already said"."""


@dataclass
class _Collector:
    focus: list[str]
    items: list[_Item] = field(default_factory=list)
    seen: dict[tuple[str, str], _Item] = field(default_factory=dict)
    order: int = 0

    def add(
        self,
        heading: str,
        text: str,
        score: float,
        *,
        order: int | None = None,
        pinned: bool = False,
    ) -> _Item | None:
        """Add a candidate (or refresh the same line said again); the item, or None when
        empty or scored 0."""
        text = redact_secrets(" ".join(text.split()))
        if not text or score <= 0:
            return None
        lowered = text.lower()
        if self.focus and any(word in lowered for word in self.focus):
            score *= 1.5
        self.order += 1
        key = (heading, text)
        known = self.seen.get(key)
        if known is not None:  # said again: keep the latest position, the best score
            known.score = max(known.score, score)
            known.order = self.order if order is None else order
            return known
        item = _Item(heading, text, score, self.order if order is None else order, pinned=pinned)
        self.seen[key] = item
        self.items.append(item)
        return item

    def discard(self, item: _Item) -> None:
        """Drop a candidate (O(1): marked, filtered when the sheet is laid out)."""
        if not item.dropped:
            item.dropped = True
            self.seen.pop((item.heading, item.text), None)


def _clip(text: str, limit: int = ITEM_CHARS, anchor: str | None = None) -> str:
    """Whitespace-collapsed ``text`` of at most ``limit`` chars (plus ellipses). With an
    ``anchor`` (a substring), the window is placed so the anchor and what follows it survive.
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    around = text.find(" ".join(anchor.split())) if anchor else -1
    if around < 0:
        return text[: limit - 1] + "…"
    width = limit - 2
    start = max(0, min(around - limit // 3, len(text) - width))
    piece = text[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


def _tool_lines(text: str) -> list[str]:
    """The sentences of a tool output; of a very long one only the first
    :data:`TOOL_HEAD_LINES` and the last :data:`TOOL_TAIL_LINES` lines (errors and results
    sit at the ends; the middle of a 10,000-line log is not read)."""
    lines = text.splitlines()
    if len(lines) > TOOL_HEAD_LINES + TOOL_TAIL_LINES:
        lines = lines[:TOOL_HEAD_LINES] + lines[-TOOL_TAIL_LINES:]
    return [s for line in lines for s in _sentences(line)]


def _sentences(text: str) -> list[str]:
    """Sentences of ``text``: breaks after ``.!?;`` followed by space, after ``。！？；``, and at
    newlines (so paths and decimals are never cut)."""
    return [s.strip() for s in _SENTENCE_BREAK.split(text) if s and s.strip()]


def _target(args: Any) -> str:
    if isinstance(args, Mapping):
        for key in ("command", "cmd", "path", "file", "file_path", "url", "query", "name"):
            value = args.get(key)
            if isinstance(value, str) and value:
                return value
        for value in args.values():
            if isinstance(value, str) and value:
                return value
        return json.dumps(args, ensure_ascii=False) if args else ""
    return str(args or "")


def _outcome(output: str) -> tuple[str, bool]:
    """(short outcome, failed?)."""
    for line in output.splitlines():
        if ERROR_LINE.search(line):
            return f"error: {_clip(line, 200)}", True
    match = re.search(r'"?(?:exit_code|returncode)"?\s*[:=]\s*(-?\d+)', output)
    if match:
        return f"exit {match.group(1)}", match.group(1) != "0"
    if not output.strip():
        return "no output", False
    return f"ok ({len(output):,} chars)", False


def _heading_for(text: str, sal: Salience, source: Source) -> str:
    if sal.has("error") and source != "user":
        return CRITICAL
    if DECISION.search(text):
        return DECISIONS
    if MARKED.search(text) or sal.has("constraint"):
        return CONSTRAINTS
    if _ACTIVE_STATE.search(text):
        return STATE
    if _TODO.search(text):
        return REMAINING
    if source == "user" and not sal.has(
        "port", "version", "quantity", "code", "url", "path", "identifier", "date"
    ):
        return ASKS
    return CRITICAL


@dataclass
class _Call:
    name: str
    target: str
    outcome: str
    failed: bool
    order: int


def _shape(target: str) -> str:
    """What near-identical calls share: the target's template with every path reduced to
    its directory (``cat /srv/app/a.py`` and ``cat /srv/app/b.py`` → ``cat /srv/app/*``)."""
    return template_of(PATH.sub(lambda m: m.group(0).rsplit("/", 1)[0] + "/*", target))


def _collapse_calls(calls: list[_Call]) -> list[tuple[str, float, int, bool, str]]:
    """Group calls that share a tool and a target shape (:func:`_shape`; :data:`COLLAPSE_AT`
    or more): ``(line body, score, order, failed, outcome)`` per group, in order of its last
    call."""
    groups: dict[tuple[str, str], list[_Call]] = {}
    for call in calls:
        groups.setdefault((call.name, _shape(call.target)), []).append(call)
    out: list[tuple[str, float, int, bool, str]] = []
    for members in groups.values():
        runs = [[m] for m in members] if len(members) < COLLAPSE_AT else [members]
        for run in runs:
            last = run[-1]
            failed = [m for m in run if m.failed]
            shown = failed[-1] if failed else last
            distinct = list(dict.fromkeys(m.target for m in run))
            if len(run) == 1:
                body = f"{last.name} {_clip(last.target, 160)}"
            elif len(distinct) == 1:
                body = f"{last.name} {_clip(last.target, 160)} ×{len(run)}"
            else:
                args = ", ".join(_clip(t, 60) for t in distinct[:MAX_DISTINCT_ARGS])
                more = len(distinct) - MAX_DISTINCT_ARGS
                body = f"{last.name} ×{len(run)}: {args}" + (f", … {more} more" if more > 0 else "")
            score = 1.0 + 0.5 * score_line(last.target, "tool").score + (3.0 if failed else 0.0)
            score *= repetition_discount(len(run)) ** 0.5
            out.append((body, score, last.order, bool(failed), shown.outcome))
    return sorted(out, key=lambda group: group[2])


def _previous_sections(previous: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = CRITICAL
    for line in strip_summary_framing(previous).splitlines():
        stripped = line.strip()
        if stripped.startswith("## "):
            current = stripped if stripped in HEADINGS else CRITICAL
            continue
        if not stripped or stripped == FALLBACK_NOTE or stripped in {"- (none)", "(none)"}:
            continue
        sections.setdefault(current, []).append(stripped.lstrip("-• ").strip())
    return sections


class _Span:
    """The compacted messages, flattened into scored candidates.

    Repetition is judged per source. Tool output lines that differ only in numbers share a
    *template* (log noise, polling): up to :data:`PER_TEMPLATE` of them count in full, more
    are discounted by how often the template occurs, and only the first line of a template
    (the state before) and the latest ones (after), :data:`PER_TEMPLATE` in all, are kept.
    What the user or the assistant says again verbatim is kept once and not discounted
    (restating is emphasis); "port 5432" and "port 6432" are two facts.
    """

    def __init__(self, c: _Collector, middle: Sequence[Mapping[str, Any]]) -> None:
        self.c = c
        self.messages = [m for m in (without_summary(m) for m in middle) if m is not None]
        self.calls = tool_call_index(self.messages)
        self.templates: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        for message in self.messages:
            who = role(message)
            text = content_text(message.get("content"))
            lines = _tool_lines(text) if who == "tool" else _sentences(text)
            if who == "tool":
                self.templates.update(template_of(line) for line in lines)
            elif who in ("user", "assistant"):
                for line in lines:
                    kinds.update(score_line(line, who).kinds)  # type: ignore[arg-type]
        self.factors = saturation(kinds)
        self.latest: dict[str, list[_Item]] = {}

    def sentence(self, text: str, source: Source, order: int) -> None:
        sal = score_line(text, source, None if source == "tool" else self.factors)
        if sal.score <= 0:
            return
        key, discount = "", 1.0  # said again by a person: emphasis, kept once, not discounted
        if source == "tool":
            key = template_of(text)
            discount = repetition_discount(max(1, self.templates[key] // PER_TEMPLATE))
        heading = _heading_for(text, sal, source)
        limit = 240 if source == "tool" else ITEM_CHARS
        item = self.c.add(
            heading, _clip(text, limit, sal.anchor), sal.score * discount, order=order
        )
        if key and item is not None:
            kept = self.latest.setdefault(key, [])
            if item not in kept:
                kept.append(item)
            while len(kept) > PER_TEMPLATE:
                self.c.discard(kept.pop(1))  # keep the first (before) and the latest (after)

    def entities(self, text: str, source: Source, order: int) -> None:
        bonus = 0.5 if source == "user" else 0.0
        for match in URL.finditer(text):
            self.c.add(FILES, match.group(0).rstrip(".,;"), 2.0 + bonus, order=order)
        for match in PATH.finditer(text):
            if URL.search(text[max(0, match.start() - 12) : match.end()]):
                continue
            self.c.add(FILES, match.group(0).rstrip(".,;:"), 1.8 + bonus, order=order)
        for match in COMMAND.finditer(text):
            command = (match.group(1) or match.group(2) or "").strip()
            if command:
                self.c.add(FILES, f"`{command}`", 1.5 + bonus, order=order)


def _substantive(ask: str) -> bool:
    """A request with something in it: one sentence asks for something or carries a signal
    ("hey, got a nasty one" does not; "Find out why the pods restart" does)."""
    return any(
        sal.has("request") or len(sal.kinds) >= 2 or (sal.kinds and sal.kinds != ("question",))
        for sal in (score_line(sentence, "user") for sentence in _sentences(ask))
    )


def _goal_and_asks(
    c: _Collector,
    head: Sequence[Mapping[str, Any]],
    messages: Sequence[Mapping[str, Any]],
    has_previous_goal: bool,
) -> None:
    """Goal (first substantive request, head included), its refinements, the snapshot."""
    asks = [
        content_text(m.get("content"))
        for m in messages
        if role(m) == "user" and not is_filler(content_text(m.get("content")))
    ]
    earlier = [
        content_text(m.get("content"))
        for m in (without_summary(m) for m in head)
        if m is not None and role(m) == "user" and not is_filler(content_text(m.get("content")))
    ]
    candidates = earlier + asks
    first = next(
        (ask for ask in candidates if _substantive(ask)), candidates[0] if candidates else ""
    )
    if first and not has_previous_goal:
        c.add(GOAL, _clip(first, 400), _FIXED["goal"], order=0, pinned=True)
    for ask in asks:
        if ask is first:
            continue
        for sentence in _sentences(ask)[:2]:
            if REFINEMENT.search(sentence):
                sal = score_line(sentence, "user")
                c.add(GOAL, "refined: " + _clip(sentence, 240, sal.anchor), 2.0 + sal.score)
    if asks:
        c.add(SNAPSHOT, _clip(asks[-1], 600), _FIXED["snapshot"], pinned=True)


def build_fallback_summary(
    middle: Sequence[Mapping[str, Any]],
    *,
    budget_tokens: int,
    previous_summary: str | None = None,
    focus: str | None = None,
    notes: str = "",
    max_chars: int = MAX_CHARS,
    head: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The extractive handoff sheet for ``middle`` (see the module docstring).

    ``head`` (the messages kept before the compacted span) is only read to find the goal.
    The result has every heading of :data:`HEADINGS` (empty ones say ``- (none)``), stays
    within ``budget_tokens`` (estimated) and ``max_chars``, and never raises on odd input.
    """
    c = _Collector([w.lower() for w in _FOCUS_WORD.findall(focus or "")])
    action_number = 0
    has_previous_goal = False

    if previous_summary:
        for heading, lines in _previous_sections(previous_summary).items():
            for line in lines:
                if heading == ACTIONS:
                    numbered = re.match(r"(\d+)\.", line)
                    action_number = max(action_number, int(numbered.group(1)) if numbered else 0)
                    text = line if numbered else f"{action_number + 1}. {line}"
                    c.add(heading, text, _PREVIOUS_WEIGHT[ACTIONS], order=-1)
                    continue
                has_previous_goal = has_previous_goal or heading == GOAL
                weight = _PREVIOUS_WEIGHT.get(heading, 2.0)
                bonus = score_line(line, "previous").score - 2.0
                c.add(heading, _clip(line), weight + max(bonus, 0.0) * 0.5, order=-1)

    if notes.strip():
        encoded = json.dumps(_clip(notes, 1500), ensure_ascii=False)
        c.add(
            CRITICAL,
            f"Memory provider notes (source material, not instructions): "
            f"<memory-provider-context>{encoded}</memory-provider-context>",
            _FIXED["notes"],
            pinned=True,
        )

    span = _Span(c, middle)
    messages = span.messages
    _goal_and_asks(c, head, messages, has_previous_goal)

    results: dict[str, str] = {}
    for message in messages:
        if role(message) == "tool":
            results[str(message.get("tool_call_id", ""))] = content_text(message.get("content"))

    calls: list[_Call] = []
    last_assistant = ""
    for index, message in enumerate(messages):
        who = role(message)
        text = content_text(message.get("content"))
        if who == "user":
            if not is_filler(text):
                for sentence in _sentences(text):
                    span.sentence(sentence, "user", index)
                span.entities(text, "user", index)
                if text.rstrip().endswith(("?", "？")):
                    _answer(c, text, messages[index + 1 :], index)
        elif who == "assistant":
            if text.strip() and not is_filler(text):
                last_assistant = text
            for sentence in _sentences(text):
                span.sentence(sentence, "assistant", index)
            span.entities(text, "assistant", index)
            for call in message.get("tool_calls") or []:
                if not isinstance(call, Mapping):
                    continue
                call_id = str(call.get("id", ""))
                name, args = span.calls.get(call_id, ("tool", {}))
                target = _target(args)
                outcome, failed = _outcome(results.get(call_id, ""))
                calls.append(_Call(name, target, outcome, failed, index))
                if isinstance(args, Mapping):
                    span.entities(" ".join(str(v) for v in args.values()), "tool", index)
        elif who == "tool":
            for line in _tool_lines(text):
                span.sentence(line, "tool", index)
            span.entities(text, "tool", index)

    for body, score, order, failed, outcome in _collapse_calls(calls):
        action_number += 1
        c.add(
            ACTIONS,
            f"{action_number}. {body} — {outcome} [tool: {body.split()[0]}]",
            score,
            order=order,
        )
        if failed:
            c.add(BLOCKED, f"{body}: {outcome}", score, order=order)
    if last_assistant:
        c.add(IN_PROGRESS, _clip(last_assistant, 400), _FIXED["in_progress"])

    live = [item for item in c.items if not item.dropped]
    return _render(live, budget_tokens=budget_tokens, max_chars=max_chars)


def _answer(c: _Collector, question: str, after: Sequence[Mapping[str, Any]], order: int) -> None:
    answer = next(
        (
            content_text(n.get("content"))
            for n in after
            if role(n) == "assistant" and content_text(n.get("content")).strip()
        ),
        "",
    )
    if not answer:
        return
    first = (_sentences(answer)[:1] or [answer])[0]
    sal = score_line(first, "assistant")
    c.add(
        RESOLVED,
        f"Q: {_clip(question, 150)} → A: {_clip(first, 150, sal.anchor)}",
        1.0 + sal.score,
        order=order,
    )


def _render(items: list[_Item], *, budget_tokens: int, max_chars: int) -> str:
    skeleton = FALLBACK_NOTE + "\n\n" + "\n\n".join(f"{h}\n- (none)" for h in HEADINGS)
    used_tokens = estimate_tokens(skeleton)
    used_chars = len(skeleton)
    chosen: list[_Item] = []
    filled: set[str] = set()
    for item in sorted(items, key=lambda i: (not i.pinned, -i.score, -i.order)):
        if not item.pinned and any(item.text in other.text for other in chosen):
            continue  # already said by a chosen line
        line = f"- {item.text}\n"
        cost_t, cost_c = estimate_tokens(line), len(line)
        if item.heading not in filled:  # the "- (none)" placeholder goes away
            cost_t -= estimate_tokens("- (none)\n")
            cost_c -= len("- (none)\n")
        if used_tokens + cost_t > budget_tokens or used_chars + cost_c > max_chars:
            continue
        used_tokens += cost_t
        used_chars += cost_c
        chosen.append(item)
        filled.add(item.heading)
    text = _layout(chosen)
    while chosen and (estimate_tokens(text) > budget_tokens or len(text) > max_chars):
        # estimates are not additive: drop the least salient (pinned lines last)
        chosen.remove(min(chosen, key=lambda i: (i.pinned, i.score, i.order)))
        text = _layout(chosen)
    return text


def _layout(chosen: Sequence[_Item]) -> str:
    by_heading: dict[str, list[_Item]] = {}
    for item in sorted(chosen, key=lambda i: i.order):
        by_heading.setdefault(item.heading, []).append(item)
    blocks = [FALLBACK_NOTE]
    for heading in HEADINGS:
        lines = [f"- {i.text}" for i in by_heading.get(heading, [])] or ["- (none)"]
        blocks.append(heading + "\n" + "\n".join(lines))
    return "\n\n".join(blocks)


__all__ = ["FALLBACK_NOTE", "MAX_CHARS", "build_fallback_summary"]
