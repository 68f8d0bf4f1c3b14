"""Run one of our providers inside Hermes Agent (≥ 0.19): its ``MemoryProvider`` interface
over our hook facade and provider registry.

Hermes Agent imports ``$HERMES_HOME/plugins/<plugin>/__init__.py`` (written by
:mod:`.bridge_install`), whose ``register(ctx)`` calls
``ctx.register_memory_provider(agent_provider("chroma", "hermes-core-chroma"))``. The object
returned is a subclass of Hermes Agent's own ``agent.memory_provider.MemoryProvider`` (imported
only then, inside Hermes Agent's process). Underneath, a plugin manager holding **only** our
provider (no built-in layers: Hermes Agent keeps its own MEMORY.md, USER.md and state.db),
activated through the registry, driven through the facade: failure isolation, the prefetch
timeout, the ordered background sync worker and recall screening are ours, unchanged.

Our provider's home is ``$HERMES_HOME/hermes-core/`` (its config.yaml holds
``memory.providers.<name>``; its data lives below it), so nothing of Hermes Agent's is touched.

Mapping (Hermes Agent → ours)::

    initialize(session_id, **kw)        SessionInfo(id, source=platform, user_id) +
                                        on_session_start, register_tools
    system_prompt_block()               system_prompt_block (joined)
    prefetch(query) / queue_prefetch    prefetch (bounded by memory.prefetch_timeout) / no-op
    sync_turn(user, reply, messages=)   sync + on_turn_end, waited for (≤ 30 s): Hermes Agent
                                        calls it on its own worker; skipped for agent_context
                                        cron/flush/subagent, as Hermes asks. ``messages`` is
                                        Hermes Agent's WHOLE conversation: the Turn gets only
                                        this turn's new messages (:func:`new_turn_messages`)
    get_tool_schemas/handle_tool_call   register_tools / the facade's tool routing
    on_turn_start, on_pre_compress,     the hooks of the same names
    on_memory_write, on_session_end
    get_config_schema/save_config       our Settings fields / memory.providers.<name>
    shutdown()                          flush, then shutdown of the facade
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from hermes_core.hooks import HookFacade, ToolRouter
from hermes_core.plugins import create_plugin_manager
from hermes_core.providers.base import MemoryProvider, env_var_for
from hermes_core.providers.registry import ProviderRegistry, availability
from hermes_core.settings.base import load_settings
from hermes_core.settings.files import set_config_value
from hermes_core.types import MemoryWrite, SessionInfo, ToolContext, Turn

log = logging.getLogger(__name__)

CORE_HOME_DIR = "hermes-core"
"""Our provider's home inside Hermes Agent's: ``$HERMES_HOME/hermes-core``."""

SYNC_WAIT_SECONDS = 30.0
"""How long ``sync_turn`` waits for our provider's sync before returning anyway."""

_NO_WRITE_CONTEXTS = frozenset({"cron", "flush", "subagent"})


def agent_home() -> Path:
    """Hermes Agent's home as it resolves it: ``$HERMES_HOME`` or ``~/.hermes``."""
    raw = os.environ.get("HERMES_HOME", "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".hermes"


def core_home(hermes_home: Path | str | None = None) -> Path:
    """Where our provider keeps its settings and data inside a Hermes Agent home."""
    return Path(hermes_home) if hermes_home else agent_home()


def _fingerprint(message: Mapping[str, Any]) -> str:
    return json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)


def new_turn_messages(
    messages: list[dict[str, Any]], seen: tuple[int, str] | None
) -> tuple[list[dict[str, Any]], tuple[int, str] | None]:
    """This turn's messages out of Hermes Agent's whole conversation, and the new ``seen``.

    ``seen`` is ``(count, fingerprint of the last message)`` of the conversation at the end
    of the previous turn. When the conversation still starts with it, the turn is what came
    after; otherwise (the first turn, or Hermes Agent compressed or replaced its history) it
    is everything from the last ``user`` message on. System messages are never part of it.
    """
    dialogue = [dict(m) for m in messages if isinstance(m, Mapping) and m.get("role") != "system"]
    if not dialogue:
        return [], seen
    count, mark = seen if seen is not None else (0, "")
    if 0 < count <= len(dialogue) and _fingerprint(dialogue[count - 1]) == mark:
        turn = dialogue[count:]
    else:
        users = [i for i, m in enumerate(dialogue) if m.get("role") == "user"]
        turn = dialogue[users[-1] :] if users else dialogue
    return turn, (len(dialogue), _fingerprint(dialogue[-1]))


class CoreProviderBridge:
    """Hermes Agent's ``MemoryProvider`` methods over one of our providers.

    Mixed into a subclass of Hermes Agent's ABC by :func:`agent_provider`; usable alone
    (duck-typed) where Hermes Agent is not installed, e.g. in our own tests.
    """

    def __init__(self, provider: str, plugin_name: str) -> None:
        self._provider = provider
        self._plugin_name = plugin_name
        self._lock = threading.RLock()
        self._facade: HookFacade | None = None
        self._registry: ProviderRegistry | None = None
        self._home: Path | None = None
        self._info: SessionInfo | None = None
        self._router: ToolRouter | None = None
        self._turns = 0
        self._seen: tuple[int, str] | None = None
        self._writes = True

    # -- identity
    @property
    def name(self) -> str:
        return self._plugin_name

    # -- our side, built on first use
    def _home_for(self, hermes_home: str | None = None) -> Path:
        return core_home(hermes_home) / CORE_HOME_DIR

    def _start(self, hermes_home: str | None = None) -> tuple[HookFacade, MemoryProvider]:
        with self._lock:
            home = self._home_for(hermes_home)
            if self._facade is not None and self._home == home and self._registry is not None:
                active = self._registry.active
                if active is not None:
                    return self._facade, active
            self._stop()
            home.mkdir(parents=True, exist_ok=True)
            settings = load_settings(home)
            pm = create_plugin_manager(load_entrypoints=False, builtins=())
            facade = HookFacade(pm, settings, home)
            facade.configure()
            registry = ProviderRegistry(pm, settings, home, register=facade.register)
            provider = registry.activate(self._provider)
            self._facade, self._registry, self._home = facade, registry, home
            return facade, provider

    def _stop(self) -> None:
        facade, registry = self._facade, self._registry
        self._facade = self._registry = None
        self._info = self._router = None
        if facade is not None:
            facade.shutdown()
        if registry is not None:
            registry.deactivate()

    def _session(self) -> tuple[HookFacade, SessionInfo]:
        facade, _ = self._start(str(self._home.parent) if self._home else None)
        if self._info is None:
            self._open_session("pending")
        assert self._info is not None
        return facade, self._info

    def _open_session(self, session_id: str, **kwargs: Any) -> None:
        facade, _ = self._start(kwargs.get("hermes_home"))
        assert self._home is not None
        self._info = SessionInfo(
            id=session_id,
            home=self._home,
            settings=facade.settings,
            source=str(kwargs.get("platform") or "cli"),
            user_id=str(kwargs["user_id"]) if kwargs.get("user_id") else None,
            parent_id=str(kwargs["parent_session_id"]) if kwargs.get("parent_session_id") else None,
        )
        facade.on_session_start(self._info)
        self._router = facade.register_tools(self._info)
        self._turns = 0
        self._seen = None

    # -- Hermes Agent's MemoryProvider
    def is_available(self) -> bool:
        try:
            _, provider = self._start()
        except Exception as exc:
            log.warning("hermes-core provider %s cannot start: %s", self._provider, exc)
            return False
        return availability(provider).active

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        with self._lock:
            self._writes = str(kwargs.get("agent_context") or "primary") not in _NO_WRITE_CONTEXTS
            self._open_session(session_id or "pending", **kwargs)

    def system_prompt_block(self) -> str:
        facade, info = self._session()
        names = self._router.names if self._router else frozenset()
        return "\n\n".join(b.text for b in facade.system_prompt_blocks(info, names))

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        facade, info = self._session()
        return "\n\n".join(c.text for c in facade.prefetch(info, query) if c.text.strip())

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Our prefetch runs on demand under its own timeout: nothing to queue."""

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        if not self._writes:
            return
        facade, info = self._session()
        self._turns += 1
        new, self._seen = new_turn_messages(list(messages or ()), self._seen)
        turn = Turn(
            session_id=info.id,
            number=self._turns,
            user_text=user_content,
            reply=assistant_content,
            messages=tuple(new),
        )
        facade.sync(info, turn)
        facade.on_turn_end(info, turn)
        # Hermes Agent already calls sync_turn on its own background worker and treats its
        # return (flush_pending) as "written": wait for ours, bounded.
        if not facade.flush(SYNC_WAIT_SECONDS):
            log.warning("%s: sync still running after %ss", self._plugin_name, SYNC_WAIT_SECONDS)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        self._session()
        router = self._router
        if router is None:
            return []
        return [
            {"name": s.name, "description": s.description, "parameters": dict(s.parameters)}
            for s in router.specs()
        ]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        facade, info = self._session()
        assert self._router is not None
        return facade.call_tool(self._router, tool_name, args, ToolContext(session=info))

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        facade, info = self._session()
        facade.on_turn_start(info, turn_number, message)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        facade, info = self._session()
        return facade.on_pre_compress(info, messages)

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        if action not in {"add", "replace", "remove"} or target not in {"memory", "user"}:
            return
        facade, info = self._session()
        write = MemoryWrite(action=action, target=target, content=content, session_id=info.id)  # type: ignore[arg-type]
        facade.on_memory_write(info, write)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        facade, info = self._session()
        facade.on_session_end(info, messages, "exit")
        facade.flush(facade.settings.memory.prefetch_timeout * 10)

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        with self._lock:
            if self._info is not None and new_session_id:
                self._open_session(
                    new_session_id,
                    hermes_home=str(self._home.parent) if self._home else None,
                    platform=self._info.source,
                    user_id=self._info.user_id,
                    parent_session_id=kwargs.get("parent_session_id") or self._info.id,
                )

    def get_config_schema(self) -> list[dict[str, Any]]:
        from hermes_core.providers.registry import load_provider_class

        cls = load_provider_class(self._provider)
        fields: list[dict[str, Any]] = []
        for key, info in cls.Settings.model_fields.items():
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            if extra.get("setup") == "hidden":
                continue
            secret = info.annotation is SecretStr or "SecretStr" in str(info.annotation)
            item: dict[str, Any] = {
                "key": key,
                "description": info.description or key,
                "secret": secret,
                "required": info.is_required(),
            }
            if secret:
                item["env_var"] = env_var_for(cls.Settings, self._provider, key)
            elif not info.is_required() and info.default is not None:
                item["default"] = _plain(info.default)
            for extra_key in ("url", "choices"):
                if extra.get(extra_key) is not None:
                    item[extra_key] = extra[extra_key]
            fields.append(item)
        return fields

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        home = self._home_for(hermes_home)
        home.mkdir(parents=True, exist_ok=True)
        for key, value in values.items():
            set_config_value(home, f"memory.providers.{self._provider}.{key}", value)
        set_config_value(home, "memory.provider", self._provider)

    def backup_paths(self) -> list[str]:
        return []  # our data lives under $HERMES_HOME/hermes-core, inside Hermes' backups

    def shutdown(self) -> None:
        with self._lock:
            self._stop()


def _plain(value: Any) -> Any:
    try:
        json.dumps(value)
    except TypeError:
        return str(value)
    return value


def agent_provider(provider: str, plugin_name: str) -> Any:
    """Our provider ``provider`` as an instance of Hermes Agent's ``MemoryProvider`` ABC
    (imported here, in Hermes Agent's process), named ``plugin_name``."""
    from agent.memory_provider import (  # type: ignore[import-not-found,unused-ignore]
        MemoryProvider as AgentMemoryProvider,
    )

    cls = type(
        "HermesCoreProvider",
        (CoreProviderBridge, AgentMemoryProvider),
        {"__module__": __name__, "__doc__": CoreProviderBridge.__doc__},
    )
    return cls(provider, plugin_name)


__all__ = [
    "CORE_HOME_DIR",
    "CoreProviderBridge",
    "agent_home",
    "agent_provider",
    "core_home",
    "new_turn_messages",
]
