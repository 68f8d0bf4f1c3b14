"""One compaction: prune → boundaries → summarise (LLM or fallback) → assemble → repair.

:func:`compress_messages` is pure apart from the model call: it takes the transcript, the
settings and the per-session :class:`CompressionState`, and returns a
:class:`~hermes_core.types.CompressionResult`. The caller (the plugin) owns the state and the
metrics. The input list and its dicts are never mutated.

Failure policy:

* no summary model configured → deterministic fallback sheet (``fallback_used``);
* auth (401/403) or quota errors → the transcript is kept (``aborted``) with a message naming
  the setting to fix — retrying cannot help and a silent drop would lose turns;
* any other model failure (unreachable, 5xx after retries, malformed or empty output) →
  fallback sheet, unless ``compression.abort_on_summary_failure`` keeps the transcript;
* after such a failure the summary model *cools down* (60 s, then 300 s, then 900 s for
  repeated failures; reset by a success): automatic compactions in that window go straight to
  the fallback instead of waiting on a dead endpoint's retries; manual ones still try it;
* anti-thrash: a compaction saving < 10 % (or leaving the transcript over the threshold) is
  *ineffective*; after two in a row automatic compaction stops for the session with a
  warning (manual compaction still works and resets the streak when effective).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.layers.compression.boundaries import find_boundaries, sanitize_tool_pairs
from hermes_core.layers.compression.fallback import build_fallback_summary
from hermes_core.layers.compression.messages import (
    MERGE_CLOSE,
    MERGE_OPEN,
    SUMMARY_END_MARKER,
    SUMMARY_MARKER_KEY,
    SUMMARY_PREFIX,
    content_text,
    copy_messages,
    is_summary,
    role,
)
from hermes_core.layers.compression.prune import prune, summarize_old_tool_outputs
from hermes_core.layers.compression.summarizer import (
    detect_language,
    strip_summary_framing,
    summarize,
    summary_budget,
)
from hermes_core.llm.client import LLMClient
from hermes_core.llm.errors import LLMAuthError, LLMError, LLMQuotaError
from hermes_core.llm.tokens import estimate_messages_tokens, estimate_tokens
from hermes_core.settings.models import CompressionSettings
from hermes_core.types import ChatMessage, CompressionBudget, CompressionResult

log = logging.getLogger(__name__)

COOLDOWNS = (60.0, 300.0, 900.0)
"""Seconds the summary model is skipped after the 1st, 2nd, 3rd+ consecutive failure."""
INEFFECTIVE_SAVING = 0.10
INEFFECTIVE_LIMIT = 2
MERGED_MARKER_KEY = "_compressed_summary_merged"
ANTI_THRASH_WARNING = (
    "automatic compaction stopped for this session: the last {n} compactions saved less than "
    "10% each (or left the context over the threshold). Start a new session with /new, or "
    "compact manually around a topic with /compress <topic>."
)


@dataclass
class CompressionState:
    """Per-session memory of the compressor (keyed by session id in the plugin)."""

    previous_summary: str | None = None
    ineffective_streak: int = 0
    auto_disabled: bool = False
    compressions: int = 0
    summarizations: int = 0
    llm_failures: int = 0
    cooldown_until: float = 0.0


ClientFactory = Callable[[], LLMClient | None]


def tail_budget_tokens(settings: CompressionSettings, threshold_tokens: int) -> int:
    """Tail token budget: ``threshold × target_ratio`` (``target_ratio`` is 0.10–0.80)."""
    return max(1, int(threshold_tokens * settings.target_ratio))


def _previous_summary(state: CompressionState, messages: Sequence[Mapping[str, Any]]) -> str | None:
    if state.previous_summary:
        return state.previous_summary
    for message in reversed(messages):  # e.g. a resumed session: recover it from the text
        if is_summary(message):
            return strip_summary_framing(content_text(message.get("content"))) or None
    return None


OVERSIZE_FACTOR = 2.0
"""A model summary longer than this × its budget is cut (models ignore the target)."""
TRUNCATION_NOTE = "[summary truncated to its token budget]"


def cap_summary(body: str, limit_tokens: int) -> str:
    """``body`` cut at a line boundary to about ``limit_tokens`` estimated tokens (unchanged
    when it fits), with :data:`TRUNCATION_NOTE` appended when cut."""
    if estimate_tokens(body) <= limit_tokens:
        return body
    kept: list[str] = []
    used = estimate_tokens(TRUNCATION_NOTE) + 1
    for line in body.splitlines():
        cost = estimate_tokens(line) + 1
        if used + cost > limit_tokens:
            room = limit_tokens - used - 1
            piece = line[: max(0, len(line) * room // cost)]
            while piece and estimate_tokens(piece) > room:
                piece = piece[: len(piece) * 9 // 10]
            if piece:
                kept.append(piece + "…")
            break
        kept.append(line)
        used += cost
    return "\n".join([*kept, TRUNCATION_NOTE])


def summary_message_text(body: str) -> str:
    """The full text of a summary message: REFERENCE-ONLY prefix, body, END marker. A body
    that already carries framing (any prefix, repeated or legacy) is unwrapped first, so the
    prefix is never doubled."""
    return f"{SUMMARY_PREFIX}\n\n{strip_summary_framing(body)}\n\n{SUMMARY_END_MARKER}"


def assemble(
    head: Sequence[ChatMessage], summary_text: str, tail: Sequence[ChatMessage]
) -> list[ChatMessage]:
    """head + summary + tail with the summary's role chosen so no two consecutive messages
    share a role.

    When both roles collide the summary is merged into the first tail message: into a *user*
    message it goes first, so the user's own words follow the END marker ("respond to the
    message below"); into an assistant message the message's own content comes first inside
    :data:`MERGE_OPEN`/:data:`MERGE_CLOSE`, then the summary. The merged message carries
    :data:`MERGED_MARKER_KEY`."""
    head, tail = list(head), list(tail)
    last = role(head[-1]) if head else ""
    first = role(tail[0]) if tail else ""
    choice = "user" if last in {"assistant", "tool"} else "assistant"
    if choice == first:
        choice = "assistant" if choice == "user" else "user"
    if choice not in {last, first}:
        summary = {"role": choice, "content": summary_text, SUMMARY_MARKER_KEY: True}
        return [*head, summary, *tail]
    merged = dict(tail[0])
    own = merged.get("content")
    if role(merged) == "user":
        if isinstance(own, list):
            merged["content"] = [{"type": "text", "text": summary_text}, *own]
        else:
            merged["content"] = f"{summary_text}\n\n{own or ''}".rstrip()
    elif isinstance(own, list):
        merged["content"] = [
            {"type": "text", "text": MERGE_OPEN},
            *own,
            {"type": "text", "text": f"{MERGE_CLOSE}\n\n{summary_text}"},
        ]
    else:
        merged["content"] = f"{MERGE_OPEN}\n{own or ''}\n{MERGE_CLOSE}\n\n{summary_text}"
    merged[MERGED_MARKER_KEY] = True
    return [*head, merged, *tail[1:]]


def _aborted(messages: Sequence[Mapping[str, Any]], tokens: int, error: str) -> CompressionResult:
    return CompressionResult(
        messages=tuple(copy_messages(messages)),
        tokens_before=tokens,
        tokens_after=tokens,
        aborted=True,
        error=error,
    )


@dataclass(frozen=True, slots=True)
class Cut:
    """Stage 1 of a compaction: where the transcript is cut and what the sheet is made of.

    ``head`` and ``tail`` are pruned copies kept verbatim; ``middle`` is the original span
    being replaced (the fallback extracts from it), ``middle_pruned`` what the model reads.
    """

    head: list[ChatMessage]
    middle: list[ChatMessage]
    middle_pruned: list[ChatMessage]
    tail: list[ChatMessage]
    previous_summary: str | None
    language: str
    sheet_budget: int


@dataclass(frozen=True, slots=True)
class ModelOutcome:
    """Stage 2: the model's summary body (``None`` → use the fallback), the error to
    report, or ``abort`` (the transcript must be kept, with this message)."""

    body: str | None = None
    error: str | None = None
    abort: str | None = None


NOTHING_TO_COMPRESS = (
    "nothing to compress: the protected head and tail cover the whole transcript "
    "(lower compression.protect_last_n or compression.target_ratio)"
)


def cut_transcript(
    messages: Sequence[Mapping[str, Any]],
    *,
    settings: CompressionSettings,
    budget: CompressionBudget,
    state: CompressionState,
) -> Cut | None:
    """Stage 1: boundaries, pre-prune, tail demotion, previous sheet, language and budget.

    ``None`` when the protected head and tail cover everything."""
    tail_budget = tail_budget_tokens(settings, budget.threshold_tokens)
    bounds = find_boundaries(
        messages,
        protect_first_n=settings.protect_first_n,
        protect_last_n=settings.protect_last_n,
        tail_budget_tokens=tail_budget,
        min_tail_user_messages=settings.min_tail_user_messages,
    )
    if bounds.empty:
        return None
    pruned = prune(messages, bounds.tail_start)
    tail = pruned[bounds.tail_start :]
    if estimate_messages_tokens(tail) > 1.5 * tail_budget:
        # demote bulky tool outputs inside the tail, always keeping the last 3 verbatim
        tail = summarize_old_tool_outputs(tail, len(tail), keep_last=3)
    middle = copy_messages(messages[bounds.head_end : bounds.tail_start])
    return Cut(
        head=pruned[: bounds.head_end],
        middle=middle,
        middle_pruned=pruned[bounds.head_end : bounds.tail_start],
        tail=tail,
        previous_summary=_previous_summary(state, messages[: bounds.tail_start]),
        language=detect_language(messages),
        sheet_budget=summary_budget(estimate_messages_tokens(middle), budget.context_length),
    )


def model_summary(
    cut: Cut,
    *,
    settings: CompressionSettings,
    budget: CompressionBudget,
    state: CompressionState,
    client_factory: ClientFactory,
    fallback_client_factory: ClientFactory | None,
    notes: str,
    now: Callable[[], float],
) -> ModelOutcome:
    """Stage 2: ask the summary model (respecting its cooldown), retry once on the main
    model, cap an oversized answer, and keep the cooldown bookkeeping of ``state``."""
    client = client_factory()
    if client is None:
        return ModelOutcome()
    if now() < state.cooldown_until and not budget.manual:
        client.close()
        wait = int(state.cooldown_until - now())
        skipped = (
            f"summary model skipped for {wait}s after {state.llm_failures} failed call(s); "
            "used the extractive handoff sheet"
        )
        if settings.abort_on_summary_failure:
            return ModelOutcome(abort=f"compaction skipped, transcript kept: {skipped}")
        return ModelOutcome(error=skipped)

    def ask(with_client: LLMClient) -> str:
        return _summarize_with(
            with_client,
            cut.middle_pruned,
            budget,
            cut.sheet_budget,
            cut.language,
            cut.previous_summary,
            notes,
            settings,
        )

    body: str | None = None
    error: str | None = None
    try:
        body = ask(client)
    except (LLMAuthError, LLMQuotaError) as exc:
        return ModelOutcome(
            abort=f"compaction skipped, transcript kept: the summary model failed ({exc})"
        )
    except LLMError as exc:
        error = f"summary model failed: {exc}"
        retry = fallback_client_factory() if fallback_client_factory else None
        if retry is not None and (retry.base_url, retry.model) != (client.base_url, client.model):
            try:
                body = ask(retry)
                error = None
            except LLMError as exc2:
                error = f"{error}; main model also failed: {exc2}"
            finally:
                retry.close()
        elif retry is not None:
            retry.close()
    finally:
        client.close()
    if body is not None:
        state.llm_failures = 0
        state.cooldown_until = 0.0
        return ModelOutcome(body=cap_summary(body, int(cut.sheet_budget * OVERSIZE_FACTOR)))
    state.llm_failures += 1
    state.cooldown_until = now() + COOLDOWNS[min(state.llm_failures, len(COOLDOWNS)) - 1]
    if settings.abort_on_summary_failure:
        return ModelOutcome(
            abort="compaction skipped, transcript kept (compression.abort_on_summary_failure): "
            f"{error}"
        )
    return ModelOutcome(error=error)


def fallback_sheet(cut: Cut, *, budget: CompressionBudget, notes: str) -> str:
    """Stage 2b: the deterministic extractive sheet of the cut's middle."""
    return build_fallback_summary(
        cut.middle,
        budget_tokens=cut.sheet_budget,
        previous_summary=cut.previous_summary,
        focus=budget.focus,
        notes=notes,
        head=cut.head,
    )


def score_effectiveness(
    state: CompressionState,
    *,
    tokens_before: int,
    tokens_after: int,
    budget: CompressionBudget,
    error: str | None,
) -> str | None:
    """Stage 4: the anti-thrash streak. Returns ``error`` with the stop warning appended
    when this compaction switched automatic compaction off."""
    saved = 1 - tokens_after / tokens_before if tokens_before else 0.0
    if saved >= INEFFECTIVE_SAVING and tokens_after < budget.threshold_tokens:
        state.ineffective_streak = 0
        state.auto_disabled = False
        return error
    state.ineffective_streak += 1
    if state.ineffective_streak >= INEFFECTIVE_LIMIT and not state.auto_disabled:
        state.auto_disabled = True
        warning = ANTI_THRASH_WARNING.format(n=state.ineffective_streak)
        log.warning(warning)
        return f"{error}; {warning}" if error else warning
    return error


def compress_messages(
    messages: Sequence[Mapping[str, Any]],
    *,
    settings: CompressionSettings,
    budget: CompressionBudget,
    state: CompressionState,
    client_factory: ClientFactory,
    notes: str = "",
    fallback_client_factory: ClientFactory | None = None,
    now: Callable[[], float] = time.monotonic,
) -> CompressionResult:
    """Compact ``messages``; see the module docstring for the policy.

    The stages: :func:`cut_transcript` → :func:`model_summary` (or :func:`fallback_sheet`)
    → :func:`assemble` + :func:`sanitize_tool_pairs` → :func:`score_effectiveness`.

    ``client_factory`` returns the summariser client (``None`` → fallback sheet);
    ``fallback_client_factory`` (optional) is tried once when the first client fails with a
    non-auth error (spec: "retry once on the main model"). ``now`` is the clock of the
    failure cooldown (injectable for tests).
    """
    tokens_before = estimate_messages_tokens(messages)
    if state.auto_disabled and not budget.manual:
        return _aborted(
            messages, tokens_before, ANTI_THRASH_WARNING.format(n=state.ineffective_streak)
        )
    cut = cut_transcript(messages, settings=settings, budget=budget, state=state)
    if cut is None:
        return _aborted(messages, tokens_before, NOTHING_TO_COMPRESS)

    outcome = model_summary(
        cut,
        settings=settings,
        budget=budget,
        state=state,
        client_factory=client_factory,
        fallback_client_factory=fallback_client_factory,
        notes=notes,
        now=now,
    )
    if outcome.abort is not None:
        return _aborted(messages, tokens_before, outcome.abort)
    body = outcome.body
    fallback_used = body is None
    if body is None:
        body = fallback_sheet(cut, budget=budget, notes=notes)
        if outcome.error:
            log.warning("compression fell back to the extractive summary: %s", outcome.error)

    out = sanitize_tool_pairs(assemble(cut.head, summary_message_text(body), cut.tail))
    tokens_after = estimate_messages_tokens(out)
    error = score_effectiveness(
        state,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        budget=budget,
        error=outcome.error,
    )
    state.previous_summary = body
    state.compressions += 1
    state.summarizations += 0 if fallback_used else 1

    return CompressionResult(
        messages=tuple(out),
        summary=body,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        summary_tokens=estimate_tokens(body),
        fallback_used=fallback_used,
        aborted=False,
        error=error,
    )


def _summarize_with(
    client: LLMClient,
    middle: Sequence[Mapping[str, Any]],
    budget: CompressionBudget,
    sheet_budget: int,
    language: str,
    previous: str | None,
    notes: str,
    settings: CompressionSettings,
) -> str:
    return summarize(
        client,
        middle,
        context_length=budget.context_length,
        language=language,
        previous_summary=previous,
        focus=budget.focus,
        notes=notes,
        attempts=settings.max_attempts,
        budget=sheet_budget,
    )


__all__ = [
    "ANTI_THRASH_WARNING",
    "COOLDOWNS",
    "INEFFECTIVE_LIMIT",
    "INEFFECTIVE_SAVING",
    "MERGED_MARKER_KEY",
    "NOTHING_TO_COMPRESS",
    "ClientFactory",
    "CompressionState",
    "Cut",
    "ModelOutcome",
    "assemble",
    "cap_summary",
    "compress_messages",
    "cut_transcript",
    "fallback_sheet",
    "model_summary",
    "score_effectiveness",
    "summary_message_text",
    "tail_budget_tokens",
]
