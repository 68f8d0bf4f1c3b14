"""The typed facade over ``pm.hook``: one method per hook.

Why not call ``pm.hook.x()``? pluggy stops at the first exception, has no timeouts and no
notion of tool routing. Here every implementation is called on its own:

* **Isolation** — a raising implementation is logged with its plugin name and skipped; the
  turn goes on.
* **Built-ins vs the provider** — chosen by ``isinstance(plugin, MemoryProvider)``:
  built-in layers run inline (``sync`` is durable on return); the provider's ``prefetch`` is
  bounded by ``memory.prefetch_timeout`` on a worker thread (and skipped while a previous call
  is stuck), its recall coerced, capped (``memory.recall_max_chars``) and screened inside that
  budget; every other inline provider call (tools, ``system_prompt_block``, turn start/end,
  ``shutdown``…) is bounded by ``memory.provider_timeout`` the same way; its ``sync``,
  ``on_memory_write`` and ``on_session_end`` run on one background worker that keeps turn
  order.
* **Warm-up** — activation (or, for providers registered another way, the first session
  start) begins each provider's ``warm_up`` (opening its store, loading its model) on a
  daemon thread, so it overlaps the caller's set-up and, when recall gives up on it, the
  model call.
* **No silent loss** — a provider recall skipped (over the budget, still busy, raising) is
  logged once and counted in the home's recall-skip ledger (:mod:`providers.recall_skips`).
* **Recalled text is data** — provider recall, a provider's system-prompt block and the
  results of ``session_search``, ``memory_archive`` and provider tools pass the threat
  scanner; flagged lines are withheld and marked (:mod:`hermes_core.context`).
* **Egress redaction** — everything handed to the provider passes :func:`redact_payload`;
  error texts are redacted before they are logged or returned to the model.
* **Tools** — routed by name, first registration wins, reserved names refused for providers.
"""

from __future__ import annotations

import functools
import json
import logging
import queue
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from hermes_core import activity
from hermes_core.bounded import BoundedCalls
from hermes_core.context import (
    coerce_context,
    screen_recall,
    screen_text,
    screen_tool_result,
)
from hermes_core.errors import ECHO_LIMIT, clip
from hermes_core.providers import recall_skips
from hermes_core.providers.base import MemoryProvider
from hermes_core.security.redaction import redact, redact_payload
from hermes_core.tool_results import tool_error
from hermes_core.types import (
    ChatMessage,
    CompressionBudget,
    CompressionResult,
    HealthCheck,
    MemoryContext,
    MemoryWrite,
    PromptBlock,
    SessionInfo,
    ToolContext,
    ToolSpec,
    Turn,
)

if TYPE_CHECKING:
    from pluggy._hooks import HookImpl

    from hermes_core.settings.models import HermesSettings

log = logging.getLogger(__name__)

RESERVED_TOOL_NAMES = frozenset(
    {
        "memory",
        "memory_archive",
        "session_search",
        "skills_list",
        "skill_view",
        "skill_manage",
        "skills_find",
        "skill_feedback",
        "clarify",
        "delegate_task",
    }
)
"""Core tool names an external provider may never take over."""

SHUTDOWN_WAIT_SECONDS = 5.0
SCREENED_TOOLS = frozenset({"session_search", "memory_archive"})
"""Built-in tools whose results are recalled text (provider tools are always screened)."""
ERROR_ECHO_CHARS = 1000


def error_text(exc: BaseException, *, with_type: bool = True) -> str:
    """``Type: message`` of ``exc`` (or the message alone), secrets redacted, at most ~1 KB:
    safe to log, store or show to the model."""
    text = redact(f"{type(exc).__name__}: {exc}" if with_type else str(exc))
    if len(text) > ERROR_ECHO_CHARS:
        text = text[:ERROR_ECHO_CHARS] + f"… ({len(text) - ERROR_ECHO_CHARS:,} more chars)"
    return text


# --- the background worker ----------------------------------------------------------------


@dataclass
class ShutdownReport:
    """What :meth:`OrderedWorker.shutdown` could not finish in time."""

    completed: bool
    abandoned: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """One line per provider that did not finish in time: who, what it was doing, and the
    setting that bounds the wait (a UI prints them; they are also logged)."""


class OrderedWorker:
    """One daemon thread running submitted tasks strictly in submission order.

    Tasks are isolated: a raising task is logged and the next one runs. Created lazily on
    the first :meth:`submit`.
    """

    def __init__(self, name: str = "hermes-provider-worker") -> None:
        self._name = name
        self._queue: queue.Queue[tuple[str, Callable[[], None]] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._current: str | None = None

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                label, task = item
                self._current = label
                try:
                    task()
                except Exception as exc:
                    log.error("background task %s failed: %s", label, error_text(exc))
                finally:
                    self._current = None
            finally:
                self._queue.task_done()

    def submit(self, label: str, task: Callable[[], None]) -> bool:
        """Queue ``task``; returns False (and drops it, logged) after shutdown began."""
        if self._closed:
            log.warning("worker closed; dropping %s", label)
            return False
        self._ensure_thread()
        self._queue.put((label, task))
        return True

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every task submitted so far has run. True if done within ``timeout``."""
        if self._thread is None:
            return True
        done = threading.Event()
        if not self.submit("flush", done.set):
            return self._queue.unfinished_tasks == 0
        return done.wait(timeout)

    def shutdown(self, timeout: float = SHUTDOWN_WAIT_SECONDS) -> ShutdownReport:
        """Stop accepting tasks, wait up to ``timeout`` for the queue, report the rest."""
        if self._closed:
            return ShutdownReport(completed=True)
        flushed = self.flush(timeout)
        self._closed = True
        abandoned: list[str] = []
        if not flushed:
            if self._current:
                abandoned.append(self._current)
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None and item[0] != "flush":
                    abandoned.append(item[0])
                self._queue.task_done()
            log.warning("abandoned background work at shutdown: %s", ", ".join(abandoned))
        self._queue.put(None)
        return ShutdownReport(completed=flushed, abandoned=abandoned)


# --- tool routing ------------------------------------------------------------------------


@dataclass(frozen=True)
class RoutedTool:
    """A routed tool, who offered it, and whether that was the external provider (decided
    once, at registration, by :meth:`HookFacade.is_provider`)."""

    spec: ToolSpec
    plugin_name: str
    is_provider: bool = False


class ToolRouter:
    """Name → tool, first wins. Built once per session from ``register_tools``."""

    def __init__(self) -> None:
        self._tools: dict[str, RoutedTool] = {}

    def add(self, spec: ToolSpec, plugin_name: str, *, is_provider: bool) -> bool:
        if not spec.name:
            log.warning("plugin %s offered a tool without a name; skipped", plugin_name)
            return False
        if is_provider and spec.name in RESERVED_TOOL_NAMES:
            log.warning(
                "tool '%s' from %s shadows a reserved core tool name; registration ignored",
                spec.name,
                plugin_name,
            )
            return False
        existing = self._tools.get(spec.name)
        if existing is not None:
            log.warning(
                "tool name conflict: '%s' already registered by %s, ignoring from %s",
                spec.name,
                existing.plugin_name,
                plugin_name,
            )
            return False
        self._tools[spec.name] = RoutedTool(spec, plugin_name, is_provider)
        return True

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [routed.spec for routed in self._tools.values()]

    def get(self, name: str) -> RoutedTool | None:
        return self._tools.get(name)

    def schemas(self) -> list[dict[str, Any]]:
        return [routed.spec.schema() for routed in self._tools.values()]


# --- the facade --------------------------------------------------------------------------


class HookFacade:
    """Typed access to every hook of a plugin manager (see the module docstring)."""

    def __init__(self, pm: pluggy.PluginManager, settings: HermesSettings, home: Path) -> None:
        self.pm = pm
        self.settings = settings
        self.home = home
        self.worker = OrderedWorker()
        self._bounded = BoundedCalls("hermes-prefetch")
        self._configured = False
        self._warming: dict[str, threading.Thread] = {}
        self.recall_skips: dict[str, int] = {}
        """Recalls skipped in this process, by ``"<plugin>:<kind>"``."""

    # -- plumbing

    def _impls(self, hook_name: str, *, registration_order: bool = False) -> list[HookImpl]:
        caller = getattr(self.pm.hook, hook_name)
        impls = list(caller.get_hookimpls())
        return impls if registration_order else list(reversed(impls))

    @staticmethod
    def is_provider(impl: HookImpl) -> bool:
        """True for an implementation of the external provider: the facade's one test of
        "built-in or provider?" (tools remember its answer in :class:`RoutedTool`)."""
        return _is_provider(impl.plugin)

    @staticmethod
    def _invoke(impl: HookImpl, kwargs: Mapping[str, Any]) -> Any:
        return impl.function(*(kwargs[name] for name in impl.argnames))

    def _safe(
        self, hook_name: str, impl: HookImpl, kwargs: Mapping[str, Any], *, bounded: bool = True
    ) -> Any:
        """Call one implementation; a raise is logged (redacted) and gives ``None``. The
        provider's inline calls are bounded by ``memory.provider_timeout`` (``bounded``)."""
        try:
            if bounded and self.is_provider(impl) and hook_name != "configure":
                return self._bounded_provider_call(
                    hook_name, impl.plugin_name, functools.partial(self._invoke, impl, kwargs)
                )
            if self.is_provider(impl):  # on the background worker: shown while waited on
                with activity.track(impl.plugin_name, hook_name):
                    return self._invoke(impl, kwargs)
            return self._invoke(impl, kwargs)
        except Exception as exc:
            log.error(
                "plugin %s failed in %s; skipped: %s", impl.plugin_name, hook_name, error_text(exc)
            )
            _debug_traceback(f"the {hook_name} failure")
            return None

    def _provider_call(
        self, what: str, plugin_name: str, call: Callable[[], Any]
    ) -> tuple[bool, Any]:
        """``(finished, result)`` of ``call`` run under ``memory.provider_timeout``; not
        finished (and a warning) when it times out or an earlier call of the same kind is
        still stuck. Exceptions of ``call`` propagate."""
        limit = self.settings.memory.provider_timeout
        key = f"{plugin_name}:{what}"
        if self._bounded.is_stuck(key):
            log.warning("provider %s is still busy with an earlier %s; skipped", plugin_name, what)
            return False, None
        finished, result = self._bounded.run(key, activity.tracked(plugin_name, what, call), limit)
        if not finished:
            log.warning(
                "provider %s did not finish %s within %.1fs (memory.provider_timeout); skipped",
                plugin_name,
                what,
                limit,
            )
        return finished, result

    def _bounded_provider_call(self, what: str, plugin_name: str, call: Callable[[], Any]) -> Any:
        """:meth:`_provider_call`'s result, ``None`` when it did not finish."""
        return self._provider_call(what, plugin_name, call)[1]

    def _for_provider(self, kwargs: dict[str, Any], *keys: str) -> dict[str, Any]:
        """``kwargs`` with the values at ``keys`` egress-redacted (copies, never mutated)."""
        present = [key for key in keys if key in kwargs]
        redacted = redact_payload(*(_plain(kwargs[key]) for key in present))
        out = dict(kwargs)
        for key, value in zip(present, redacted, strict=True):
            out[key] = _restore(kwargs[key], value)
        return out

    def _fan_out(self, hook_name: str, kwargs: dict[str, Any], *redact_keys: str) -> list[Any]:
        """Call every implementation inline, isolated; provider arguments redacted."""
        results = []
        for impl in self._impls(hook_name):
            args = self._for_provider(kwargs, *redact_keys) if self.is_provider(impl) else kwargs
            result = self._safe(hook_name, impl, args)
            if result is not None:
                results.append(result)
        return results

    def _fan_out_split(
        self,
        hook_name: str,
        kwargs: dict[str, Any],
        *redact_keys: str,
        label: str,
        failures: list[Exception] | None = None,
    ) -> None:
        """Built-ins inline; the provider on the ordered background worker. With
        ``failures``, exceptions of ``durable_sync`` plugins are logged and collected there
        instead of swallowed."""
        for impl in self._impls(hook_name):
            if self.is_provider(impl):
                args = self._for_provider(kwargs, *redact_keys)
                self.worker.submit(
                    f"{label} ({impl.plugin_name})",
                    functools.partial(self._safe, hook_name, impl, args, bounded=False),
                )
            elif failures is not None and getattr(impl.plugin, "durable_sync", False) is True:
                try:
                    self._invoke(impl, kwargs)
                except Exception as exc:
                    log.error("plugin %s failed in %s: %s", impl.plugin_name, hook_name, exc)
                    failures.append(exc)
            else:
                self._safe(hook_name, impl, kwargs)

    # -- registration with history (the historic ``configure``)

    def configure(self) -> None:
        """Call ``configure`` on every registered plugin; later plugins get it on
        :meth:`register`."""
        self._configured = True
        self._fan_out("configure", {"settings": self.settings, "home": self.home})

    def register(self, plugin: object, name: str) -> None:
        """Register ``plugin`` and replay ``configure`` for it if the host already started."""
        self.pm.register(plugin, name=name)
        if self._configured:
            for impl in self._impls("configure"):
                if impl.plugin is plugin:
                    self._safe("configure", impl, {"settings": self.settings, "home": self.home})

    # -- one method per hook

    def system_prompt_blocks(
        self, session: SessionInfo, tool_names: frozenset[str]
    ) -> list[PromptBlock]:
        kwargs = {"session": session, "tool_names": tool_names}
        blocks: list[PromptBlock] = []
        for impl in self._impls("system_prompt_block"):
            block = self._safe("system_prompt_block", impl, kwargs)
            if not isinstance(block, PromptBlock) or not isinstance(block.text, str):
                continue
            if self.is_provider(impl):  # recalled data, never instructions: screened
                text, ids = screen_text(block.text)
                if ids:
                    log.warning(
                        "withheld part of %s's system prompt block: %s",
                        impl.plugin_name,
                        ", ".join(ids),
                    )
                block = replace(block, text=text)
            if block.text.strip():
                blocks.append(block)
        return sorted(blocks, key=lambda block: block.order if isinstance(block.order, int) else 50)

    def on_prompt_frozen(self, session: SessionInfo, system_prompt: str) -> None:
        self._fan_out("on_prompt_frozen", {"session": session, "system_prompt": system_prompt})

    def register_tools(self, session: SessionInfo) -> ToolRouter:
        router = ToolRouter()
        for impl in self._impls("register_tools", registration_order=True):
            specs = self._safe("register_tools", impl, {"session": session})
            if not specs:
                continue
            try:
                checked = [spec for spec in specs if isinstance(spec, ToolSpec)]
            except TypeError:
                log.warning("plugin %s returned a non-list from register_tools", impl.plugin_name)
                continue
            for spec in checked:
                router.add(spec, impl.plugin_name, is_provider=self.is_provider(impl))
        return router

    def on_session_start(self, session: SessionInfo) -> None:
        self.warm_up()
        self._fan_out("on_session_start", {"session": session})

    def warm_up(self) -> None:
        """Start every registered provider's ``warm_up`` on a daemon thread (once each)."""
        for name, plugin in self.pm.list_name_plugin():
            if not isinstance(plugin, MemoryProvider) or name in self._warming:
                continue
            thread = threading.Thread(
                target=self._warm_one, args=(name, plugin), name=f"hermes-warm-up-{name}"
            )
            thread.daemon = True
            self._warming[name] = thread
            thread.start()

    @staticmethod
    def _warm_one(name: str, provider: MemoryProvider) -> None:
        started = time.monotonic()
        try:
            provider.warm_up()
        except Exception as exc:  # one line (the provider's reason names the fix); no traceback
            log.error(
                "provider %s failed to warm up; its first recall will retry: %s",
                name,
                error_text(exc),
            )
            _debug_traceback("the warm-up failure")
            return
        log.debug("provider %s warmed up in %.2fs", name, time.monotonic() - started)

    def _skip_recall(self, plugin: str, kind: recall_skips.SkipKind, detail: str) -> None:
        """One log line and one count for a recall the turn goes on without."""
        log.warning("provider %s recall skipped (%s): %s", plugin, kind, detail)
        key = f"{plugin}:{kind}"
        self.recall_skips[key] = self.recall_skips.get(key, 0) + 1
        name = plugin.removeprefix("memory-provider:")
        recall_skips.record(self.home, name, kind, detail)

    def on_turn_start(self, session: SessionInfo, turn_number: int, message: str) -> None:
        self._fan_out(
            "on_turn_start",
            {"session": session, "turn_number": turn_number, "message": message},
            "message",
        )

    def prefetch(self, session: SessionInfo, query: str) -> list[MemoryContext]:
        """Every implementation's recall, coerced to :class:`MemoryContext`, capped to
        ``memory.recall_max_chars`` and screened (flagged lines withheld and marked). The
        provider's call *and its screening* are bounded by ``memory.prefetch_timeout`` and
        skipped while an earlier call is stuck. Never raises."""
        timeout = self.settings.memory.prefetch_timeout
        cap = self.settings.memory.recall_max_chars
        results: list[MemoryContext] = []
        for impl in self._impls("prefetch"):
            key = impl.plugin_name
            if not self.is_provider(impl):
                kwargs = {"session": session, "query": query}
                try:
                    context = self._recall(impl, kwargs, cap)
                except Exception as exc:
                    log.error("plugin %s failed in prefetch; skipped: %s", key, error_text(exc))
                    continue
            else:
                if self._bounded.is_stuck(key):
                    self._skip_recall(key, "busy", "still busy with an earlier prefetch")
                    continue
                args = self._for_provider({"session": session, "query": query}, "query")
                call = activity.tracked(
                    key, "prefetch", functools.partial(self._recall, impl, args, cap)
                )
                try:
                    finished, context = self._bounded.run(key, call, timeout)
                except Exception as exc:
                    self._skip_recall(key, "failed", error_text(exc))
                    continue
                if not finished:
                    warming = self._warming.get(key)
                    why = " (still warming up)" if warming and warming.is_alive() else ""
                    self._skip_recall(key, "timeout", f"no answer within {timeout:.1f}s{why}")
                    continue
            if isinstance(context, MemoryContext) and context.text.strip():
                results.append(replace(context, source=key))
        return results

    def _recall(self, impl: HookImpl, kwargs: Mapping[str, Any], cap: int) -> MemoryContext | None:
        """One implementation's prefetch, coerced, capped and screened."""
        context = coerce_context(self._invoke(impl, kwargs), impl.plugin_name)
        if context is None:
            return None
        return screen_recall(context, max_chars=cap)

    def sync(self, session: SessionInfo, turn: Turn) -> None:
        """Built-ins durable on return; the provider queued in turn order.

        A plugin whose class sets ``durable_sync = True`` (the session archive) is not
        isolated here: every other implementation still runs, then its failure is raised
        to the caller, so a turn is stored whole or the caller learns why."""
        failures: list[Exception] = []
        self._fan_out_split(
            "sync",
            {"session": session, "turn": turn},
            "turn",
            label=f"sync turn {turn.number}",
            failures=failures,
        )
        if failures:
            raise failures[0]

    def on_turn_end(self, session: SessionInfo, turn: Turn) -> None:
        self._fan_out("on_turn_end", {"session": session, "turn": turn}, "turn")

    def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None:
        self._fan_out_split(
            "on_memory_write",
            {"session": session, "write": write},
            "write",
            label=f"memory write ({write.action} {write.target})",
        )

    def on_context_loss(
        self, session: SessionInfo, messages: Sequence[ChatMessage], trigger: str
    ) -> list[str]:
        """Every implementation's lines; the provider's call bounded by
        ``review.flush_timeout`` (its late answer is dropped)."""
        kwargs: dict[str, Any] = {
            "session": session,
            "messages": list(messages),
            "trigger": trigger,
        }
        timeout = self.settings.review.flush_timeout
        lines: list[str] = []
        for impl in self._impls("on_context_loss"):
            if not self.is_provider(impl):
                result = self._safe("on_context_loss", impl, kwargs)
            else:
                args = self._for_provider(kwargs, "messages")
                call = functools.partial(self._invoke, impl, args)
                try:
                    key = f"{impl.plugin_name}:on_context_loss"  # not the prefetch key
                    finished, result = self._bounded.run(key, call, timeout)
                except Exception:
                    log.exception("plugin %s failed in on_context_loss; skipped", impl.plugin_name)
                    continue
                if not finished:
                    log.warning(
                        "provider %s on_context_loss exceeded %.1fs; skipped",
                        impl.plugin_name,
                        timeout,
                    )
                    continue
            if isinstance(result, list):
                lines.extend(str(line) for line in result if str(line).strip())
        return lines

    def on_pre_compress(self, session: SessionInfo, messages: Sequence[ChatMessage]) -> str:
        """Notes for the summary; the provider's are recalled text, screened like recall."""
        kwargs = {"session": session, "messages": list(messages)}
        texts: list[str] = []
        for impl in self._impls("on_pre_compress"):
            provider = self.is_provider(impl)
            text = self._safe(
                "on_pre_compress",
                impl,
                self._for_provider(kwargs, "messages") if provider else kwargs,
            )
            if not isinstance(text, str) or not text.strip():
                continue
            texts.append(screen_text(text)[0].strip() if provider else text.strip())
        return "\n\n".join(texts)

    def compress(
        self,
        session: SessionInfo,
        messages: Sequence[ChatMessage],
        budget: CompressionBudget,
        notes: str,
    ) -> CompressionResult | None:
        """The first implementation that returns a result wins (built-in is ``trylast``)."""
        kwargs = {"session": session, "messages": list(messages), "budget": budget, "notes": notes}
        for impl in self._impls("compress"):
            result = self._safe("compress", impl, kwargs)
            if isinstance(result, CompressionResult):
                return result
        return None

    def on_compressed(self, session: SessionInfo, result: CompressionResult) -> None:
        self._fan_out("on_compressed", {"session": session, "result": result}, "result")

    def on_session_end(
        self, session: SessionInfo, messages: Sequence[ChatMessage], reason: str
    ) -> None:
        self._fan_out_split(
            "on_session_end",
            {"session": session, "messages": list(messages), "reason": reason},
            "messages",
            label="session end",
        )

    def register_commands(self, cli: Any) -> None:
        self._fan_out("register_commands", {"cli": cli})

    def health_check(self) -> list[HealthCheck]:
        checks: list[HealthCheck] = []
        for impl in self._impls("health_check", registration_order=True):
            call = functools.partial(self._invoke, impl, {"home": self.home})
            try:
                if self.is_provider(impl):
                    finished, result = self._provider_call("health_check", impl.plugin_name, call)
                    if not finished:
                        checks.append(
                            HealthCheck(
                                name=impl.plugin_name,
                                ok=False,
                                detail="health check did not answer within "
                                f"{self.settings.memory.provider_timeout:g}s",
                                fix="check the provider's backend is reachable; raise "
                                "memory.provider_timeout if it is just slow",
                            )
                        )
                        continue
                else:
                    result = call()
            except Exception as exc:
                checks.append(
                    HealthCheck(
                        name=impl.plugin_name,
                        ok=False,
                        detail=f"health check raised {error_text(exc)}",
                        fix="report this to the plugin's author; run `hermes-memory plugins`",
                    )
                )
                continue
            try:
                checks.extend(check for check in result or [] if isinstance(check, HealthCheck))
            except TypeError:
                log.warning("plugin %s returned a non-list from health_check", impl.plugin_name)
        checks.extend(recall_skips.health_check(self.home))
        return checks

    # -- tools

    def call_tool(self, router: ToolRouter, name: str, args: Any, ctx: ToolContext) -> str:
        """Route a tool call. Unknown tools, bad JSON and raising handlers become JSON errors."""
        routed = router.get(name) if isinstance(name, str) else None
        if routed is None:
            known = ", ".join(sorted(router.names)) or "none"
            return tool_error(
                f"No memory provider handles tool '{clip(name, 200)}'. Known tools: {known}."
            )
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError as exc:
                return tool_error(f"Arguments for '{name}' are not valid JSON: {exc}")
            except RecursionError:
                return tool_error(f"Arguments for '{name}' are nested too deeply to parse.")
        if not isinstance(args, Mapping):
            return tool_error(f"Arguments for '{name}' must be a JSON object.")
        if routed.is_provider:
            (args,) = redact_payload(dict(args))
        handler = functools.partial(routed.spec.handler, args, ctx)
        try:
            if routed.is_provider:
                finished, result = self._provider_call(f"tool {name}", routed.plugin_name, handler)
                if not finished:
                    return tool_error(
                        f"Memory tool '{name}' ({routed.plugin_name}) did not answer within "
                        f"{self.settings.memory.provider_timeout:g}s (memory.provider_timeout), "
                        "or is still busy with an earlier call. Try again later or continue "
                        "without it."
                    )
            else:
                result = handler()
        except Exception as exc:
            log.error("tool %s (%s) failed: %s", name, routed.plugin_name, error_text(exc))
            _debug_traceback(f"tool {name}")
            return tool_error(f"Memory tool '{name}' failed: {error_text(exc, with_type=False)}")
        try:
            text = (
                result
                if isinstance(result, str)
                else json.dumps(result, ensure_ascii=False, allow_nan=False)
            )
        except (TypeError, ValueError) as exc:
            return tool_error(f"Memory tool '{name}' returned a result that is not JSON: {exc}")
        if routed.is_provider or name in SCREENED_TOOLS:
            text = screen_tool_result(text)  # recalled text is data, never instructions
        return _clip_error(text)

    # -- lifecycle

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for queued provider work; True if it all ran within ``timeout``."""
        return self.worker.flush(timeout)

    def shutdown(self, timeout: float = SHUTDOWN_WAIT_SECONDS) -> ShutdownReport:
        """Drain the worker (≤ ``timeout``), then shut providers down, each isolated and
        bounded by ``memory.provider_timeout``. What did not finish is in the report's
        ``notes``, one plain line per provider (``timeout`` comes from
        ``memory.shutdown_timeout`` when the host closes)."""
        busy = activity.running()  # what the provider is doing while the drain waits
        report = self.worker.shutdown(timeout)
        if not report.completed:
            doing = {row["provider"]: row["what"] for row in activity.running() or busy}
            for plugin_name, labels in _by_provider(report.abandoned).items():
                name = plugin_name.rpartition(":")[2]
                what = doing.get(name)
                report.notes.append(
                    f"{name}: stopped waiting after {timeout:g} s"
                    + (f" while it was {what}" if what else "")
                    + f"; not done: {', '.join(labels)} (memory.shutdown_timeout)"
                )
        limit = self.settings.memory.provider_timeout
        for plugin in list(self.pm.get_plugins()):
            if _is_provider(plugin):
                try:
                    finished, _ = self._provider_call("shutdown", plugin.name, plugin.shutdown)
                except Exception as exc:
                    log.warning("provider %s failed to shut down: %s", plugin.name, error_text(exc))
                    report.notes.append(f"{plugin.name}: shutdown failed: {error_text(exc)}")
                    continue
                if not finished:
                    report.notes.append(
                        f"{plugin.name}: its shutdown did not finish within {limit:g} s; "
                        "left running as the process exits (memory.provider_timeout)"
                    )
        return report


def _by_provider(labels: Sequence[str]) -> dict[str, list[str]]:
    """Worker task labels (``"sync turn 3 (mem0)"``) grouped by the provider in brackets,
    the bracket dropped."""
    grouped: dict[str, list[str]] = {}
    for label in labels:
        head, _, tail = label.rpartition(" (")
        name = tail[:-1] if head and tail.endswith(")") else "provider"
        grouped.setdefault(name, []).append(head or label)
    return grouped


def _clip_error(text: str) -> str:
    """A failed tool call's JSON with its ``error`` cut to ~1 KB: whatever a handler echoed
    (a megabyte of a bad argument), the model never gets more than that back."""
    if len(text) <= 4 * ECHO_LIMIT or '"success": false' not in text[:64]:
        return text
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError):
        return text
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, str) or len(error) <= 2 * ECHO_LIMIT:
        return text
    payload["error"] = clip(error, 2 * ECHO_LIMIT)
    return json.dumps(payload, ensure_ascii=False)


def _debug_traceback(what: str) -> None:
    """The current exception's traceback at DEBUG level, secrets redacted."""
    if log.isEnabledFor(logging.DEBUG):
        log.debug("traceback of %s:\n%s", what, redact(traceback.format_exc()))


def _is_provider(plugin: object) -> bool:
    return isinstance(plugin, MemoryProvider)


def _plain(value: Any) -> Any:
    """Dataclasses (Turn, MemoryWrite, CompressionResult) as dicts so redaction can walk them."""
    if isinstance(value, Turn | MemoryWrite | CompressionResult):
        return {name: getattr(value, name) for name in value.__dataclass_fields__}
    return value


def _restore(original: Any, redacted: Any) -> Any:
    """Rebuild a dataclass from its redacted dict form."""
    if isinstance(original, Turn | MemoryWrite | CompressionResult) and isinstance(redacted, dict):
        if "messages" in redacted:
            redacted["messages"] = tuple(redacted["messages"])
        return replace(original, **redacted)
    return redacted


def iter_plugin_hooks(pm: pluggy.PluginManager) -> Iterable[tuple[str, list[str]]]:
    """``(plugin_name, [hook names])`` for every registered plugin."""
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        hooks = sorted(caller.name for caller in pm.get_hookcallers(plugin) or [])
        yield name, hooks


__all__ = [
    "RESERVED_TOOL_NAMES",
    "SCREENED_TOOLS",
    "HookFacade",
    "OrderedWorker",
    "RoutedTool",
    "ShutdownReport",
    "ToolRouter",
    "error_text",
    "iter_plugin_hooks",
    "tool_error",
]
