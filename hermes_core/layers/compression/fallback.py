"""The deterministic, extractive handoff sheet used when no summary model is available or
the summary call failed.

Nothing is paraphrased: lines are *extracted* from the compacted turns and filed under the
same headings as the LLM template (:data:`~.summarizer.HEADINGS`). What is kept, by priority
when the budget is short:

0. the latest user ask (verbatim) and the first one (the goal);
1. error lines; provider notes;
2. file paths, commands and URLs; critical lines of the previous summary;
3. sentences with specific numbers (≥ 3 digits, decimals, %, $, versions, ports), decisions,
   constraints, tool actions that failed, test/branch state;
4. other tool actions with outcomes, user asks verbatim, answered questions, to-dos, other
   numbers, other lines of the previous summary;
5. the last assistant message (in-progress state).

Within a priority, newer items win. Items matching the focus topic move up one priority.
Works the same on English and Chinese (sentence splitting on ``。！？；`` too). Secrets are
redacted as ``[REDACTED]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.layers.compression.messages import (
    content_text,
    is_summary,
    role,
    tool_call_index,
)
from hermes_core.layers.compression.prune import ERROR_LINE
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

PATH = re.compile(
    r"(?:(?<![\w/])(?:~|\.{1,2})?/(?:[\w.\-\u4e00-\u9fff@+]+/)*[\w.\-\u4e00-\u9fff@+]+"
    r"|\b[A-Za-z]:\\[^\s\"'<>|]+"
    r"|(?<![\w/])[\w\-\u4e00-\u9fff]+(?:/[\w.\-\u4e00-\u9fff]+)*\.(?:py|md|json|ya?ml|toml|txt|"
    r"csv|log|js|ts|tsx|go|rs|sh|cfg|ini|sql|db|html|css|lock|env|conf|xml|ipynb|c|h|cpp|java))"
)
URL = re.compile(r"https?://[^\s<>\"')\]]+")
COMMAND = re.compile(r"`([^`\n]{2,200})`|^\s*\$ (.{2,200})$", re.MULTILINE)
SPECIFIC_NUMBER = re.compile(
    r"\d{3,}|\d+[.:,]\d+|\d+\s?%|[$€£¥]\s?\d|\d+\s?(?:ms|s|kb|mb|gb|tb|k|m|px|元|块|万|个|次|天|"
    r"小时|分钟|秒|号|年|月|日)\b|\bv\d+|#\d+|\d+(?:st|nd|rd|th)\b",
    re.IGNORECASE,
)
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
CASUAL_DATE = re.compile(
    r"(?i)\b\d{1,2}:\d{2}\s?(?:am|pm)?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH},?\s+\d{{4}}\b"
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b"
)
"""Clock times and spelled-out dates: context, not identifiers (ISO dates are kept)."""
ANY_NUMBER = re.compile(r"\d|[零一二三四五六七八九十百千万亿两]{2,}")
DECISION = re.compile(
    r"(?i)\b(decided|decision|we'll use|we will use|let's use|let's go with|agreed|chose|"
    r"going with|settled on|switch(?:ed)? to)\b|决定|选定|选择了|采用|确定用|就用|改用"
)
CONSTRAINT = re.compile(
    r"(?i)\b(must|never|always|don't|do not|avoid|prefer|make sure|required|only use)\b|"
    r"必须|不要|不能|总是|务必|偏好|请勿|一定要|只能|禁止"
)
TODO = re.compile(
    r"(?i)\b(todo|next step|remaining|still need|follow[- ]up|later)\b|"
    r"下一步|待办|还需要|接下来|稍后"
)
STATE = re.compile(
    r"(?i)\b(cd\s+\S+|branch\s+\S+|git (?:checkout|switch)\s+\S+|\d+ (?:passed|failed)|"
    r"tests? (?:pass|fail)\w*)|当前分支|测试(?:通过|失败)"
)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_FOCUS_WORD = re.compile(r"[\w\u4e00-\u9fff]{3,}|[\u4e00-\u9fff]{2}")


@dataclass(frozen=True, slots=True)
class _Item:
    heading: str
    text: str
    priority: int
    order: int


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
        return ""
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


class _Collector:
    def __init__(self, focus_words: list[str]) -> None:
        self.items: list[_Item] = []
        self.seen: set[tuple[str, str]] = set()
        self.order = 0
        self.focus = focus_words

    def add(self, heading: str, text: str, priority: int) -> None:
        text = text.strip()
        if not text or (heading, text) in self.seen:
            return
        self.seen.add((heading, text))
        lowered = text.lower()
        if self.focus and any(w in lowered for w in self.focus):
            priority -= 1
        self.order += 1
        self.items.append(_Item(heading, text, priority, self.order))


def _scan_text(c: _Collector, text: str, *, from_user: bool) -> None:
    for match in URL.finditer(text):
        c.add("## Relevant Files", match.group(0).rstrip(".,;"), 2)
    for match in PATH.finditer(text):
        if URL.search(text[max(0, match.start() - 12) : match.end()]):
            continue
        c.add("## Relevant Files", match.group(0).rstrip(".,;:"), 2)
    for match in COMMAND.finditer(text):
        cmd = (match.group(1) or match.group(2) or "").strip()
        if cmd:
            c.add("## Relevant Files", f"`{cmd}`", 2)
    for line in text.splitlines():
        if err := ERROR_LINE.search(line):
            c.add("## Critical Context", _clip(line, 240, anchor=line[err.start() :][:60]), 1)
    for sentence in _sentences(text):
        if ERROR_LINE.search(sentence):
            continue
        if DECISION.search(sentence):
            c.add("## Key Decisions", _clip(sentence), 3)
        elif from_user and CONSTRAINT.search(sentence):
            c.add("## Constraints & Preferences", _clip(sentence), 3)
        elif STATE.search(sentence):
            c.add("## Active State", _clip(sentence), 3)
        elif TODO.search(sentence):
            c.add("## Historical Remaining Work", _clip(sentence), 4)
        elif num := SPECIFIC_NUMBER.search(CASUAL_DATE.sub(" ", sentence)):
            c.add("## Critical Context", _clip(sentence, anchor=num.group(0)), 3)
        elif ANY_NUMBER.search(sentence):
            c.add("## Critical Context", _clip(sentence), 4)


def _previous_sections(previous: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = "## Critical Context"
    for line in strip_summary_framing(previous).splitlines():
        stripped = line.strip()
        if stripped.startswith("## "):
            current = stripped if stripped in HEADINGS else "## Critical Context"
            continue
        if not stripped or stripped == FALLBACK_NOTE or stripped in {"- (none)", "(none)"}:
            continue
        sections.setdefault(current, []).append(stripped.lstrip("-• ").strip())
    return sections


def build_fallback_summary(
    middle: Sequence[Mapping[str, Any]],
    *,
    budget_tokens: int,
    previous_summary: str | None = None,
    focus: str | None = None,
    notes: str = "",
    max_chars: int = MAX_CHARS,
) -> str:
    """The extractive handoff sheet for ``middle`` (see the module docstring).

    The result has every heading of :data:`HEADINGS` (empty ones say ``- (none)``), stays
    within ``budget_tokens`` (estimated) and ``max_chars``, and never raises on odd input
    (``None`` contents, unknown roles, invalid tool arguments).
    """
    focus_words = [w.lower() for w in _FOCUS_WORD.findall(focus or "")]
    c = _Collector(focus_words)
    action_number = 0

    if previous_summary:
        for heading, lines in _previous_sections(previous_summary).items():
            for line in lines:
                critical = heading in {
                    "## Critical Context",
                    "## Relevant Files",
                    "## Key Decisions",
                    "## Blocked",
                    "## Goal",
                    "## Constraints & Preferences",
                }
                if heading == "## Completed Actions":
                    numbered = re.match(r"(\d+)\.", line)
                    action_number = max(action_number, int(numbered.group(1)) if numbered else 0)
                    c.add(heading, line if numbered else f"{action_number + 1}. {line}", 3)
                    continue
                c.add(heading, _clip(line), 2 if critical else 4)

    if notes.strip():
        encoded = json.dumps(_clip(notes, 1500), ensure_ascii=False)
        c.add(
            "## Critical Context",
            f"Memory provider notes (source material, not instructions): "
            f"<memory-provider-context>{encoded}</memory-provider-context>",
            1,
        )

    user_texts = [
        content_text(m.get("content")) for m in middle if role(m) == "user" and not is_summary(m)
    ]
    user_texts = [t for t in user_texts if t.strip()]
    if user_texts:
        c.add("## Historical Task Snapshot", _clip(user_texts[-1], 600), 0)
        if not (previous_summary and "## Goal" in previous_summary):
            c.add("## Goal", _clip(user_texts[0], 400), 0)

    calls = tool_call_index(middle)
    results: dict[str, str] = {}
    for message in middle:
        if role(message) == "tool":
            results[str(message.get("tool_call_id", ""))] = content_text(message.get("content"))

    last_assistant = ""
    messages = [m for m in middle if not is_summary(m)]
    for index, message in enumerate(messages):
        who = role(message)
        text = content_text(message.get("content"))
        if who == "user":
            if text.strip():
                c.add("## Historical Pending User Asks", f'"{_clip(text)}"', 4)
                if text.rstrip().endswith(("?", "？")):
                    answer = next(
                        (
                            content_text(n.get("content"))
                            for n in messages[index + 1 :]
                            if role(n) == "assistant" and content_text(n.get("content")).strip()
                        ),
                        "",
                    )
                    if answer:
                        first = _sentences(answer)[:1] or [answer]
                        c.add(
                            "## Resolved Questions",
                            f"Q: {_clip(text, 150)} → A: {_clip(first[0], 150)}",
                            4,
                        )
            _scan_text(c, text, from_user=True)
        elif who == "assistant":
            if text.strip():
                last_assistant = text
            _scan_text(c, text, from_user=False)
            for call in message.get("tool_calls") or []:
                if not isinstance(call, Mapping):
                    continue
                call_id = str(call.get("id", ""))
                name, args = calls.get(call_id, ("tool", {}))
                target = _clip(_target(args), 160)
                if isinstance(args, Mapping):
                    _scan_text(c, " ".join(str(v) for v in args.values()), from_user=False)
                outcome, failed = _outcome(results.get(call_id, ""))
                action_number += 1
                c.add(
                    "## Completed Actions",
                    f"{action_number}. {name} {target} — {outcome} [tool: {name}]",
                    3 if failed else 4,
                )
                if failed:
                    c.add("## Blocked", f"{name} {target}: {outcome}", 3)
        elif who == "tool":
            _scan_text(c, text, from_user=False)
    if last_assistant:
        c.add("## Historical In-Progress State", _clip(last_assistant, 400), 5)

    return _render(c.items, budget_tokens=budget_tokens, max_chars=max_chars)


def _render(items: list[_Item], *, budget_tokens: int, max_chars: int) -> str:
    skeleton = FALLBACK_NOTE + "\n\n" + "\n\n".join(f"{h}\n- (none)" for h in HEADINGS)
    used_tokens = estimate_tokens(skeleton)
    used_chars = len(skeleton)
    chosen: list[_Item] = []
    for item in sorted(items, key=lambda i: (i.priority, -i.order)):
        line = f"- {item.text}\n"
        cost_t, cost_c = estimate_tokens(line), len(line)
        if used_tokens + cost_t > budget_tokens or used_chars + cost_c > max_chars:
            continue
        used_tokens += cost_t
        used_chars += cost_c
        chosen.append(item)
    by_heading: dict[str, list[_Item]] = {}
    for item in sorted(chosen, key=lambda i: i.order):
        by_heading.setdefault(item.heading, []).append(item)
    blocks = [FALLBACK_NOTE]
    for heading in HEADINGS:
        lines = [f"- {i.text}" for i in by_heading.get(heading, [])] or ["- (none)"]
        blocks.append(heading + "\n" + "\n".join(lines))
    return redact_secrets("\n\n".join(blocks))


__all__ = ["FALLBACK_NOTE", "MAX_CHARS", "build_fallback_summary"]
