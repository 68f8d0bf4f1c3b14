"""``ServiceProvider``: the frame every service (HTTP or CLI) memory provider is built on.

The frame owns what every service provider needs and none should write again:

* settings: coerced to the provider's ``Settings`` (:meth:`ServiceProvider.load_settings`),
  the provider's own JSON file (``config_file``, :meth:`ServiceProvider.config_values`)
  filling what no other source set;
* availability: :meth:`~ServiceProvider.unavailable_reason` says which setting to fill when
  the ``key_field`` is empty (env var and key URL taken from the field), no network;
* the lazy client: :meth:`~ServiceProvider.api` builds a
  :class:`~hermes_core.providers.service.ServiceClient` from the shared settings fields
  (``timeout``, ``retries``, ``failure_threshold``, ``breaker_cooldown``; see
  :mod:`hermes_core.providers.service.fields`) and wraps it with :meth:`make_api`; after
  :meth:`shutdown` it raises :class:`ServiceError`;
* background work: :meth:`~ServiceProvider.submit` (context-copying executor), and with
  :class:`BackgroundRecall` the recall started at turn start, awaited by ``prefetch`` within
  its budget and refreshed after the turn;
* sync through the :class:`~hermes_core.providers.service.outbox.Outbox`
  (:meth:`~ServiceProvider.send_later`) and turn de-duplication (:meth:`first_sync`);
* ``health_check`` (configuration, then the circuit breaker) and ``shutdown`` (warns about
  undelivered writes, cancels background work, closes the client, idempotent);
* tools: :meth:`~ServiceProvider.tool` builds a :class:`ToolSpec` whose handler never
  raises and answers in the one tool-result shape (:mod:`hermes_core.tool_results`).

* the prompt and the recalled context: ``system_prompt_block`` from :attr:`prompt` or
  :meth:`prompt_text`,
  :meth:`recalled_context` (heading, ``- `` lines, label, per-line scores).

A plugin writes only its API calls: ``api_class`` (its endpoints), recall, writing a turn,
its tools. See docs/writing-a-provider.md, "Service providers".
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, get_args

from hermes_core.markers import hookimpl
from hermes_core.providers.base import MemoryProvider, ProviderSettings, env_var_for
from hermes_core.providers.service.breaker import CircuitBreaker
from hermes_core.providers.service.client import ServiceClient
from hermes_core.providers.service.errors import (
    ServiceError,
    ServiceNotFound,
    ServicePaused,
    ServiceSettings,
)
from hermes_core.providers.service.fields import (
    SHARED_FIELDS,
    read_json_object,
    with_file_values,
)
from hermes_core.providers.service.outbox import Outbox
from hermes_core.providers.service.settings import service_settings
from hermes_core.providers.service.tools import (
    DeclaredTool,
    Param,
    ToolRefused,
    declared_tools,
)
from hermes_core.recall_trace import item_scores
from hermes_core.tool_results import tool_error
from hermes_core.types import (
    HealthCheck,
    MemoryContext,
    PromptBlock,
    SessionInfo,
    ToolContext,
    ToolSpec,
    Turn,
)

if TYPE_CHECKING:
    from hermes_core.types import ChatMessage

T = TypeVar("T")
S = TypeVar("S", bound=ProviderSettings)
A = TypeVar("A")
Item = TypeVar("Item")

ToolRun = Callable[[Mapping[str, Any], ToolContext], str]


def _secret(value: Any) -> str:
    if value is None:
        return ""
    getter = getattr(value, "get_secret_value", None)
    return str(getter() if callable(getter) else value)


class ServiceProvider(MemoryProvider, Generic[S, A]):
    """Base class of a service memory provider (see the module docstring).

    Class attributes: ``service`` (display name in messages and logs), ``key_field`` /
    ``url_field`` (the settings fields holding the key and the base URL, or None),
    ``workers`` (background threads), ``breaker_fix`` (what the health check says while
    the breaker is open), ``not_found_prefix`` (a :class:`ServiceNotFound` in a tool reads
    ``"not found: ..."``), ``outbox_limit`` (writes kept while the service is down),
    ``config_file`` (a JSON file under ``$HERMES_HOME``, e.g. ``honcho.json``, whose values
    fill the settings nobody set; see :meth:`config_values`), ``api_class`` (the
    :class:`~hermes_core.providers.service.client.ServiceAPI` subclass :meth:`make_api`
    builds around the client), ``prompt`` (the system-prompt block, when it does not depend
    on the session; else override :meth:`prompt_text`), ``prompt_order`` (of that block; None:
    PromptBlock's default) and ``recall_heading`` (the first line of
    :meth:`recalled_context`). ``Settings`` defaults to the first type argument.
    """

    service: ClassVar[str] = ""
    key_field: ClassVar[str | None] = "api_key"
    url_field: ClassVar[str | None] = "base_url"
    workers: ClassVar[int] = 2
    breaker_fix: ClassVar[str] = ""
    not_found_prefix: ClassVar[bool] = False
    outbox_limit: ClassVar[int] = 500
    config_file: ClassVar[str | None] = None
    prompt_order: ClassVar[int | None] = None
    prompt: ClassVar[str] = ""
    api_class: ClassVar[type[Any] | None] = None
    recall_heading: ClassVar[str] = ""

    settings: S

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """``Settings`` defaults to the first type argument of the base
        (``ServiceProvider[HonchoSettings, HonchoAPI]`` → ``HonchoSettings``)."""
        super().__init_subclass__(**kwargs)
        if "Settings" in cls.__dict__:
            return
        for base in cls.__dict__.get("__orig_bases__", ()):
            args = get_args(base)
            if args and isinstance(args[0], type) and issubclass(args[0], ProviderSettings):
                cls.Settings = args[0]
                return

    def __init__(
        self,
        settings: ProviderSettings,
        home: Path,
        *,
        client: ServiceClient | None = None,
        transport: Any = None,
    ) -> None:
        super().__init__(settings, home)
        self.settings = self.load_settings(settings)
        self.log = logging.getLogger(type(self).__module__)
        self._given_client = client
        self._transport = transport
        self._http: ServiceClient | None = None
        self._api: A | None = None
        self._lock = threading.RLock()
        self._executor: cf.ThreadPoolExecutor | None = None
        self._synced: set[tuple[str, int]] = set()
        self.outbox = Outbox(self.service or self.name, limit=self.outbox_limit, logger=self.log)
        self._closed = False

    # ------------------------------------------------------------ settings, availability

    def load_settings(self, settings: ProviderSettings) -> S:
        """``settings`` as this provider's ``Settings``, with :meth:`config_values` (the
        provider's own JSON file, :attr:`config_file`) filling the fields no other source
        set explicitly."""
        cls = self.Settings
        if not isinstance(settings, cls):
            settings = cls.model_validate(settings.model_dump())
        if self.config_file:
            path = self.home / self.config_file
            settings = with_file_values(settings, self.config_values(), path)
        return settings  # type: ignore[return-value]

    def config_values(self) -> Mapping[str, Any]:
        """The values of :attr:`config_file` (default: its JSON object, read safely; override
        to map another program's keys onto the fields)."""
        return read_json_object(self.home / (self.config_file or ""))

    def setting(self, field: str) -> Any:
        return getattr(self.settings, field, None)

    def shared_setting(self, name: str) -> Any:
        """The shared field ``name`` (:data:`~.fields.SHARED_FIELDS`): the provider's value,
        else the shared default when its ``Settings`` does not declare it."""
        return getattr(self.settings, name, SHARED_FIELDS[name].default)

    def key(self) -> str:
        """The API key ("" when ``key_field`` is None or empty)."""
        return _secret(self.setting(self.key_field)) if self.key_field else ""

    def is_available(self) -> bool:
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        """Why the provider cannot run ("" when it can); no network. The default asks for
        the ``key_field`` when it is empty, naming its env var and where to get a key."""
        if not self.key_field or self.key():
            return ""
        return self.missing_key_reason()

    def missing_key_reason(self) -> str:
        assert self.key_field is not None
        cls = type(self.settings)
        info = cls.model_fields[self.key_field]
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, Mapping) else {}
        env = str(extra.get("env_var") or env_var_for(cls, self.name, self.key_field))
        where = f" (get one at {extra['url']})" if extra.get("url") else ""
        return (
            f"{self.service} needs an API key: set {env}{where} or run "
            f"`hermes-memory memory setup {self.name}`"
        )

    # ------------------------------------------------------------ the lazy client

    def service_settings(self) -> ServiceSettings:
        """The names of the settings that fix a failing call (for error messages)."""
        return service_settings(
            type(self.settings),
            self.name,
            self.service,
            key_field=self.key_field,
            url_field=self.url_field,
        )

    def base_url(self) -> str:
        return str(self.setting(self.url_field or "") or "")

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments of the :class:`ServiceClient` (override to add headers or an
        auth scheme); taken from the shared fields of :mod:`.fields`."""
        return {
            "api_key": self.setting(self.key_field) if self.key_field else None,
            "timeout": self.shared_setting("timeout"),
            "retries": self.shared_setting("retries"),
            "failure_threshold": self.shared_setting("failure_threshold"),
            "cooldown": self.shared_setting("breaker_cooldown"),
            "transport": self._transport,
        }

    def make_client(self) -> ServiceClient:
        return self._given_client or ServiceClient(
            self.base_url(), settings=self.service_settings(), **self.client_options()
        )

    def make_api(self, client: ServiceClient) -> A:
        """The plugin's API wrapper around ``client`` (its endpoints): :attr:`api_class`
        called with ``client`` (override to pass more); the client itself without one."""
        api = client if self.api_class is None else self.api_class(client)
        return api  # type: ignore[return-value]

    def api(self) -> A:
        """The API wrapper, built on first use (no network until a call); raises
        :class:`ServiceError` once the provider is shut down."""
        with self._lock:
            if self._closed:
                raise ServiceError(f"the {self.name} provider is shut down", service=self.service)
            if self._api is None:
                self._api = self.connect()
            return self._api

    def connect(self) -> A:
        """Build the API on first use: :meth:`make_client` wrapped by :meth:`make_api`
        (a provider that talks to a CLI instead of HTTP overrides this)."""
        self._http = self.make_client()
        return self.make_api(self._http)

    @property
    def breaker(self) -> CircuitBreaker | None:
        """The client's circuit breaker (None until the first call built the client)."""
        http = self._http
        return http.breaker if http is not None else None

    def breaker_open(self) -> bool:
        breaker = self.breaker
        return breaker is not None and breaker.state == "open"

    def log_failure(self, what: str, exc: ServiceError) -> None:
        """One line per failure; DEBUG while the breaker pauses calls (it said so once)."""
        if isinstance(exc, ServicePaused):
            self.log.debug("%s %s skipped: %s", self.name, what, exc)
        else:
            self.log.warning("%s %s failed: %s", self.name, what, exc)

    def recall_now(self, fetch: Callable[[], T]) -> T | None:
        """``fetch()`` for a ``prefetch`` that recalls in the foreground (the turn waits on
        it): None once the provider is shut down or when the service fails (logged by
        :meth:`log_failure`)."""
        if self._closed:
            return None
        try:
            return fetch()
        except ServiceError as exc:
            self.log_failure("prefetch", exc)
            return None

    # ------------------------------------------------------------ background, sync

    def submit(self, fn: Callable[[], T]) -> cf.Future[T]:
        """Run ``fn`` on the provider's background threads (context variables copied).
        Raises RuntimeError once shut down."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the {self.name} provider is shut down")
            if self._executor is None:
                self._executor = cf.ThreadPoolExecutor(
                    max_workers=self.workers, thread_name_prefix=self.name
                )
            executor = self._executor
        ctx = contextvars.copy_context()
        return executor.submit(ctx.run, fn)

    def first_sync(self, session: SessionInfo, turn: Turn) -> bool:
        """True the first time ``turn`` of ``session`` is synced (a re-sent turn, or any
        turn once the provider is shut down: False)."""
        key = (session.id, turn.number)
        with self._lock:
            if key in self._synced or self._closed:
                return False
            self._synced.add(key)
            return True

    def send_later(self, key: str, write: Callable[[], object]) -> bool:
        """Deliver ``write`` through the outbox: in order, kept while the service is
        unavailable (``key`` must make a re-send harmless)."""
        return self.outbox.send(key, write)

    def forget_session(self, session: SessionInfo) -> None:
        """Drop what was kept for ``session`` (call from ``on_session_end``)."""
        with self._lock:
            self._synced = {k for k in self._synced if k[0] != session.id}

    # ------------------------------------------------------------ prompt, recalled context

    def prompt_text(self, session: SessionInfo) -> str | None:
        """The provider's block of the system prompt for ``session`` (None or "": no block);
        default: :attr:`prompt`."""
        return self.prompt

    @hookimpl
    def system_prompt_block(self, session: SessionInfo) -> PromptBlock | None:
        """:meth:`prompt_text` at :attr:`prompt_order` (None: PromptBlock's default)."""
        text = self.prompt_text(session)
        if not text:
            return None
        order = {} if self.prompt_order is None else {"order": self.prompt_order}
        return PromptBlock(text=text, source=self.name, **order)

    def recalled_context(
        self, lines: Sequence[str], scores: Sequence[object] = (), **extra: Any
    ) -> MemoryContext | None:
        """The turn's context: :attr:`recall_heading` then ``lines`` (one ``- memory`` each),
        labelled :attr:`service`; ``scores[i]`` belongs to ``lines[i]`` (kept only when every
        line has a finite one, :func:`~hermes_core.recall_trace.item_scores`); None without
        lines. ``extra``: other :class:`MemoryContext` fields (``glyph``)."""
        if not lines:
            return None
        return MemoryContext(
            text="\n".join([self.recall_heading, *lines]),
            count=len(lines),
            label=self.service,
            scores=item_scores(scores),
            **extra,
        )

    # ------------------------------------------------------------ pre-compress recall

    def compress_recall(self, session: SessionInfo, query: str) -> Sequence[str]:
        """What the service remembers about ``query`` (the messages about to be compressed,
        :func:`compress_query`): the plugin's API call, bounded by its ``prefetch_wait``.
        The default recalls nothing, so ``on_pre_compress`` adds nothing."""
        return ()

    def compress_query_chars(self) -> int:
        """At most this many characters of the compressed messages are asked about."""
        return 800

    def compress_max_items(self) -> int | None:
        """At most this many recalled lines go to the summariser (None: all)."""
        return None

    @hookimpl
    def on_pre_compress(self, session: SessionInfo, messages: Sequence[ChatMessage]) -> str | None:
        """:meth:`compress_recall` of the compressed messages as the summariser's source
        material (:func:`remembered`): blank lines and those the threat scanner flags are
        dropped; None when shut down, while the breaker is open, or when the service fails
        (logged)."""
        query = compress_query(messages, self.compress_query_chars())
        if not query or self._closed or self.breaker_open():
            return None
        try:
            recalled = self.compress_recall(session, query)
        except ServiceError as exc:
            self.log_failure("pre-compress recall", exc)
            return None
        kept = [line for line in recalled if line.strip() and not flagged(line)]
        return remembered(self.service, kept[: self.compress_max_items()])

    # ------------------------------------------------------------ health, shutdown

    def health_summary(self) -> tuple[str, str]:
        """``(name, detail)`` of the health check's first line while the provider is
        configured (default: ``"<name> (<base URL>)"``, ``"configured"``); the detail gives
        way to :meth:`unavailable_reason` when there is one."""
        return f"{self.name} ({self.base_url()})", "configured"

    @hookimpl
    def health_check(self, home: Path) -> list[HealthCheck]:
        reason = self.unavailable_reason()
        name, detail = self.health_summary()
        checks = [HealthCheck(name=name, ok=not reason, detail=reason or detail, fix=reason)]
        breaker = self.breaker
        if breaker is not None and breaker.state != "closed":
            checks.append(
                HealthCheck(
                    name=f"{self.name} circuit breaker",
                    ok=False,
                    detail=f"paused for {breaker.remaining():.0f} s after repeated failures",
                    fix=self.breaker_fix
                    or "check that the service is reachable and its key; "
                    "calls resume automatically",
                )
            )
        return checks

    def unsent_writes(self) -> int:
        """Writes that would be lost at shutdown (default: the outbox's)."""
        return self.outbox.pending

    def shutdown(self) -> None:
        """Warn about undelivered writes, cancel background work, close the client.
        Idempotent; later calls to :meth:`api` raise :class:`ServiceError`."""
        unsent = self.unsent_writes() if not self._closed else 0
        if unsent:
            self.log.warning(
                "%d write(s) to %s could not be delivered before shutdown (the service was "
                "unavailable); they are lost",
                unsent,
                self.service,
            )
        with self._lock:
            executor, self._executor = self._executor, None
            http, self._http, self._api = self._http, None, None
            self._closed = True
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        if http is not None:
            try:
                http.close()
            except Exception:
                self.log.debug("%s client close failed", self.name, exc_info=True)

    # ------------------------------------------------------------ tools

    def guarded(self, name: str, run: ToolRun) -> Callable[[Mapping[str, Any], ToolContext], str]:
        """``run`` as a handler that never raises: arguments that are not an object, a
        :class:`ToolRefused`, a :class:`ServiceError` or any other exception become a
        :func:`~hermes_core.tool_results.tool_error`."""

        def handler(args: Mapping[str, Any], ctx: ToolContext) -> str:
            if not isinstance(args, Mapping):
                return tool_error("arguments must be a JSON object")
            try:
                return run(args, ctx)
            except ToolRefused as exc:
                return tool_error(str(exc))
            except ServiceNotFound as exc:
                return tool_error(f"not found: {exc}" if self.not_found_prefix else str(exc))
            except ServiceError as exc:
                self.log_failure(f"tool {name}", exc)
                return tool_error(str(exc))
            except Exception as exc:  # a handler never raises
                self.log.exception("%s tool %s failed", self.name, name)
                return tool_error(f"{type(exc).__name__}: {exc}")

        return handler

    def tool(
        self,
        name: str,
        description: str,
        properties: Mapping[str, Any],
        run: ToolRun,
        *,
        required: Sequence[str] = (),
        read_only: bool = False,
    ) -> ToolSpec:
        """A memory-toolset :class:`ToolSpec` whose handler is :meth:`guarded` (for a tool
        whose arguments depend on the settings; else declare it with
        :func:`~hermes_core.providers.service.tools.memory_tool`)."""
        params = {key: Param(schema, key in required) for key, schema in properties.items()}
        return self._spec(DeclaredTool(name, description, params, read_only), run)

    def tools_on(self, session: SessionInfo) -> bool:
        """Whether ``session`` is offered the declared tools (default: True)."""
        return True

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec]:
        """The tools declared with :func:`~hermes_core.providers.service.tools.memory_tool`,
        in the order they are defined (none when :meth:`tools_on` is False)."""
        if not self.tools_on(session):
            return []
        return [self._spec(decl, getattr(self, attr)) for attr, decl in declared_tools(type(self))]

    def _spec(self, decl: DeclaredTool, run: ToolRun) -> ToolSpec:
        return ToolSpec(
            name=decl.name,
            description=decl.description,
            parameters=decl.parameters(),
            handler=self.guarded(decl.name, run),
            toolset="memory",
            read_only=decl.read_only,
        )


class BackgroundRecall(ServiceProvider[S, A], Generic[S, A, Item]):
    """A service provider whose automatic recall runs in the background.

    ``on_turn_start`` starts :meth:`auto_recall` for the user's message; ``prefetch`` waits
    at most :meth:`recall_wait` for it (a different query starts its own), and on timeout
    answers with what was recalled after the previous turn; ``on_turn_end`` refreshes that
    cache. Nothing starts while the breaker is open or :meth:`auto_recall_on` is False.
    The plugin writes :meth:`auto_recall` (its API call) and :meth:`format_context`.
    """

    def __init__(self, settings: ProviderSettings, home: Path, **kwargs: Any) -> None:
        super().__init__(settings, home, **kwargs)
        self._pending: dict[str, tuple[str, cf.Future[list[Item]]]] = {}
        self._cached: dict[str, list[Item]] = {}

    def auto_recall(self, session: SessionInfo, query: str) -> list[Item]:
        """What automatic recall finds for ``query`` (the plugin's API call)."""
        raise NotImplementedError

    def format_context(self, items: Sequence[Item]) -> MemoryContext | None:
        """The recalled ``items`` as the turn's context (None when nothing to say)."""
        raise NotImplementedError

    def recall_wait(self, session: SessionInfo) -> float:
        """Seconds ``prefetch`` waits for the recall (default: ``prefetch_wait``)."""
        return float(self.shared_setting("prefetch_wait"))

    def auto_recall_on(self) -> bool:
        return True

    def _recall_allowed(self, query: str) -> bool:
        return bool(query) and not self._closed and self.auto_recall_on()

    @hookimpl
    def on_turn_start(self, session: SessionInfo, message: str) -> None:
        query = (message or "").strip()
        if not self._recall_allowed(query) or self.breaker_open():
            return
        future = self.submit(lambda: self.auto_recall(session, query))
        with self._lock:
            self._pending[session.id] = (query, future)

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        query = (query or "").strip()
        if not self._recall_allowed(query):
            return None
        with self._lock:
            pending = self._pending.pop(session.id, None)
        if pending is not None and pending[0] == query:
            future = pending[1]
        else:
            future = self.submit(lambda: self.auto_recall(session, query))
        wait = self.recall_wait(session)
        try:
            items = future.result(timeout=wait)
        except cf.TimeoutError:
            self.log.info("%s recall still running after %.1fs", self.name, wait)
            with self._lock:
                items = self._cached.get(session.id, [])
        except ServiceError as exc:
            self.log_failure("recall", exc)
            return None
        return self.format_context(items)

    @hookimpl
    def on_turn_end(self, session: SessionInfo, turn: Turn) -> None:
        query = (turn.user_text or "").strip()
        if not self._recall_allowed(query) or self.breaker_open():
            return

        def run() -> list[Item]:
            items = self.auto_recall(session, query)
            with self._lock:
                self._cached[session.id] = items
            return items

        self.submit(run)

    def forget_session(self, session: SessionInfo) -> None:
        super().forget_session(session)
        with self._lock:
            self._pending.pop(session.id, None)
            self._cached.pop(session.id, None)

    def shutdown(self) -> None:
        with self._lock:
            self._pending.clear()
        super().shutdown()


def compress_query(messages: Sequence[ChatMessage], limit: int, last: int = 3) -> str:
    """The last ``last`` user messages of ``messages``, white space folded, at most
    ``limit`` characters: what ``on_pre_compress`` asks the service about."""
    users = [
        str(m.get("content") or "")
        for m in messages
        if m.get("role") == "user" and isinstance(m.get("content"), str)
    ]
    return " ".join(" ".join(users[-last:]).split())[:limit]


def flagged(text: str) -> bool:
    """True when the threat scanner (context scope) blocks ``text``."""
    from hermes_core.security.scan import scan

    return scan(text, "context").blocked


def unflagged(items: Iterable[T], text: Callable[[T], str]) -> tuple[list[T], int]:
    """``(kept, withheld)``: ``items`` whose ``text`` the threat scanner does not flag."""
    listed = list(items)
    kept = [item for item in listed if not flagged(text(item))]
    return kept, len(listed) - len(kept)


def remembered(service: str, lines: Sequence[str]) -> str | None:
    """``on_pre_compress`` source material: ``"<service> already remembers ...:"`` and one
    ``- line`` each (None without lines)."""
    if not lines:
        return None
    body = "\n".join(f"- {' '.join(line.split())}" for line in lines)
    return f"{service} already remembers (long-term memory):\n{body}"


__all__ = [
    "BackgroundRecall",
    "ServiceProvider",
    "ToolRefused",
    "compress_query",
    "flagged",
    "remembered",
    "unflagged",
]
