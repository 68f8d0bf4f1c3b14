"""The reference agent loop: one :class:`Agent` drives one conversation through the Session API.

Per user turn::

    block = session.before_turn(text)             # on_turn_start (cancels a review), recall
    api user message = text + "\\n\\n" + block       # the API copy only; history keeps `text`
    repeat ≤ agent.max_iterations:                # the tool loop
        stream the model (MemoryContextScrubber hides an echoed <memory-context> span)
        no tool calls → final reply; else session.call_tool(...) for each call
    history += this turn's messages               # never containing the recall block
    session.after_turn(text, reply, turn messages, completed, tool_iterations, usage)
    session.maybe_compress([system, *history], prompt_tokens=<API-reported>)

The system prompt (:mod:`.prompt`) is assembled once per session and sent byte-identical
every call. A :class:`~hermes_core.layers.review.ReviewRunner` is attached to each session,
so due background reviews run after the reply; their notification lines wait in
:meth:`Agent.drain_notifications`. Session rows and messages in state.db come from the
sessions layer's hooks; the loop never writes them itself.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hermes_core.context import MemoryContextScrubber
from hermes_core.errors import HermesError
from hermes_core.layers.review import ReviewReport, ReviewRunner, attach_review, format_notices
from hermes_core.llm.client import LLMClient, RetryNotice
from hermes_core.llm.errors import LLMError
from hermes_core.types import ChatMessage, ToolSpec

from .prompt import assemble

if TYPE_CHECKING:
    from hermes_core.host import MemoryHost, Session
    from hermes_core.llm.tokens import Usage

log = logging.getLogger(__name__)

EventKind = Literal[
    "recall",
    "waiting",
    "retry",
    "text",
    "tool_call",
    "tool_result",
    "usage",
    "compressed",
    "notice",
]
"""``waiting``: a model call started and nothing has arrived yet, or the memory provider's
recall is running (a UI shows a spinner until the next event, with what the provider is
doing: :func:`hermes_core.activity.describe`); ``retry``: that call failed and is retried
(``data``: attempt, max_retries, wait, status)."""


class LLMNotConfiguredError(HermesError):
    """No model endpoint is configured (``llm.base_url`` / ``llm.model``)."""


@dataclass(frozen=True)
class AgentEvent:
    """Something a UI may show. ``text`` deltas arrive already scrubbed."""

    kind: EventKind
    text: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class TurnResult:
    """What one :meth:`Agent.run_turn` did."""

    reply: str
    completed: bool = True
    interrupted: bool = False
    tool_calls: list[str] = field(default_factory=list)
    iterations: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int = 0
    recall_line: str = ""
    compressed: bool = False


def tool_specs(session: Session) -> list[ToolSpec]:
    """The session's routed tool specs."""
    return session.tool_specs()


def preview(value: Any, limit: int = 120) -> str:
    """One line, at most ``limit`` chars; JSON is shown with ``\\uXXXX`` escapes decoded."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            pass
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Agent:
    """One conversation with tools, memory and review. Not thread-safe: one caller thread.

    ``llm`` defaults to the client for the host's ``llm`` settings (None when unconfigured:
    :meth:`run_turn` then raises :class:`LLMNotConfiguredError`). ``on_event`` receives
    :class:`AgentEvent` objects as they happen (streamed text, tool calls, usage...).
    ``review_client_factory`` overrides the background-review model client.
    """

    def __init__(
        self,
        host: MemoryHost,
        llm: LLMClient | None = None,
        *,
        cwd: Path | None = None,
        source: str = "cli",
        user_id: str | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        stream: bool = True,
        review_client_factory: Callable[[], LLMClient | None] | None = None,
    ) -> None:
        self.host = host
        self.settings = host.settings
        self.llm = llm if llm is not None else LLMClient.from_settings(host.settings)
        if self.llm is not None and self.llm.on_retry is None:
            self.llm.on_retry = self._on_retry
        self.cwd = Path(cwd) if cwd is not None else Path(os.getcwd())
        self.source = source
        self.user_id = user_id
        self.on_event = on_event
        self.stream = stream
        self._review_client_factory = review_client_factory
        self.history: list[ChatMessage] = []
        self.system_prompt = ""
        self.review: ReviewRunner | None = None
        self._ended_notices: list[str] = []
        self.session = self._open(parent_id=None)

    # -- sessions

    @property
    def model(self) -> str | None:
        return self.llm.model if self.llm is not None else self.settings.llm.model

    def _open(self, parent_id: str | None) -> Session:
        session = self.host.session(
            source=self.source, user_id=self.user_id, parent_id=parent_id, model=self.model
        )
        names = {spec.name for spec in self._offered(session)}
        self.system_prompt = assemble(
            home=self.host.home,
            cwd=self.cwd,
            layer_blocks=session.system_prompt(),
            tool_names=names,
            session_id=session.id,
            started_at=session.info.started_at,
            model=self.model,
            context_cap=self.settings.agent.context_file_char_cap,
        )
        self.history = []
        self.review = attach_review(
            session,
            system_prompt=self.system_prompt,
            conversation=lambda: list(self.history),
            client_factory=self._review_client_factory,
        )
        return session

    def _offered(self, session: Session) -> list[ToolSpec]:
        disabled = set(self.settings.agent.disabled_toolsets)
        return [spec for spec in tool_specs(session) if spec.toolset not in disabled]

    def messages(self) -> list[ChatMessage]:
        """What the next model call starts with: the frozen system prompt and the history."""
        return [{"role": "system", "content": self.system_prompt}, *self.history]

    def new_session(self, *, reason: str = "new_session", keep_lineage: bool = True) -> Session:
        """End this session (``on_session_end`` with ``reason``) and open a fresh one, linked
        to it by ``parent_id`` when ``keep_lineage``."""
        old = self.session
        old.close(reason=reason)  # flushes memory first (bounded)
        self._ended_notices.extend(old.drain_flush_notices())
        self.session = self._open(parent_id=old.id if keep_lineage else None)
        return self.session

    def close(self, reason: str = "exit") -> None:
        """End the session (after a bounded memory flush whose lines stay available to
        :meth:`drain_notifications`). Idempotent."""
        self.session.close(reason=reason)
        if self.llm is not None:
            self.llm.close()

    # -- one turn

    def _emit(self, kind: EventKind, text: str = "", **data: Any) -> None:
        if self.on_event is not None:
            self.on_event(AgentEvent(kind, text, data))

    def _on_retry(self, notice: RetryNotice) -> None:
        self._emit(
            "retry",
            f"{notice.reason}; retry {notice.attempt}/{notice.max_retries} in {notice.wait:.1f}s",
            attempt=notice.attempt,
            max_retries=notice.max_retries,
            wait=notice.wait,
            status=notice.status,
        )

    def run_turn(self, text: str) -> TurnResult:
        """Run one user turn to its final reply (see the module docstring).

        Raises :class:`LLMNotConfiguredError` without a model and
        :class:`~hermes_core.llm.errors.LLMError` when a model call fails: a turn that already
        ran tools is recorded as not completed first, otherwise nothing is recorded. Ctrl-C
        during the turn records it as interrupted and returns.
        """
        if self.llm is None:
            raise LLMNotConfiguredError(
                "no model endpoint is configured — set llm.base_url and llm.model (config.yaml "
                "or HERMES_LLM__BASE_URL / HERMES_LLM__MODEL), or pass --base-url and --model"
            )
        session = self.session
        if self.host.provider is not None:  # a slow recall is shown, not a silent pause
            self._emit("waiting", "recalling memories")
        block = session.before_turn(text)
        recall = session.recall_line()
        if recall:
            self._emit("recall", recall)
        user_message: ChatMessage = {"role": "user", "content": text}
        api_user: ChatMessage = (
            {"role": "user", "content": f"{text}\n\n{block}"} if block else user_message
        )
        turn: list[ChatMessage] = [user_message]
        result = TurnResult(reply="", completed=False, recall_line=recall)
        offered = self._offered(session)
        offered_names = {spec.name for spec in offered}
        schemas = [spec.schema() for spec in offered]
        cap = self.settings.agent.max_iterations
        try:
            for iteration in range(cap + 1):
                tools = schemas if iteration < cap else None
                content, calls, usage = self._call_model(
                    [*self.messages(), api_user, *turn[1:]], tools
                )
                if usage is not None:
                    result.prompt_tokens = usage.prompt_tokens
                    result.completion_tokens += usage.completion_tokens
                if not calls:
                    result.reply = content
                    result.completed = True
                    turn.append({"role": "assistant", "content": content})
                    break
                if tools is None:
                    result.reply = (
                        f"(stopped: the model kept calling tools after {cap} iterations — "
                        "raise agent.max_iterations to allow more)"
                    )
                    turn.append({"role": "assistant", "content": result.reply})
                    break
                turn.append({"role": "assistant", "content": content or None, "tool_calls": calls})
                result.iterations += 1
                for call in calls:
                    turn.append(self._run_tool(call, offered_names, result))
        except KeyboardInterrupt:
            result.interrupted = True
            result.completed = False
            turn = _drop_dangling_calls(turn)
        except LLMError:
            if len(turn) > 1:  # tools already ran: keep what happened, marked not completed
                self._finish(text, _drop_dangling_calls(turn), result)
            raise
        self._finish(text, turn, result)
        return result

    def _finish(self, text: str, turn: list[ChatMessage], result: TurnResult) -> None:
        """Record the turn (history, ``after_turn``), report usage, compress if needed."""
        session = self.session
        self.history.extend(turn)
        session.after_turn(
            text,
            result.reply,
            turn,
            completed=result.completed,
            tool_iterations=result.iterations,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens or None,
        )
        if result.prompt_tokens is not None:
            self._emit(
                "usage",
                f"{result.prompt_tokens:,} prompt + {result.completion_tokens:,} completion tokens",
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
            )
        tokens = None
        if result.prompt_tokens is not None:
            tokens = result.prompt_tokens + result.completion_tokens
        result.compressed = self.compress(prompt_tokens=tokens)

    def _run_tool(
        self, call: Mapping[str, Any], offered: set[str], result: TurnResult
    ) -> ChatMessage:
        function = call.get("function") or {}
        name = str(function.get("name") or "")
        raw_args = function.get("arguments") or "{}"
        result.tool_calls.append(name)
        self._emit("tool_call", f"{name}({preview(raw_args, 100)})", name=name, arguments=raw_args)
        if name in offered:
            output = self.session.call_tool(name, raw_args)
        else:
            output = json.dumps(
                {"success": False, "error": f"Tool '{name}' is not available."}, ensure_ascii=False
            )
        ok = _succeeded(output)
        self._emit("tool_result", preview(output), name=name, ok=ok)
        return {"role": "tool", "tool_call_id": str(call.get("id") or ""), "content": output}

    def _call_model(
        self, messages: Sequence[ChatMessage], tools: list[dict[str, Any]] | None
    ) -> tuple[str, list[dict[str, Any]], Usage | None]:
        """One model call; streamed text goes out through the scrubber as ``text`` events."""
        assert self.llm is not None
        scrubber = MemoryContextScrubber()
        shown: list[str] = []
        self._emit("waiting", f"waiting for {self.llm.model}")
        if not self.stream:
            answer = self.llm.chat(messages, tools=tools)
            visible = scrubber.feed(answer.content or "") + scrubber.finish()
            if visible:
                self._emit("text", visible)
            return visible, [dict(c) for c in answer.tool_calls], answer.usage
        calls: list[dict[str, Any]] = []
        usage: Usage | None = None
        for chunk in self.llm.stream_chat(messages, tools=tools):
            if chunk.content:
                piece = scrubber.feed(chunk.content)
                if piece:
                    shown.append(piece)
                    self._emit("text", piece)
            if chunk.done:
                calls = [dict(c) for c in chunk.tool_calls]
                usage = chunk.usage
        rest = scrubber.finish()
        if rest:
            shown.append(rest)
            self._emit("text", rest)
        return "".join(shown), calls, usage

    # -- compression, review

    def compress(
        self, *, prompt_tokens: int | None = None, force: bool = False, focus: str | None = None
    ) -> bool:
        """Compress the history when over the threshold (or ``force``). True when it
        changed; the frozen system prompt is kept as it is."""
        before = self.session.compression.count
        full = self.messages()
        out = self.session.maybe_compress(
            full,
            prompt_tokens=prompt_tokens,
            context_length=self.settings.llm.context_length,
            force=force,
            focus=focus,
        )
        if self.session.compression.count == before:
            return False
        if out and out[0].get("role") == "system":
            out = out[1:]
        self.history = [dict(m) for m in out]
        stats = self.session.compression
        self._emit(
            "compressed",
            f"context compressed ({stats.tokens_before:,} → {stats.tokens_after:,} tokens)",
            count=stats.count,
        )
        return True

    def refine(self) -> ReviewReport | None:
        """Run an attended review now (``/refine``); None when the review layer is off.

        Its writes are reported through the returned report (:meth:`refine_lines`), not
        queued again for :meth:`drain_notifications`; notices of earlier background reviews
        stay queued."""
        if self.review is None:
            return None
        self.review.cancel()
        earlier = self.review.drain_notifications()
        try:
            return self.review.run_attended("combined")
        finally:
            self.review.drain_notifications()  # the attended run's own lines: shown by /refine
            for line in earlier:
                self.review.notifications.put(line)

    def drain_notifications(self) -> list[str]:
        """Review notification lines ("💾 Memory updated") queued since the last call, and
        what memory flushes saved before context was lost (compression, /new, /reset,
        exit)."""
        lines, self._ended_notices = self._ended_notices, []
        lines.extend(self.session.drain_flush_notices())
        if self.review is not None:
            lines.extend(self.review.drain_notifications())
        return lines

    def refine_lines(self, report: ReviewReport | None) -> list[str]:
        """Human-readable outcome of :meth:`refine`."""
        if report is None:
            return ["The review layer is disabled (HERMES_DISABLE_PLUGINS)."]
        if report.error:
            return [f"Review failed: {report.error}"]
        lines = format_notices(report.writes, "verbose")
        return lines or [report.final_text.strip() or "Nothing to save."]


def _succeeded(output: str) -> bool:
    try:
        payload = json.loads(output)
    except (json.JSONDecodeError, ValueError):
        return True
    return not (isinstance(payload, Mapping) and payload.get("success") is False)


def _drop_dangling_calls(turn: list[ChatMessage]) -> list[ChatMessage]:
    """Cut an interrupted turn before its last tool round when a call has no result, so the
    history stays valid for the API."""
    for index in range(len(turn) - 1, 0, -1):
        message = turn[index]
        if message.get("role") == "assistant" and message.get("tool_calls"):
            ids = {str(c.get("id")) for c in message["tool_calls"]}
            answered = {str(m.get("tool_call_id")) for m in turn[index + 1 :]}
            return turn if ids <= answered else turn[:index]
    return turn


__all__ = [
    "Agent",
    "AgentEvent",
    "LLMNotConfiguredError",
    "TurnResult",
    "preview",
    "tool_specs",
]
