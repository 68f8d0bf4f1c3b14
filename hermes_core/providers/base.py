"""The base class of external memory providers.

A provider is identity plus hooks: ``name``, a ``Settings`` model whose fields drive
``hermes-memory memory setup`` (secrets are ``SecretStr``), ``is_available()`` (no network) and
``unavailable_reason()``; everything else is ``@hookimpl`` methods taking any subset of the
spec's arguments. The host decides inline vs bounded/background execution by
``isinstance(plugin, MemoryProvider)``.
"""

from __future__ import annotations

import contextvars
import enum
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import Field, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from hermes_core.errors import ConfigError
from hermes_core.settings.base import ENV_FILE, format_validation_error, resolve_home

_PROVIDER_SOURCE: contextvars.ContextVar[tuple[str, dict[str, Any], Path] | None] = (
    contextvars.ContextVar("hermes_provider_source", default=None)
)


def provider_env_prefix(name: str) -> str:
    """``HERMES_MEMORY__PROVIDERS__<NAME>__``: env names mirror the YAML path."""
    return f"HERMES_MEMORY__PROVIDERS__{name.upper().replace('-', '_')}__"


class ProviderSettings(BaseSettings):
    """Base of a provider's ``Settings``.

    Sources, first wins: init > ``HERMES_MEMORY__PROVIDERS__<NAME>__*`` env (plus any
    ``validation_alias`` such as ``MEM0_API_KEY``) > ``$HERMES_HOME/.env`` >
    ``memory.providers.<name>`` in config.yaml > defaults. Every field needs a
    ``description`` (it is the setup prompt); secrets must be ``SecretStr``;
    ``json_schema_extra={"url": ...}`` adds a "get yours at" line.
    """

    model_config = SettingsConfigDict(extra="ignore", validate_default=True)

    setup_note: ClassVar[str] = ""
    """Printed first by ``hermes-memory memory setup <name>``: e.g. where to get a key."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        bound = _PROVIDER_SOURCE.get()
        if bound is None:
            return (init_settings, env_settings)
        name, raw, home = bound
        prefix = provider_env_prefix(name)
        return (
            init_settings,
            EnvSettingsSource(settings_cls, env_prefix=prefix, env_nested_delimiter="__"),
            DotEnvSettingsSource(
                settings_cls, env_file=home / ENV_FILE, env_prefix=prefix, env_nested_delimiter="__"
            ),
            InitSettingsSource(settings_cls, init_kwargs=raw),
        )


P = TypeVar("P", bound=ProviderSettings)


def load_provider_settings(
    cls: type[P], name: str, home: Path, raw: dict[str, Any] | None = None, **init: Any
) -> P:
    """Validate ``cls`` for provider ``name`` from ``raw`` (the config.yaml block) and env.

    Raises ConfigError naming ``memory.providers.<name>.<field>`` on invalid values.
    """
    token = _PROVIDER_SOURCE.set((name, dict(raw or {}), resolve_home(home)))
    try:
        return _build(cls, name, home, **init)
    finally:
        _PROVIDER_SOURCE.reset(token)


def _build(cls: type[P], name: str, home: Path, **init: Any) -> P:
    try:
        return cls(**init)
    except ValidationError as exc:
        detail = format_validation_error(exc, prefix=f"memory.providers.{name}")
        raise ConfigError(
            f"invalid settings for memory provider '{name}': {detail}. Fix them with "
            f"`hermes-memory memory setup {name}` or in {home / 'config.yaml'}.",
            key=detail.split(":", 1)[0],
        ) from exc


def env_var_for(cls: type[ProviderSettings], name: str, field: str) -> str:
    """The environment variable that carries ``field`` of provider ``name``.

    A field may name its own with ``json_schema_extra={"env_var": "MEM0_API_KEY"}``.
    """
    info = cls.model_fields[field]
    extra = info.json_schema_extra
    if isinstance(extra, dict) and isinstance(extra.get("env_var"), str):
        return str(extra["env_var"])
    return provider_env_prefix(name) + field.upper()


SetupLevel = Literal["ask", "advanced", "hidden"]
"""How ``hermes-memory memory setup`` treats a settings field (see hermes_core.cli.prompts)."""


def setup_field(
    default: Any = ...,
    *,
    description: str,
    setup: SetupLevel = "ask",
    env_var: str | None = None,
    url: str | None = None,
    choices: Sequence[str] | None = None,
    **kwargs: Any,
) -> Any:
    """``pydantic.Field`` with the setup marks: ``setup`` level, the ``env_var`` that carries
    it, the ``url`` where to get a key, the ``choices`` offered."""
    extra: dict[str, Any] = {"setup": setup}
    if env_var:
        extra["env_var"] = env_var
    if url:
        extra["url"] = url
    if choices is not None:
        extra["choices"] = list(choices)
    given = kwargs.pop("json_schema_extra", None)
    if isinstance(given, Mapping):
        extra.update(given)
    return Field(default, description=description, json_schema_extra=extra, **kwargs)


def _extra(info: FieldInfo) -> Mapping[str, Any]:
    extra = info.json_schema_extra
    return extra if isinstance(extra, Mapping) else {}


def is_secret(info: FieldInfo) -> bool:
    """Whether the field holds a secret (``SecretStr`` or ``SecretStr | None``)."""
    annotation = info.annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        annotation = rest[0] if len(rest) == 1 else annotation
    return annotation is SecretStr


def field_url(info: FieldInfo) -> str | None:
    """Where to get the field's value (``json_schema_extra["url"]``), or None."""
    url = _extra(info).get("url")
    return url if isinstance(url, str) else None


def asked_when(info: FieldInfo, known: Mapping[str, Any]) -> bool:
    """Whether the ``"when"`` condition of ``info`` holds for the values in ``known`` (a
    field without one is always asked). ``{"mode": ["server"]}`` holds when ``known["mode"]``
    is ``"server"``; values are compared as strings (enum members by their value)."""
    condition = _extra(info).get("when")
    if not isinstance(condition, Mapping):
        return True
    for name, allowed in condition.items():
        value = known.get(name)
        if isinstance(value, enum.Enum):
            value = value.value
        options = allowed if isinstance(allowed, list | tuple | set) else [allowed]
        if str(value) not in {str(option) for option in options}:
            return False
    return True


class MemoryProvider:
    """Subclass this to write an external memory provider.

    Class attributes: ``name`` (the entry-point name users select) and ``Settings`` (a
    :class:`ProviderSettings` subclass). The host builds the instance with validated settings
    and the Hermes home; storage paths must derive from ``home``, never ``~/.hermes``.
    """

    name: ClassVar[str] = ""
    Settings: ClassVar[type[ProviderSettings]] = ProviderSettings

    def __init__(self, settings: ProviderSettings, home: Path) -> None:
        self.settings = settings
        self.home = Path(home)

    def is_available(self) -> bool:
        """Whether config and dependencies are present. Must not touch the network."""
        return True

    def unavailable_reason(self) -> str:
        """An actionable hint when :meth:`is_available` is False (what to set or install)."""
        return ""

    def status_details(self) -> dict[str, str]:
        """A few ``label: value`` facts ``hermes-memory memory status`` prints under the provider,
        e.g. its mode and whether its server answers. Called only when the provider is
        available; may contact the service (within the provider's own timeout); an
        exception is shown as the error. Default: none."""
        return {}

    def save_setup(self, values: Mapping[str, Any]) -> None:
        """Called by ``hermes-memory memory setup``/``use`` after the validated settings were saved
        to config.yaml and .env; a provider with a native config file writes it here.
        Default: nothing."""

    def warm_up(self) -> None:
        """Open stores and load models ahead of the first recall. The host calls it once,
        on a daemon thread, when the provider activates; hooks may run while it is still
        going, so it must take the same locks they do. A recall that waits for it longer
        than ``memory.prefetch_timeout`` is skipped and counted. Default: nothing."""

    def shutdown(self) -> None:
        """Flush queues and close connections. Called once at host close; must tolerate
        being called again."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"


__all__ = [
    "MemoryProvider",
    "ProviderSettings",
    "SetupLevel",
    "asked_when",
    "env_var_for",
    "field_url",
    "is_secret",
    "load_provider_settings",
    "provider_env_prefix",
    "setup_field",
]
