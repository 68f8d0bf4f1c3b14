"""The review layer as a plugin (hook implementations only; logic lives in sibling modules).

* ``system_prompt_block`` contributes no text; it records the session's routed tool names
  (the nudge counters only run for tools the model can call).
* ``on_turn_start`` cancels the session's in-flight background review (waits ≤ 2 s for a
  running tool call, then the turn proceeds).
* ``on_turn_end`` advances the nudge counters (:mod:`.nudges`) and, when a review is due, the
  turn completed, ``review.enabled`` is true and a :class:`~.review.ReviewRunner` is attached
  for the session, starts the review on a daemon thread and returns at once.
* ``on_context_loss`` (before compression, ``/new``, ``/reset``, exit, ``Session.close``):
  when ``memory.flush_min_turns`` user turns passed since the session's last review or flush,
  runs one bounded flush through the runner (:meth:`~.review.ReviewRunner.flush`) and returns
  what it saved as UI lines. Without a model nothing is written and the reason is logged
  once per host.
* ``on_session_end`` cancels an in-flight review and forgets the session.

Runners are attached by the code that owns the live Session (see :func:`attach_review`): a
hook only receives ``SessionInfo``, so the layer cannot reach the Session's tools by itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.markers import hookimpl
from hermes_core.types import ChatMessage, HealthCheck, SessionInfo, Turn

from .nudges import NudgeCounters, ReviewDue, update_counters
from .review import CANCEL_WAIT_SECONDS, ReviewRunner, format_notices

_TRIGGER_LABEL = {
    "compression": "compression",
    "new_session": "/new",
    "reset": "/reset",
    "exit": "exit",
    "error": "exit",
}

if TYPE_CHECKING:
    import pluggy

    from hermes_core.llm.client import LLMClient
    from hermes_core.settings.models import HermesSettings

log = logging.getLogger(__name__)


@dataclass
class _SessionState:
    counters: NudgeCounters = field(default_factory=NudgeCounters)
    tool_names: frozenset[str] = frozenset()
    runner: ReviewRunner | None = None
    last_due: ReviewDue = field(default_factory=ReviewDue)
    turns_since_save: int = 0
    """User turns since the last review started or the last flush ran."""


class ReviewLayer:
    """Hook implementations of the review layer. One instance per host."""

    def __init__(self) -> None:
        self._settings: HermesSettings | None = None
        self._home: Path | None = None
        self._sessions: dict[str, _SessionState] = {}
        self._lock = threading.Lock()
        self._flush_skip_logged: set[str] = set()

    # -- the runner registry

    def attach(self, session_id: str, runner: ReviewRunner) -> None:
        """Let reviews of ``session_id`` run through ``runner`` (replaces an earlier one)."""
        with self._lock:
            state = self._sessions.setdefault(session_id, _SessionState())
            state.runner = runner

    def detach(self, session_id: str) -> ReviewRunner | None:
        """Forget the runner of ``session_id`` (its in-flight review is cancelled)."""
        with self._lock:
            state = self._sessions.get(session_id)
            runner = state.runner if state is not None else None
            if state is not None:
                state.runner = None
        if runner is not None:
            runner.cancel(wait=0.0)
        return runner

    def runner(self, session_id: str) -> ReviewRunner | None:
        with self._lock:
            state = self._sessions.get(session_id)
            return state.runner if state else None

    def counters(self, session_id: str) -> NudgeCounters:
        """The session's counters (a live object; for UIs and tests)."""
        return self._state(session_id).counters

    def _state(self, session_id: str) -> _SessionState:
        with self._lock:
            return self._sessions.setdefault(session_id, _SessionState())

    # -- hooks

    @hookimpl
    def configure(self, settings: HermesSettings, home: Path) -> None:
        self._settings = settings
        self._home = home

    @hookimpl
    def system_prompt_block(self, session: SessionInfo, tool_names: frozenset[str]) -> None:
        self._state(session.id).tool_names = frozenset(tool_names)

    @hookimpl
    def on_turn_start(self, session: SessionInfo) -> None:
        runner = self.runner(session.id)
        if runner is not None and not runner.cancel(wait=CANCEL_WAIT_SECONDS):
            log.warning("background review of %s did not stop within 2 s; going on", session.id)

    @hookimpl
    def on_turn_end(self, session: SessionInfo, turn: Turn) -> None:
        state = self._state(session.id)
        settings = session.settings
        tool_names = state.tool_names
        if not tool_names and state.runner is not None:
            tool_names = frozenset(
                str(s.get("function", {}).get("name")) for s in state.runner.target.tool_schemas()
            )
        due = update_counters(
            state.counters,
            turn,
            memory_interval=settings.memory.nudge_interval,
            skill_interval=settings.skills.creation_nudge_interval,
            tool_names=tool_names,
        )
        state.last_due = due
        state.turns_since_save += 1
        kind = due.kind
        if kind is None or not turn.completed or not settings.review.enabled:
            return
        if state.runner is None:
            log.debug("a %s review is due for %s but no runner is attached", kind, session.id)
            return
        state.runner.start(kind)
        state.turns_since_save = 0

    @hookimpl
    def on_context_loss(
        self, session: SessionInfo, messages: Sequence[ChatMessage], trigger: str
    ) -> list[str] | None:
        state = self._state(session.id)
        settings = session.settings
        minimum = settings.memory.flush_min_turns
        if not settings.review.enabled or minimum <= 0 or state.turns_since_save < minimum:
            return None  # review.enabled: false stops every unattended review, flush included
        if state.runner is None:
            self._skip_once(
                "no-runner",
                "memory flush before %s skipped: no review runner is attached to the session "
                "(call attach_review(session))",
                trigger,
            )
            return None
        report = state.runner.flush(messages, timeout=settings.review.flush_timeout)
        if report.error and report.iterations == 0 and not report.writes:
            if report.error.startswith("timed out"):
                log.warning("memory flush before %s: %s", trigger, report.error)
            else:  # no model, no memory tool: the same reason every time
                self._skip_once(
                    report.error, "memory flush before %s skipped: %s", trigger, report.error
                )
            return None
        state.turns_since_save = 0
        if report.error:
            log.warning("memory flush before %s: %s", trigger, report.error)
        level = state.runner.notification_level
        if level == "off":
            return []
        return [
            f"{line} (saved before {_TRIGGER_LABEL.get(trigger, trigger)})"
            for line in format_notices(report.writes, "verbose")
        ]

    def _skip_once(self, key: str, message: str, *args: object) -> None:
        """Log why a flush cannot run, once per host (it would repeat on every exit)."""
        if key in self._flush_skip_logged:
            log.debug(message, *args)
            return
        self._flush_skip_logged.add(key)
        log.warning(message, *args)

    @hookimpl
    def on_session_end(self, session: SessionInfo) -> None:
        with self._lock:
            state = self._sessions.pop(session.id, None)
        if state is not None and state.runner is not None:
            state.runner.cancel(wait=CANCEL_WAIT_SECONDS)

    @hookimpl
    def health_check(self, home: Path) -> list[HealthCheck]:
        settings = self._settings
        if settings is None:
            from hermes_core.settings.base import load_settings

            settings = load_settings(home)
        if not settings.review.enabled:
            return [
                HealthCheck(
                    "review: background review",
                    True,
                    "off (review.enabled: false); /refine still works",
                )
            ]
        from hermes_core.llm.client import LLMClient

        client = LLMClient.from_settings(settings, route="review")
        if client is None:
            return [
                HealthCheck(
                    "review: background review",
                    True,
                    "idle: no model configured (set llm.base_url and llm.model, or "
                    "llm.auxiliary.review.*, to review turns in the background)",
                )
            ]
        client.close()
        return [
            HealthCheck(
                "review: background review",
                True,
                f"every {settings.memory.nudge_interval} turns (memory), every "
                f"{settings.skills.creation_nudge_interval} tool iterations (skills); model "
                f"{client.model} at {client.display_url}",
            )
        ]


def find_review_layer(pm: pluggy.PluginManager) -> ReviewLayer | None:
    """The registered :class:`ReviewLayer` of ``pm`` (None when blocked)."""
    for plugin in pm.get_plugins():
        if isinstance(plugin, ReviewLayer):
            return plugin
    return None


def read_only_tool_names(session: Any) -> frozenset[str]:
    """Names of the session's routed tools registered with ``read_only=True``."""
    return frozenset(spec.name for spec in session.tool_specs() if spec.read_only)


def attach_review(
    session: Any,
    *,
    system_prompt: str | None = None,
    conversation: Callable[[], Sequence[ChatMessage]] | None = None,
    client_factory: Callable[[], LLMClient | None] | None = None,
    routed: bool | None = None,
    notify: Callable[[str], None] | None = None,
) -> ReviewRunner | None:
    """Attach a :class:`ReviewRunner` to a live :class:`hermes_core.host.Session`, so
    automatic reviews run for it and ``runner.run_attended()`` serves ``/refine``.

    Returns None when the review layer is not registered (blocked by
    ``HERMES_DISABLE_PLUGINS``). ``system_prompt`` should be the full prompt the agent sends
    (default: the session's frozen prompt); ``conversation`` the messages to review (default:
    the session transcript).
    """
    layer = find_review_layer(session.host.pm)
    if layer is None:
        return None
    runner = ReviewRunner(
        session,
        session.host.settings,
        system_prompt=system_prompt,
        conversation=conversation,
        read_only_tools=read_only_tool_names(session),
        client_factory=client_factory,
        routed=routed,
        notify=notify,
    )
    layer.attach(session.id, runner)
    return runner


def create_plugin() -> ReviewLayer:
    """Called once per plugin manager by :func:`hermes_core.plugins.create_plugin_manager`."""
    return ReviewLayer()


__all__ = [
    "ReviewLayer",
    "attach_review",
    "create_plugin",
    "find_review_layer",
    "read_only_tool_names",
]
