"""Run a memory provider written for Hermes Agent under our host: ONE adapter class.

:class:`HermesAgentProvider` is an ordinary :class:`~hermes_core.MemoryProvider`, activated
through the registry like any other, so the one-provider rule, prefetch timeouts, failure
isolation, the background sync worker and recall screening apply unchanged. For each provider
found by :mod:`.bridge_discovery`, :func:`adapter_class` derives a subclass that only fixes
``name``, the ``Settings`` model (built from the provider's ``get_config_schema()``) and how to
build a fresh foreign instance.

Mapping (ours → Hermes Agent's ``MemoryProvider``)::

    is_available / unavailable_reason   is_available() / unavailable_reason()
    (first hook of a session)            a fresh instance, initialize(session_id, hermes_home=,
                                         platform=, agent_context="primary", user_id=,
                                         agent_identity=, agent_workspace=)
    system_prompt_block                  system_prompt_block()
    register_tools / tool handler        get_tool_schemas() / handle_tool_call(name, args)
    on_turn_start                        on_turn_start(turn_number, message)
    prefetch                             prefetch(query, session_id=)
    sync                                 sync_turn(user, reply, session_id=, messages=)
    on_turn_end                          queue_prefetch(user, session_id=)  (for the next turn)
    on_memory_write                      on_memory_write(action, target, content, metadata)
    on_pre_compress                      on_pre_compress(messages)
    on_session_end                       on_session_end(messages), then shutdown()
    shutdown                             shutdown() of every live instance
    Settings + save_setup                get_config_schema() / save_config(values, hermes_home)

A Hermes Agent provider holds ONE session's state (it is built per agent), so each of our
sessions gets its own instance: sessions of different users never share one.

Only ``name``, ``is_available``, ``initialize`` and ``get_tool_schemas`` are required by
Hermes Agent's ABC; every other hook is optional there (a provider written for 0.19.0, or one
that does not subclass the ABC, may lack ``on_turn_start``, ``on_memory_write``, ...). A hook
the provider lacks is treated as absent: nothing is called and nothing is logged, as in
Hermes Agent.

``agent_identity`` and ``agent_workspace`` are what Hermes Agent passes for the same home
(:func:`agent_identity_for`: ``"default"`` for ``~/.hermes`` or a custom ``HERMES_HOME``, the
profile name for ``<root>/profiles/<name>``; the workspace ``"hermes"``), so a provider that
scopes by them files our memories where Hermes Agent's are. Both can be set per provider
(``memory.providers.<name>.agent_identity`` / ``.agent_workspace``).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import inspect
import json
import logging
import os
import re
import sys
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, Field, SecretStr, create_model
from pydantic_settings import SettingsConfigDict

from hermes_core.compat import bridge_discovery as discovery
from hermes_core.errors import ConfigError
from hermes_core.markers import hookimpl
from hermes_core.providers.base import MemoryProvider, ProviderSettings, provider_env_prefix
from hermes_core.providers.discovery import InstalledProvider
from hermes_core.types import (
    ChatMessage,
    MemoryContext,
    MemoryWrite,
    PromptBlock,
    SessionInfo,
    ToolContext,
    ToolSpec,
    Turn,
)

log = logging.getLogger(__name__)

Factory = Callable[[], Any]
"""Builds one fresh, uninitialised foreign provider instance."""

_PACKAGE_ROOT = "_hermes_core_ha_plugins"
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REQUIRED_METHODS = ("initialize", "is_available", "get_tool_schemas")
_PROFILE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
AGENT_WORKSPACE = "hermes"
"""The ``agent_workspace`` Hermes Agent 0.19.0 passes to every provider."""


def agent_identity_for(home: Path) -> str:
    """The ``agent_identity`` Hermes Agent passes for ``HERMES_HOME=home`` (its
    ``get_active_profile_name()``): a profile's name for ``<root>/profiles/<name>``,
    ``"custom"`` for another directory under ``~/.hermes``, else ``"default"``."""
    resolved = home.expanduser().resolve()
    if resolved.parent.name == "profiles" and _PROFILE_ID.match(resolved.name):
        return resolved.name
    native = (Path.home() / ".hermes").resolve()
    if resolved != native and resolved.is_relative_to(native):
        return "custom"
    return "default"


def _hook(instance: Any, name: str) -> Callable[..., Any] | None:
    """The provider's optional hook ``name``, or None when it has none (treated as absent)."""
    method = getattr(instance, name, None)
    return method if callable(method) else None


class _Collector:
    """The ``ctx`` handed to a Hermes Agent ``register(ctx)``: keeps the memory provider,
    ignores every other registration (tools, hooks, CLI commands)."""

    def __init__(self) -> None:
        self.provider: Any = None

    def register_memory_provider(self, provider: Any) -> None:
        self.provider = provider

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("register_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)


def _is_provider_class(obj: Any, module: types.ModuleType | None = None) -> bool:
    if not isinstance(obj, type) or obj.__name__ == "MemoryProvider":
        return False
    if module is not None and obj.__module__ != module.__name__:
        return False
    if getattr(obj, "__abstractmethods__", None):
        return False
    return all(callable(getattr(obj, m, None)) for m in _REQUIRED_METHODS)


def _factory_from(target: Any, where: str) -> Factory:
    """A factory from what a plugin offers: a ``register(ctx)`` function, a module with one
    (or with a provider class), a provider class or an instance."""
    if isinstance(target, types.ModuleType):
        register = getattr(target, "register", None)
        if callable(register):
            return _factory_from(register, where)
        for attr in vars(target).values():
            if _is_provider_class(attr, target):
                return _factory_from(attr, where)
        raise TypeError(f"{where} has neither register(ctx) nor a MemoryProvider class")
    if isinstance(target, type):
        if not _is_provider_class(target):
            raise TypeError(f"{where} names {target.__name__}, not a memory provider class")
        return target
    if callable(target) and not hasattr(target, "get_tool_schemas"):
        register = target

        def via_register() -> Any:
            ctx = _Collector()
            register(ctx)
            if ctx.provider is None:
                raise TypeError(f"register(ctx) of {where} registered no memory provider")
            return ctx.provider

        return via_register
    if all(callable(getattr(target, m, None)) for m in _REQUIRED_METHODS):
        klass = type(target)
        return lambda: klass()
    raise TypeError(f"{where} offers {type(target).__name__}, not a memory provider")


def _import_plugin_dir(directory: Path) -> types.ModuleType:
    """Import ``directory/__init__.py`` as package ``_hermes_core_ha_plugins.<name>`` so the
    plugin's relative imports (``from .client import ...``) resolve."""
    if _PACKAGE_ROOT not in sys.modules:
        root = importlib.machinery.ModuleSpec(_PACKAGE_ROOT, None, is_package=True)
        root.submodule_search_locations = []
        sys.modules[_PACKAGE_ROOT] = importlib.util.module_from_spec(root)
    safe = re.sub(r"\W", "_", directory.name)
    module_name = f"{_PACKAGE_ROOT}.{safe}"
    cached = sys.modules.get(module_name)
    if cached is not None:
        return cached
    spec = importlib.util.spec_from_file_location(
        module_name, directory / "__init__.py", submodule_search_locations=[str(directory)]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {directory / '__init__.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


def load_factory(provider: InstalledProvider) -> Factory:
    """Import the foreign provider behind ``provider`` and return its factory."""
    if provider.origin == discovery.ORIGIN_DIR:
        directory = Path(provider.value)
        return _factory_from(_import_plugin_dir(directory), str(directory))
    ep = discovery.entry_point_of(provider)
    return _factory_from(ep.load(), f"entry point {ep.group}:{ep.name}")


# -- settings -------------------------------------------------------------------------------


def _default_env_var(provider: str, key: str) -> str:
    """Hermes Agent's ``hermes memory setup`` writes a secret without ``env_var`` as
    ``<PROVIDER>_<KEY>`` upper-cased."""
    return re.sub(r"\W", "_", f"{provider}_{key}").upper()


def settings_model(name: str, schema: Sequence[Mapping[str, Any]]) -> type[ProviderSettings]:
    """A :class:`ProviderSettings` subclass from a ``get_config_schema()`` list.

    Secrets become ``SecretStr``; a field with an ``env_var`` reads that variable too (as
    Hermes Agent does); ``required`` fields are asked by ``hermes-memory memory setup``; every field
    may stay empty (the provider's ``is_available()`` says what is missing).
    """
    fields: dict[str, Any] = {}
    prefix = provider_env_prefix(name)
    for item in schema:
        key = str(item.get("key") or "")
        if not _IDENTIFIER.match(key) or key in fields or key in ProviderSettings.model_fields:
            log.warning("%s: config field %r skipped (not a usable name)", name, key)
            continue
        secret = bool(item.get("secret"))
        env_var = str(item.get("env_var") or (_default_env_var(name, key) if secret else ""))
        extra: dict[str, Any] = {"setup": "ask" if secret or item.get("required") else "advanced"}
        if env_var:
            extra["env_var"] = env_var
        if isinstance(item.get("url"), str):
            extra["url"] = item["url"]
        if isinstance(item.get("choices"), list):
            extra["choices"] = [str(c) for c in item["choices"]]
        aliases = [prefix + key.upper()] + ([env_var] if env_var else [])
        default = item.get("default")
        if secret:
            fields[key] = (
                SecretStr | None,
                Field(
                    None,
                    description=str(item.get("description") or key),
                    validation_alias=AliasChoices(key, *aliases),
                    json_schema_extra=extra,
                ),
            )
        else:
            choices = item.get("choices")
            annotation: Any = str | None
            if (
                isinstance(choices, list)
                and choices
                and all(isinstance(c, str) for c in choices)
                and (default is None or str(default) in choices)
            ):
                annotation = Literal[tuple(choices)] | None  # offered as a list in setup
            fields[key] = (
                annotation,
                Field(
                    None if default is None else str(default),
                    description=str(item.get("description") or key),
                    validation_alias=AliasChoices(key, *aliases),
                    json_schema_extra=extra,
                ),
            )
    for key, help_text in _IDENTITY_FIELDS.items():
        if key not in fields:
            fields[key] = (
                str | None,
                Field(
                    None,
                    description=help_text,
                    validation_alias=AliasChoices(key, prefix + key.upper()),
                    json_schema_extra={"setup": "advanced"},
                ),
            )
    model: type[ProviderSettings] = create_model(
        f"{_class_stem(name)}Settings",
        __base__=ProviderSettings,
        **fields,
    )
    model.model_config = SettingsConfigDict(
        extra="ignore", validate_default=True, populate_by_name=True
    )
    model.model_rebuild(force=True)
    return model


_IDENTITY_FIELDS = {
    "agent_identity": "agent_identity passed to the provider (empty: what Hermes Agent passes "
    "for this home: 'default', or the profile name)",
    "agent_workspace": f"agent_workspace passed to the provider (empty: {AGENT_WORKSPACE!r}, "
    "as Hermes Agent passes)",
}


def _class_stem(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"\W|_", name) if part) or "Foreign"


# -- the adapter ----------------------------------------------------------------------------


def _tool_schema(raw: Any) -> dict[str, Any] | None:
    """``{"name", "description", "parameters"}`` from either OpenAI shape."""
    if not isinstance(raw, Mapping):
        return None
    body = raw.get("function") if raw.get("type") == "function" else raw
    if not isinstance(body, Mapping) or not isinstance(body.get("name"), str):
        return None
    params = body.get("parameters")
    return {
        "name": body["name"],
        "description": str(body.get("description") or ""),
        "parameters": dict(params) if isinstance(params, Mapping) else {"type": "object"},
    }


def _accepts(method: Callable[..., Any], name: str) -> bool:
    """Whether ``method`` takes keyword ``name`` (or ``**kwargs``)."""
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _as_json(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


class HermesAgentProvider(MemoryProvider):
    """A Hermes Agent memory provider, run under our host (see the module docstring)."""

    factory: ClassVar[Factory]
    offer: ClassVar[InstalledProvider]
    schema: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, settings: ProviderSettings, home: Path) -> None:
        super().__init__(settings, home)
        self._export_env()
        self._probe = type(self).factory()
        self._instances: dict[str, Any] = {}
        self._gates: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    # settings → the environment Hermes Agent providers read
    def _export_env(self) -> None:
        """Hermes Agent loads ``$HERMES_HOME/.env`` into the process environment and its
        providers read their variables there: set each configured ``env_var`` that is not
        set already (the environment wins, as in Hermes Agent)."""
        for key, info in type(self.settings).model_fields.items():
            extra = info.json_schema_extra
            env_var = extra.get("env_var") if isinstance(extra, dict) else None
            value = getattr(self.settings, key, None)
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            if isinstance(env_var, str) and value and not os.environ.get(env_var):
                os.environ[env_var] = str(value)

    def is_available(self) -> bool:
        return bool(self._probe.is_available())

    def unavailable_reason(self) -> str:
        reason = getattr(self._probe, "unavailable_reason", None)
        if callable(reason):
            text = str(reason() or "")
            if text:
                return text
        needed = [
            str(f.get("env_var") or _default_env_var(self.name, str(f.get("key"))))
            for f in self.schema
            if f.get("required") or f.get("secret")
        ]
        hint = f" (set {', '.join(needed)})" if needed else ""
        return (
            f"the Hermes Agent provider '{self.name}' reports it is not configured{hint}; "
            f"run `hermes-memory memory setup {self.name}`."
        )

    def save_setup(self, values: Mapping[str, Any]) -> None:
        """After ``hermes-memory memory setup``/``use`` saved our copy: the provider's own
        ``save_config(non-secret values, hermes_home)`` writes its native config file."""
        plain = {
            k: v
            for k, v in values.items()
            if v is not None
            and k not in _IDENTITY_FIELDS  # ours, not the provider's
            and not isinstance(v, SecretStr)
            and not any(f.get("key") == k and f.get("secret") for f in self.schema)
        }
        save = getattr(self._probe, "save_config", None)
        if callable(save) and plain:
            try:
                save(plain, str(self.home))
            except Exception as exc:
                raise ConfigError(
                    f"the Hermes Agent provider '{self.name}' could not save its config "
                    f"({type(exc).__name__}: {exc}); check {self.home} is writable and "
                    f"re-run `hermes-memory memory setup {self.name}`."
                ) from exc

    # one foreign instance per session
    def _instance(self, session: SessionInfo) -> Any:
        """This session's initialised instance, built on first use. A slow ``initialize``
        (a network handshake) holds up only its own session."""
        with self._lock:
            instance = self._instances.get(session.id)
            if instance is not None:
                return instance
            gate = self._gates.setdefault(session.id, threading.Lock())
        with gate:
            with self._lock:
                instance = self._instances.get(session.id)
            if instance is not None:
                return instance
            instance = type(self).factory()
            kwargs: dict[str, Any] = {
                "hermes_home": str(self.home),
                "platform": session.source,
                "agent_context": "primary",
            }
            if session.user_id:
                kwargs["user_id"] = session.user_id
            if session.parent_id:
                kwargs["parent_session_id"] = session.parent_id
            kwargs.update(self._identity())
            instance.initialize(session.id, **kwargs)
            with self._lock:
                self._instances[session.id] = instance
                self._gates.pop(session.id, None)
            return instance

    def _identity(self) -> dict[str, str]:
        """``agent_identity`` / ``agent_workspace`` for ``initialize``: the configured ones,
        else what Hermes Agent passes for this home."""
        identity = getattr(self.settings, "agent_identity", None)
        workspace = getattr(self.settings, "agent_workspace", None)
        return {
            "agent_identity": str(identity or agent_identity_for(self.home)),
            "agent_workspace": str(workspace or AGENT_WORKSPACE),
        }

    def _release(self, session_id: str) -> Any:
        with self._lock:
            return self._instances.pop(session_id, None)

    @hookimpl
    def on_session_start(self, session: SessionInfo) -> None:
        self._instance(session)

    @hookimpl
    def system_prompt_block(self, session: SessionInfo) -> PromptBlock | None:
        block = _hook(self._instance(session), "system_prompt_block")
        text = str((block() if block else "") or "").strip()
        return PromptBlock(text, source=self.name) if text else None

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec]:
        specs: list[ToolSpec] = []
        for raw in self._instance(session).get_tool_schemas() or []:
            schema = _tool_schema(raw)
            if schema is None:
                log.warning("%s: tool schema skipped (no name): %r", self.name, raw)
                continue
            specs.append(
                ToolSpec(
                    name=schema["name"],
                    description=schema["description"],
                    parameters=schema["parameters"],
                    handler=self._tool_handler(schema["name"]),
                    toolset=self.name,
                )
            )
        return specs

    def _tool_handler(self, tool: str) -> Callable[[Mapping[str, Any], ToolContext], str]:
        def handle(args: Mapping[str, Any], ctx: ToolContext) -> str:
            handler = _hook(self._instance(ctx.session), "handle_tool_call")
            if handler is None:
                return json.dumps({"error": f"{self.name} handles no tool calls ({tool})"})
            return _as_json(handler(tool, dict(args)))

        return handle

    @hookimpl
    def on_turn_start(self, session: SessionInfo, turn_number: int, message: str) -> None:
        if hook := _hook(self._instance(session), "on_turn_start"):
            hook(turn_number, message)

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        hook = _hook(self._instance(session), "prefetch")
        text = str((hook(query, session_id=session.id) if hook else "") or "")
        return MemoryContext(text, label=self.name) if text.strip() else None

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        sync_turn = _hook(self._instance(session), "sync_turn")
        if sync_turn is None:
            return
        kwargs: dict[str, Any] = {"session_id": session.id}
        if _accepts(sync_turn, "messages"):  # older providers predate ``messages``
            kwargs["messages"] = list(turn.messages)
        sync_turn(turn.user_text, turn.reply, **kwargs)

    @hookimpl
    def on_turn_end(self, session: SessionInfo, turn: Turn) -> None:
        if hook := _hook(self._instance(session), "queue_prefetch"):
            hook(turn.user_text, session_id=session.id)

    @hookimpl
    def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None:
        hook = _hook(self._instance(session), "on_memory_write")
        if hook is None:
            return
        if _accepts(hook, "metadata"):
            metadata = {
                "session_id": session.id,
                "write_origin": write.origin,
                "platform": session.source,
            }
            hook(write.action, write.target, write.content, metadata)
        else:  # written before Hermes Agent added ``metadata``
            hook(write.action, write.target, write.content)

    @hookimpl
    def on_pre_compress(self, session: SessionInfo, messages: Sequence[ChatMessage]) -> str | None:
        hook = _hook(self._instance(session), "on_pre_compress")
        text = str((hook(list(messages)) if hook else "") or "")
        return text or None

    @hookimpl
    def on_session_end(self, session: SessionInfo, messages: Sequence[ChatMessage]) -> None:
        instance = self._instance(session)
        try:
            if hook := _hook(instance, "on_session_end"):
                hook(list(messages))
        finally:
            self._release(session.id)
            _shutdown(instance)

    def shutdown(self) -> None:
        with self._lock:
            live, self._instances = list(self._instances.values()), {}
        for instance in [*live, self._probe]:
            try:
                _shutdown(instance)
            except Exception:
                log.exception("%s: shutdown failed", self.name)


def _shutdown(instance: Any) -> None:
    if hook := _hook(instance, "shutdown"):
        hook()


def adapter_class(offer: InstalledProvider) -> type[HermesAgentProvider]:
    """Import the foreign provider of ``offer`` and derive its adapter class."""
    factory = load_factory(offer)
    probe = factory()
    try:
        raw_schema = probe.get_config_schema() if hasattr(probe, "get_config_schema") else []
    finally:
        try:
            _shutdown(probe)
        except Exception:
            log.debug("%s: probe shutdown failed", offer.name, exc_info=True)
    schema = [dict(f) for f in raw_schema or [] if isinstance(f, Mapping)]
    settings = settings_model(offer.name, schema)
    settings.setup_note = f"A Hermes Agent memory provider ({offer.origin}: {offer.distribution})."
    attrs: dict[str, Any] = {
        "name": offer.name,
        "Settings": settings,
        "factory": staticmethod(factory),
        "offer": offer,
        "schema": schema,
        "__module__": __name__,
        "__doc__": f"Hermes Agent provider {offer.name!r} from {offer.distribution}.",
    }
    return type(f"{_class_stem(offer.name)}HermesAgentProvider", (HermesAgentProvider,), attrs)


class HermesAgentSource:
    """The ``hermes.provider_sources`` entry point ``hermes-agent``."""

    def list(self) -> list[InstalledProvider]:
        return discovery.list_hermes_agent_providers()

    def load(self, provider: InstalledProvider) -> type[HermesAgentProvider]:
        return adapter_class(provider)


SOURCE = HermesAgentSource()

__all__ = [
    "AGENT_WORKSPACE",
    "SOURCE",
    "HermesAgentProvider",
    "HermesAgentSource",
    "adapter_class",
    "agent_identity_for",
    "settings_model",
]
