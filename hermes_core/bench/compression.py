"""Needle benchmark for compaction: do planted facts survive the handoff sheet?

Each LoCoMo conversation (read at run time from the path given; the data is never copied)
becomes one OpenAI-style transcript: a system message, then speaker A as ``user`` and speaker
B as ``assistant`` (consecutive turns of one speaker merged, each session opened with its
date). Into it we plant facts, deterministically from ``seed``:

* **critical** — numbers (ports, budgets, invoice ids), file paths, error lines; half of the
  errors arrive as real tool-call groups (``terminal`` call + failing tool result);
* **other** — decisions.

Every kind exists in English and in Chinese. Facts are planted in the part of the
transcript that will be compacted (between 10 % and 70 % of the messages). The transcript is
then compacted once, the way a session at its threshold would be: window = 2 × its
estimated tokens (so the default 0.50 threshold is exactly reached), default compression
settings, no LLM (the deterministic fallback). A fact counts as kept when its needle string
is still in the compacted transcript.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes_core.fsutil import BENCH_FILE_MAX_BYTES, read_regular_text
from hermes_core.layers.compression import (
    MERGED_MARKER_KEY,
    SUMMARY_MARKER_KEY,
    CompressionState,
    compress_messages,
    content_text,
)
from hermes_core.llm.tokens import estimate_messages_tokens
from hermes_core.settings.models import CompressionSettings
from hermes_core.types import ChatMessage, CompressionBudget

Kind = Literal["number", "path", "error", "decision"]
CRITICAL_KINDS: frozenset[str] = frozenset({"number", "path", "error"})
PLANT_START = 0.10
PLANT_END = 0.70

_NAMES = ["mira", "tomas", "ines", "kwame", "yuki", "liang", "sofia", "arjun"]
_PLACES = ["Lakeside Hall", "Cedar Barn", "the Harbor Loft", "Maple Pavilion"]
_ZH_PLACES = ["黄山", "西湖", "青岛海边", "丽江古城"]
_ERRORS = [
    ("ConnectionResetError", "peer closed the socket during upload"),
    ("PermissionError", "cannot write to the backup volume"),
    ("TimeoutError", "sync did not finish within the window"),
    ("ValueError", "invalid date in the exported calendar"),
]


@dataclass(frozen=True, slots=True)
class PlantedFact:
    """One planted fact: ``needle`` must appear verbatim in the compacted transcript."""

    kind: Kind
    language: Literal["en", "zh"]
    needle: str
    via_tool: bool = False

    @property
    def critical(self) -> bool:
        return self.kind in CRITICAL_KINDS


@dataclass(slots=True)
class ConversationResult:
    """Figures of one compacted conversation."""

    sample_id: str
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    summary_tokens: int
    facts: int
    facts_kept: int
    critical: int
    critical_kept: int
    in_summary_only: int
    lost: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.tokens_before / self.tokens_after if self.tokens_after else 0.0


@dataclass(slots=True)
class BenchResult:
    """Totals over every conversation; ``by_kind``/``by_language`` are ``[kept, total]``."""

    conversations: list[ConversationResult]
    by_kind: dict[str, list[int]]
    by_language: dict[str, list[int]]

    @property
    def tokens_before(self) -> int:
        return sum(c.tokens_before for c in self.conversations)

    @property
    def tokens_after(self) -> int:
        return sum(c.tokens_after for c in self.conversations)

    @property
    def ratio(self) -> float:
        return self.tokens_before / self.tokens_after if self.tokens_after else 0.0

    @property
    def min_ratio(self) -> float:
        return min((c.ratio for c in self.conversations), default=0.0)

    @property
    def critical_share(self) -> float:
        total = sum(c.critical for c in self.conversations)
        return sum(c.critical_kept for c in self.conversations) / total if total else 0.0

    @property
    def fact_share(self) -> float:
        total = sum(c.facts for c in self.conversations)
        return sum(c.facts_kept for c in self.conversations) / total if total else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "conversations": [{**asdict(c), "ratio": c.ratio} for c in self.conversations],
            "by_kind": self.by_kind,
            "by_language": self.by_language,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "ratio": self.ratio,
            "min_ratio": self.min_ratio,
            "critical_share": self.critical_share,
            "fact_share": self.fact_share,
        }


def load_conversations(path: Path) -> list[tuple[str, list[ChatMessage]]]:
    """``(sample_id, transcript)`` for each LoCoMo conversation in ``path``.

    Raises ``ValueError`` naming the file when it is not LoCoMo-shaped.
    """
    try:
        data = json.loads(read_regular_text(path, max_bytes=BENCH_FILE_MAX_BYTES, what="data file"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read LoCoMo data from {path}: {exc}") from exc
    if not isinstance(data, list):
        raise ValueError(f"{path} is not a LoCoMo file (expected a JSON list of samples)")
    out: list[tuple[str, list[ChatMessage]]] = []
    for index, sample in enumerate(data):
        conv = sample.get("conversation") if isinstance(sample, Mapping) else None
        if not isinstance(conv, Mapping):
            raise ValueError(f"{path}: sample {index} has no 'conversation' object")
        speaker_a = conv.get("speaker_a")
        numbers = sorted(
            int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", str(k)))
        )
        msgs: list[ChatMessage] = [
            {
                "role": "system",
                "content": "You are a helpful assistant with a long-running conversation.",
            }
        ]
        for n in numbers:
            date = conv.get(f"session_{n}_date_time", "")
            for position, turn in enumerate(conv.get(f"session_{n}") or []):
                if not isinstance(turn, Mapping) or not turn.get("text"):
                    continue
                role = "user" if turn.get("speaker") == speaker_a else "assistant"
                text = str(turn["text"])
                if position == 0 and date:
                    text = f"[{date}] {text}"
                if msgs[-1]["role"] == role:
                    msgs[-1]["content"] += "\n" + text
                else:
                    msgs.append({"role": role, "content": text})
        if msgs[-1]["role"] != "user":
            msgs.append({"role": "user", "content": "Thanks! What should we do next?"})
        out.append((str(sample.get("sample_id", index)), msgs))
    return out


def _fact_sentences(rng: random.Random, serial: int) -> list[tuple[PlantedFact, str]]:
    """(fact, sentence to append to a user message) for the non-tool facts."""
    name = rng.choice(_NAMES)
    port = rng.randint(1025, 65000)
    amount = rng.randint(1200, 98000)
    invoice = f"INV-{rng.randint(10000, 99999)}"
    year = rng.randint(2019, 2025)
    path_en = f"/home/{name}/photos/trip-{year}-{serial}/album.json"
    path_zh = f"/srv/相册/旅行_{year}_{serial}/照片.zip"
    place = rng.choice(_PLACES)
    zh_place = rng.choice(_ZH_PLACES)
    zh_port = rng.randint(1025, 65000)
    zh_amount = rng.randint(1200, 98000)
    size = rng.randint(101, 999)
    return [
        (
            PlantedFact("number", "en", str(port)),
            f"Oh, and the home server listens on port {port}.",
        ),
        (
            PlantedFact("number", "en", f"${amount}"),
            f"Our trip budget is capped at ${amount} this year.",
        ),
        (PlantedFact("number", "en", invoice), f"The venue invoice number is {invoice}."),
        (PlantedFact("path", "en", path_en), f"I put the pictures in {path_en} for you."),
        (
            PlantedFact("error", "en", f"ERROR 413: upload of {size} MB rejected"),
            f"The site keeps failing with ERROR 413: upload of {size} MB rejected",
        ),
        (
            PlantedFact("decision", "en", place),
            f"We decided to book {place} for the family reunion.",
        ),
        (PlantedFact("number", "zh", str(zh_port)), f"顺便说一下，家里 NAS 的端口是 {zh_port}。"),
        (PlantedFact("number", "zh", f"{zh_amount} 元"), f"这次旅行的预算上限是 {zh_amount} 元。"),
        (PlantedFact("path", "zh", path_zh), f"照片我放在 {path_zh} 里了。"),
        (PlantedFact("decision", "zh", zh_place), f"我们决定国庆去{zh_place}。"),
    ]


def _tool_facts(rng: random.Random, serial: int) -> list[tuple[PlantedFact, list[ChatMessage]]]:
    """(fact, tool-call group) for the errors reported by tools."""
    err, msg = rng.choice(_ERRORS)
    code = rng.randint(2, 125)
    en_line = f"{err}: {msg} (code {code})"
    zh_code = rng.randint(2, 125)
    zh_line = f"错误：同步相册失败，磁盘空间不足（代码 {zh_code}）"
    groups: list[tuple[PlantedFact, list[ChatMessage]]] = []
    for lang, line, cmd in (
        ("en", en_line, f"python sync_photos.py --batch {serial}"),
        ("zh", zh_line, f"python 同步.py --批次 {serial}"),
    ):
        call_id = f"plant_{serial}_{lang}"
        groups.append(
            (
                PlantedFact("error", lang, line, via_tool=True),  # type: ignore[arg-type]
                [
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {
                                    "name": "terminal",
                                    "arguments": json.dumps({"command": cmd}, ensure_ascii=False),
                                },
                            }
                        ],
                    },
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "content": "Traceback (most recent call last):\n"
                        '  File "sync.py", line 88, in <module>\n'
                        f"{line}\n",
                    },
                    {"role": "assistant", "content": "That sync failed; I will look into it."},
                ],
            )
        )
    return groups


def plant(
    messages: Sequence[ChatMessage], seed: int, rounds: int = 1
) -> tuple[list[ChatMessage], list[PlantedFact]]:
    """A copy of ``messages`` with facts planted (``rounds`` × 12 facts) in 10–70 % of it."""
    rng = random.Random(seed)
    out = [dict(m) for m in messages]
    facts: list[PlantedFact] = []
    n = len(out)
    users = [
        i for i, m in enumerate(out) if m["role"] == "user" and PLANT_START * n <= i < PLANT_END * n
    ]
    if not users:
        raise ValueError("conversation too short to plant facts")
    insertions: list[tuple[int, list[ChatMessage]]] = []
    for serial in range(rounds):
        for fact, sentence in _fact_sentences(rng, serial):
            index = rng.choice(users)
            out[index]["content"] = f"{out[index]['content']} {sentence}"
            facts.append(fact)
        for fact, group in _tool_facts(rng, serial):
            index = rng.choice(users)
            insertions.append((index + 1, group))
            facts.append(fact)
    for index, group in sorted(insertions, key=lambda item: item[0], reverse=True):
        # a tool group goes after the user message; the assistant reply that followed it is
        # merged into the group's closing assistant message so roles keep alternating
        if index < len(out) and out[index]["role"] == "assistant":
            tail = out.pop(index)
            group = [
                *group[:-1],
                {**group[-1], "content": f"{group[-1]['content']} {tail['content']}"},
            ]
        out[index:index] = group
    return out, facts


def _text_of(messages: Sequence[Mapping[str, Any]]) -> str:
    parts: list[str] = []
    for m in messages:
        parts.append(content_text(m.get("content")))
        for call in m.get("tool_calls") or []:
            parts.append(json.dumps(call, ensure_ascii=False))
    return "\n".join(parts)


def run_conversation(
    sample_id: str, messages: Sequence[ChatMessage], *, seed: int, rounds: int = 1
) -> tuple[ConversationResult, list[PlantedFact], list[bool]]:
    """Plant, compact once with the deterministic fallback, and score."""
    planted, facts = plant(messages, seed, rounds)
    tokens = estimate_messages_tokens(planted)
    context = tokens * 2
    settings = CompressionSettings()
    budget = CompressionBudget(
        context_length=context,
        threshold_tokens=int(context * settings.threshold),
        prompt_tokens=tokens,
    )
    result = compress_messages(
        planted,
        settings=settings,
        budget=budget,
        state=CompressionState(),
        client_factory=lambda: None,
    )
    after = list(result.messages)
    text = _text_of(after)
    verbatim = _text_of(
        [m for m in after if not (m.get(SUMMARY_MARKER_KEY) or m.get(MERGED_MARKER_KEY))]
    )
    kept = [f.needle in text for f in facts]
    summary_only = sum(
        1 for f, k in zip(facts, kept, strict=True) if k and f.needle not in verbatim
    )
    critical = [k for f, k in zip(facts, kept, strict=True) if f.critical]
    return (
        ConversationResult(
            sample_id=sample_id,
            messages_before=len(planted),
            messages_after=len(after),
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
            summary_tokens=result.summary_tokens,
            facts=len(facts),
            facts_kept=sum(kept),
            critical=len(critical),
            critical_kept=sum(critical),
            in_summary_only=summary_only,
            lost=[f.needle for f, k in zip(facts, kept, strict=True) if not k],
        ),
        facts,
        kept,
    )


def run_bench(
    path: Path,
    *,
    seed: int = 7,
    rounds: int = 1,
    limit: int | None = None,
    progress: Callable[[], None] | None = None,
) -> BenchResult:
    """Run every conversation of ``path`` (or the first ``limit``)."""
    conversations = load_conversations(path)[: limit or None]
    results: list[ConversationResult] = []
    by_kind: dict[str, list[int]] = {}
    by_language: dict[str, list[int]] = {}
    for index, (sample_id, messages) in enumerate(conversations):
        conv, facts, kept = run_conversation(
            sample_id, messages, seed=seed * 1000 + index, rounds=rounds
        )
        results.append(conv)
        for fact, ok in zip(facts, kept, strict=True):
            for table, key in ((by_kind, fact.kind), (by_language, fact.language)):
                row = table.setdefault(key, [0, 0])
                row[0] += int(ok)
                row[1] += 1
        if progress is not None:
            progress()
    return BenchResult(results, by_kind, by_language)


__all__ = [
    "CRITICAL_KINDS",
    "BenchResult",
    "ConversationResult",
    "PlantedFact",
    "load_conversations",
    "plant",
    "run_bench",
    "run_conversation",
]
