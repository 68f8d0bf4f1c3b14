"""The background review: a forked, tool-restricted agent run after a reply.

A :class:`ReviewRunner` belongs to one live session. It is *attached* by whoever owns the
session object (the reference agent loop, or any framework through :func:`attach_review`),
because hooks only receive :class:`~hermes_core.types.SessionInfo` while a review has to call
tools on the live :class:`~hermes_core.host.Session`. The review layer keeps the runners in a
registry keyed by session id and starts them from ``on_turn_end``.

What one review does:

* messages = the parent's frozen system prompt, the conversation snapshot taken when the
  review was started (or a :func:`~.prompts.digest` when the review is routed to a different
  model through ``llm.auxiliary.review``), capped at ``review.max_input_tokens``, and one
  user message with the review prompt;
* tools = only ``memory``, the skill tools (``skill_manage``, ``skill_view``, ``skills_list``,
  ``skills_find``) and tools registered ``read_only``; at most ``review.max_iterations`` model
  calls; it never triggers another review (it does not call ``after_turn``);
* every write goes through ``target.call_tool(..., origin="background_review")`` (or
  ``attended_review`` for ``/refine``), so the memory layer scans, enforces limits and stages
  unattended replace/remove as proposals. A ``skill_manage`` that changes an existing skill is
  refused unless this review ran ``skill_view`` on that skill first (read-before-write).

Flush: :meth:`ReviewRunner.flush` is the one-shot save before turns leave the context
(compression, ``/new``, ``/reset``, exit): the same machinery with only ``memory`` and
``skill_manage``, at most two model calls, bounded by a timeout in the caller's thread.

Cancellation: :meth:`ReviewRunner.cancel` sets a flag checked before every model call and
before every tool call (under a lock), then waits up to ``wait`` seconds for an in-flight tool
call to finish. After it returns True the review will not write anything; a model call still
in flight is abandoned (its thread is a daemon and its answer is discarded).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from hermes_core.llm.errors import LLMError
from hermes_core.llm.tokens import estimate_messages_tokens
from hermes_core.tool_results import tool_error
from hermes_core.types import ChatMessage, WriteOrigin

from .nudges import ReviewKind, tool_succeeded
from .prompts import conversation, digest, review_prompt

if TYPE_CHECKING:
    from hermes_core.llm.client import LLMClient
    from hermes_core.settings.models import HermesSettings

log = logging.getLogger(__name__)

MEMORY_TOOLS = frozenset({"memory"})
SKILL_TOOLS = frozenset({"skill_manage", "skill_view", "skills_list", "skills_find"})
SKILL_CHANGES_NEEDING_VIEW = frozenset({"edit", "patch", "delete", "write_file", "remove_file"})
CANCEL_WAIT_SECONDS = 2.0
FLUSH_TOOLS = frozenset({"memory", "skill_manage"})
"""All a flush may call: it saves, it does not look around."""
FLUSH_ITERATIONS = 2
"""Model calls of a flush: one that saves, one to finish (spec §7.4: one extra call)."""
FLUSH_TOOL_WAIT = 1.0
"""Seconds a timed-out flush waits for a memory write already under way."""

NotificationLevel = Literal["off", "on", "verbose"]


class ReviewTarget(Protocol):
    """What a review needs from the live session (:class:`hermes_core.host.Session` fits)."""

    @property
    def id(self) -> str: ...

    def system_prompt(self) -> str: ...

    def tool_schemas(self) -> list[dict[str, Any]]: ...

    def call_tool(
        self, name: str, args: Mapping[str, Any] | str, *, origin: WriteOrigin = "foreground"
    ) -> str: ...


@dataclass(frozen=True)
class ReviewWrite:
    """One successful write a review made (``staged`` = waiting for approval)."""

    kind: Literal["memory", "skill"]
    action: str
    text: str
    staged: bool = False
    pending_id: str | None = None


@dataclass
class ReviewReport:
    """Outcome of one review run."""

    kind: ReviewKind
    origin: WriteOrigin
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    iterations: int = 0
    writes: list[ReviewWrite] = field(default_factory=list)
    cancelled: bool = False
    error: str | None = None
    final_text: str = ""
    digest_used: bool = False


@dataclass
class _Job:
    kind: ReviewKind
    origin: WriteOrigin
    messages: list[ChatMessage]
    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    viewed_skills: set[str] = field(default_factory=set)
    report: ReviewReport | None = None


def _preview(text: str, limit: int = 80) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_notices(writes: Sequence[ReviewWrite], level: NotificationLevel) -> list[str]:
    """The UI lines for a review's writes: ``off`` nothing; ``on`` one line per kind
    ("💾 Memory updated", "💾 Skill updated", or "… proposed" when staged); ``verbose`` one line
    per write with a preview ("💾 Memory ➕ User prefers tabs")."""
    if level == "off" or not writes:
        return []
    if level == "verbose":
        glyph = {"add": "➕", "create": "➕", "remove": "➖", "delete": "➖"}
        lines = []
        for write in writes:
            label = "Memory" if write.kind == "memory" else "Skill"
            mark = glyph.get(write.action, "✏️")
            line = f"💾 {label} {mark} {_preview(write.text)}"
            if write.staged:
                line += f" (proposed, id {write.pending_id}; /memory pending)"
            lines.append(line)
        return lines
    lines = []
    for kind, label in (("memory", "Memory"), ("skill", "Skill")):
        of_kind = [w for w in writes if w.kind == kind]
        if any(not w.staged for w in of_kind):
            lines.append(f"💾 {label} updated")
        if any(w.staged for w in of_kind):
            hint = " — review with /memory pending" if kind == "memory" else ""
            lines.append(f"💾 {label} change proposed{hint}")
    return lines


def routed_to_other_model(settings: HermesSettings) -> bool:
    """True when ``llm.auxiliary.review`` names a different endpoint or model than ``llm``."""
    main = settings.llm
    aux = main.auxiliary.review
    other_url = bool(aux.base_url) and (aux.base_url or "").rstrip("/") != (
        main.base_url or ""
    ).rstrip("/")
    other_model = bool(aux.model) and aux.model != main.model
    return other_url or other_model


def _default_client(settings: HermesSettings) -> LLMClient | None:
    from hermes_core.llm.client import LLMClient

    return LLMClient.from_settings(settings, route="review")


def _writes_from(name: str, args: Mapping[str, Any], result: str) -> list[ReviewWrite]:
    """The successful writes one tool result reports."""
    if name not in ("memory", "skill_manage") or not tool_succeeded(result):
        return []
    payload = json.loads(result)
    staged = bool(payload.get("staged"))
    pending_id = payload.get("pending_id")
    if name == "skill_manage":
        return [
            ReviewWrite(
                "skill",
                str(args.get("action") or payload.get("action") or "edit"),
                str(args.get("name") or payload.get("name") or ""),
                staged,
                str(pending_id) if pending_id else None,
            )
        ]
    ops = args.get("operations")
    items = ops if isinstance(ops, list) else [args]
    out = []
    for op in items:
        if not isinstance(op, Mapping):
            continue
        action = str(op.get("action") or "")
        text = op.get("content") or op.get("new_text") or op.get("old_text") or ""
        out.append(
            ReviewWrite(
                "memory", action, str(text), staged, str(pending_id) if pending_id else None
            )
        )
    return out


class ReviewRunner:
    """Runs reviews for one session. Build it with :func:`attach_review` (or directly and
    register it with :meth:`ReviewLayer.attach`).

    ``system_prompt`` is the parent's full frozen prompt (default: the session's);
    ``conversation`` returns the messages to review (default: ``target.transcript``);
    ``read_only_tools`` are extra tool names the review may call; ``client_factory`` builds
    a *new* review model client per review, closed when the review ends (default:
    ``llm.auxiliary.review`` → ``llm``); ``notify`` receives
    each notification line (they are also queued for :meth:`drain_notifications`).
    """

    def __init__(
        self,
        target: ReviewTarget,
        settings: HermesSettings,
        *,
        system_prompt: str | None = None,
        conversation: Callable[[], Sequence[ChatMessage]] | None = None,
        read_only_tools: frozenset[str] = frozenset(),
        client_factory: Callable[[], LLMClient | None] | None = None,
        routed: bool | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.target = target
        self.settings = settings
        self._system_prompt = system_prompt
        self._conversation = conversation
        self.read_only_tools = read_only_tools
        self._client_factory = client_factory or (lambda: _default_client(settings))
        self.routed = routed_to_other_model(settings) if routed is None else routed
        self._notify = notify
        self.notifications: queue.Queue[str] = queue.Queue()
        self.reports: list[ReviewReport] = []
        self._tool_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._job: _Job | None = None

    # -- inputs

    @property
    def notification_level(self) -> NotificationLevel:
        return self.settings.review.notifications

    def system_prompt(self) -> str:
        return (
            self._system_prompt if self._system_prompt is not None else self.target.system_prompt()
        )

    def snapshot(self) -> list[ChatMessage]:
        """A copy of the conversation to review, taken now."""
        if self._conversation is not None:
            source = self._conversation()
        else:
            source = getattr(self.target, "transcript", [])
        return [dict(m) for m in source]

    def allowed_tools(self, kind: ReviewKind) -> frozenset[str]:
        """Tool names offered to a review of ``kind`` (intersected with the routed tools).
        A flush gets only :data:`FLUSH_TOOLS`."""
        if kind == "flush":
            return FLUSH_TOOLS
        wanted = set(self.read_only_tools)
        if kind in ("memory", "combined"):
            wanted |= MEMORY_TOOLS
        if kind in ("skills", "combined"):
            wanted |= SKILL_TOOLS
        return frozenset(wanted)

    def _schemas(self, allowed: frozenset[str]) -> list[dict[str, Any]]:
        return [
            schema
            for schema in self.target.tool_schemas()
            if schema.get("function", {}).get("name") in allowed
        ]

    def build_messages(
        self, kind: ReviewKind, snapshot: Sequence[ChatMessage]
    ) -> list[ChatMessage]:
        """System prompt + (digest of) the conversation, capped in tokens, + review prompt."""
        replay = digest(snapshot) if self.routed else conversation(snapshot)
        system: ChatMessage = {"role": "system", "content": self.system_prompt()}
        prompt: ChatMessage = {"role": "user", "content": review_prompt(kind)}
        cap = self.settings.review.max_input_tokens
        while len(replay) > 1 and estimate_messages_tokens([system, *replay, prompt]) > cap:
            replay = replay[1:]
            while len(replay) > 1 and replay[0].get("role") == "tool":
                replay = replay[1:]
        return [system, *replay, prompt]

    # -- running

    def start(self, kind: ReviewKind) -> threading.Thread:
        """Start an unattended review on a daemon thread and return at once."""
        job = _Job(kind, "background_review", self.build_messages(kind, self.snapshot()))
        thread = threading.Thread(
            target=self._run_job, args=(job,), name=f"hermes-review-{self.target.id}", daemon=True
        )
        job.thread = thread
        with self._state_lock:
            previous, self._job = self._job, job
        if previous is not None:
            previous.cancel.set()
        thread.start()
        return thread

    def run_attended(self, kind: ReviewKind = "combined") -> ReviewReport:
        """Run a review now, in this thread (``/refine``), with origin ``attended_review``."""
        self.cancel(wait=CANCEL_WAIT_SECONDS)
        job = _Job(kind, "attended_review", self.build_messages(kind, self.snapshot()))
        return self._run_job(job)

    def flush(self, messages: Sequence[ChatMessage], *, timeout: float) -> ReviewReport:
        """Save what ``messages`` (turns about to leave the context) taught, now, within
        ``timeout`` seconds (spec §7.4, bounded).

        An in-flight background review is cancelled first. The flush may call only
        ``memory`` and ``skill_manage``, with origin ``background_review`` (so the same
        approval policy applies), for at most :data:`FLUSH_ITERATIONS` model calls. Past
        ``timeout`` it is cancelled: writes already made stay and are in the report, nothing
        is written afterwards, and the report's ``error`` says it timed out. Never raises;
        its lines are returned in the report, not queued as notifications.
        """
        self.cancel(wait=CANCEL_WAIT_SECONDS)
        job = _Job("flush", "background_review", self.build_messages("flush", messages))
        job.report = ReviewReport(kind="flush", origin=job.origin, digest_used=self.routed)
        thread = threading.Thread(
            target=self._run_job, args=(job,), name=f"hermes-flush-{self.target.id}", daemon=True
        )
        job.thread = thread
        with self._state_lock:
            self._job = job
        started = time.monotonic()
        thread.start()
        if not job.done.wait(max(timeout, 0.0)):
            job.cancel.set()
            if self._tool_lock.acquire(timeout=FLUSH_TOOL_WAIT):
                self._tool_lock.release()
            job.report.error = (
                f"timed out after {time.monotonic() - started:.1f}s "
                "(review.flush_timeout); writes made before that were kept"
            )
        return job.report

    @property
    def busy(self) -> bool:
        """True while an unattended review is running (and not cancelled)."""
        with self._state_lock:
            job = self._job
        return job is not None and not job.done.is_set() and not job.cancel.is_set()

    def cancel(self, wait: float = CANCEL_WAIT_SECONDS) -> bool:
        """Cancel the in-flight review. Returns True once no tool call of it is running
        (waits at most ``wait`` seconds); after that it writes nothing."""
        with self._state_lock:
            job = self._job
        if job is None or job.done.is_set():
            return True
        job.cancel.set()
        acquired = self._tool_lock.acquire(timeout=max(wait, 0.0))
        if acquired:
            self._tool_lock.release()
        return acquired

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until the current unattended review finished (tests, shutdown)."""
        with self._state_lock:
            job = self._job
        return True if job is None else job.done.wait(timeout)

    def drain_notifications(self) -> list[str]:
        """Notification lines queued since the last drain (for UIs that poll)."""
        lines: list[str] = []
        while True:
            try:
                lines.append(self.notifications.get_nowait())
            except queue.Empty:
                return lines

    def _run_job(self, job: _Job) -> ReviewReport:
        report = job.report or ReviewReport(
            kind=job.kind, origin=job.origin, digest_used=self.routed
        )
        job.report = report
        try:
            self._loop(job, report)
        except Exception as exc:  # a review must never take the agent down
            log.exception("background review failed")
            report.error = f"{type(exc).__name__}: {exc}"
        finally:
            report.cancelled = job.cancel.is_set()
            report.finished_at = time.time()
            self.reports.append(report)
            if not report.cancelled and job.kind != "flush":
                for line in format_notices(report.writes, self.notification_level):
                    self.notifications.put(line)
                    if self._notify is not None:
                        try:
                            self._notify(line)
                        except Exception:
                            log.exception("review notification callback failed")
            job.done.set()
        return report

    def _loop(self, job: _Job, report: ReviewReport) -> None:
        allowed = self.allowed_tools(job.kind)
        tools = self._schemas(allowed)
        offered = {schema.get("function", {}).get("name") for schema in tools}
        if not offered & {"memory", "skill_manage"}:
            report.error = (
                f"nothing to write with: no memory or skill_manage tool for a {job.kind} review"
            )
            return
        client = self._client_factory()
        if client is None:
            report.error = "no review model configured (set llm.base_url and llm.model)"
            return
        messages = list(job.messages)
        try:
            cap = self.settings.review.max_iterations
            for _ in range(min(cap, FLUSH_ITERATIONS) if job.kind == "flush" else cap):
                if job.cancel.is_set():
                    return
                try:
                    result = client.chat(messages, tools=tools or None)
                except LLMError as exc:
                    log.warning("background review stopped: %s", exc)
                    report.error = str(exc)
                    return
                report.iterations += 1
                if job.cancel.is_set():
                    return
                if not result.tool_calls:
                    report.final_text = result.content or ""
                    return
                messages.append(result.message())
                for call in result.tool_calls:
                    function = call.get("function", {})
                    name = str(function.get("name", ""))
                    raw_args = function.get("arguments") or "{}"
                    with self._tool_lock:
                        if job.cancel.is_set():
                            return
                        output, args = self._call(job, name, raw_args, allowed)
                    report.writes.extend(_writes_from(name, args, output))
                    messages.append(
                        {"role": "tool", "tool_call_id": call.get("id", ""), "content": output}
                    )
        finally:
            client.close()

    def _call(
        self, job: _Job, name: str, raw_args: str, allowed: frozenset[str]
    ) -> tuple[str, Mapping[str, Any]]:
        try:
            parsed = json.loads(raw_args) if raw_args.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            parsed = None
        args: Mapping[str, Any] = parsed if isinstance(parsed, Mapping) else {}
        if name not in allowed:
            return tool_error(f"Tool '{name}' is not available during a review."), args
        if name == "skill_manage":
            action = str(args.get("action") or "")
            skill = str(args.get("name") or "")
            if action in SKILL_CHANGES_NEEDING_VIEW and skill not in job.viewed_skills:
                return (
                    tool_error(
                        f"Read the skill first: call skill_view(name='{skill}') in this review "
                        "before changing it."
                    ),
                    args,
                )
        output = self.target.call_tool(name, raw_args, origin=job.origin)
        if name == "skill_view" and tool_succeeded(output):
            job.viewed_skills.add(str(args.get("name") or ""))
        return output, args


__all__ = [
    "CANCEL_WAIT_SECONDS",
    "FLUSH_ITERATIONS",
    "FLUSH_TOOLS",
    "MEMORY_TOOLS",
    "SKILL_TOOLS",
    "NotificationLevel",
    "ReviewReport",
    "ReviewRunner",
    "ReviewTarget",
    "ReviewWrite",
    "format_notices",
    "routed_to_other_model",
]
