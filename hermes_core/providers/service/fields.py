"""The settings fields every service provider shares, declared once in
:data:`SHARED_FIELDS` and built by :func:`service_field`.

A provider declares them where it wants them in its ``Settings`` (so setup prompts and its
README keep the provider's own order) and reads them through
:class:`~hermes_core.providers.service.provider.ServiceProvider`::

    timeout: float = service_field("timeout", 5.0, le=60)
    prefetch_wait: float = service_field("prefetch_wait")
    retries: int = service_field("retries")
    failure_threshold: int = service_field("failure_threshold")
    breaker_cooldown: float = service_field("breaker_cooldown")

:func:`service_field` takes another default, ``description=``, a bound and any
:func:`~hermes_core.providers.base.setup_field` keyword (``env_var``, ``validation_alias``…);
every shared field is asked only by ``hermes-memory memory setup --advanced``.

:func:`read_json_object` and :func:`with_file_values` read a provider's own JSON config
file (the one Hermes Agent writes, e.g. ``honcho.json``) under the explicit settings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, AliasChoices, ValidationError
from pydantic_settings import SettingsConfigDict

from hermes_core.errors import ConfigError
from hermes_core.fsutil import UnsafeFileError, read_regular_text
from hermes_core.providers.base import ProviderSettings, provider_env_prefix, setup_field

S = TypeVar("S", bound=ProviderSettings)


def env_alias(provider: str, field: str, *fallbacks: str | None) -> AliasChoices:
    """The ``validation_alias`` of a field that Hermes Agent's variables may also set:
    ``HERMES_MEMORY__PROVIDERS__<PROVIDER>__<FIELD>`` first, then ``fallbacks`` (e.g.
    ``HONCHO_API_KEY``; None ones skipped). Use with ``functools.partial`` per plugin."""
    names = [provider_env_prefix(provider) + field.upper()]
    return AliasChoices(*names, *(f for f in fallbacks if f))


def advanced(**extra: Any) -> dict[str, Any]:
    """``json_schema_extra`` of a field only ``setup --advanced`` asks (plus ``extra``)."""
    return {"setup": "advanced", **extra}


def advanced_field(default: Any, description: str, **kwargs: Any) -> Any:
    """A field only ``setup --advanced`` asks: ``setup_field(default, description=...,
    setup="advanced", **kwargs)``; pass ``...`` with ``default_factory=``."""
    return setup_field(default, description=description, setup="advanced", **kwargs)


def env_field(
    provider: str,
    field: str,
    default: Any,
    env_var: str | None,
    *fallbacks: str,
    description: str = "",
    **kwargs: Any,
) -> Any:
    """A field that ``env_var`` (Hermes Agent's name, shown in setup) and ``fallbacks`` may
    also set, after ``HERMES_MEMORY__PROVIDERS__<PROVIDER>__<FIELD>`` (:func:`env_alias`).
    Bind ``provider`` with ``functools.partial`` per plugin::

        _field = partial(env_field, "honcho")
        api_key: SecretStr | None = _field("api_key", None, "HONCHO_API_KEY", description=...)
        timeout: float = _field("timeout", 5.0, None, "HONCHO_TIMEOUT", le=120)

    A shared field (``field`` in :data:`SHARED_FIELDS`, like ``timeout`` above) is built by
    :func:`service_field` (its description and bounds unless given); any other field needs
    a ``description``."""
    alias = env_alias(provider, field, env_var, *fallbacks)
    if field in SHARED_FIELDS:
        return service_field(
            field,
            default,
            description=description,
            env_var=env_var,
            validation_alias=alias,
            **kwargs,
        )
    if not description:
        raise TypeError(f"env_field {field!r} needs a description")
    return setup_field(
        default, description=description, env_var=env_var, validation_alias=alias, **kwargs
    )


def http_url(
    *, message: str = "must start with http:// or https://", empty: str | None = ""
) -> AfterValidator:
    """The validator of a service URL field (use as ``Annotated[str, http_url(...)]``):
    white space and trailing slashes stripped; a blank value becomes ``empty`` (``""`` keeps
    it blank, so it fails the scheme check); a value without http(s):// raises ``message``
    (``{value!r}`` in it is the value given)."""

    def check(value: str | None) -> str | None:
        text = (value or "").strip().rstrip("/")
        if not text and empty != "":
            return empty
        if not text.startswith(("http://", "https://")):
            raise ValueError(message.replace("{value!r}", repr(text)))
        return text

    return AfterValidator(check)


BaseURL = Annotated[str, http_url(message="base_url must start with http:// or https://")]
"""A ``base_url`` field's type: an http(s) URL without trailing slash (see :func:`http_url`)."""


class ServiceProviderSettings(ProviderSettings):
    """Base of a service provider's ``Settings``: fields may also be set by their name
    when they carry a ``validation_alias`` (``populate_by_name``). It declares no field, so
    each provider keeps its own field order in setup prompts and its README."""

    model_config = SettingsConfigDict(extra="ignore", validate_default=True, populate_by_name=True)


@dataclass(frozen=True)
class SharedField:
    """One shared field's definition: its default, its description and its bounds
    (``gt``/``ge``/``le`` keyword arguments of the pydantic field)."""

    default: Any
    description: str
    bounds: Mapping[str, float]


SHARED_FIELDS: Mapping[str, SharedField] = {
    "timeout": SharedField(10.0, "Seconds one HTTP call may take.", {"gt": 0, "le": 300}),
    "prefetch_wait": SharedField(
        3.0, "Seconds automatic recall waits for the service.", {"gt": 0, "le": 30}
    ),
    "retries": SharedField(
        2, "Retries (with backoff) of a failed idempotent call.", {"ge": 0, "le": 10}
    ),
    "failure_threshold": SharedField(
        5, "Consecutive failures that pause the provider.", {"ge": 1, "le": 100}
    ),
    "breaker_cooldown": SharedField(
        60.0,
        "Seconds the provider stays paused after the failures; then one call probes the service.",
        {"ge": 0, "le": 3600},
    ),
    "recall_max_chars": SharedField(
        4000,
        "At most this many characters of recalled text per turn",
        {"ge": 200, "le": 50_000},
    ),
}
"""The fields every service provider shares, by name: ``timeout`` (seconds one call may
take, ``ServiceClient(timeout=)``), ``prefetch_wait`` (seconds ``prefetch`` waits for the
background recall), ``retries`` (of a failed idempotent call), ``failure_threshold``
(consecutive failures that open the circuit breaker), ``breaker_cooldown`` (seconds it stays
open before one probe) and ``recall_max_chars`` (characters of recalled text one turn may
inject). :class:`~hermes_core.providers.service.provider.ServiceProvider` falls back to these
defaults for a field a provider does not declare."""

_SHARED_DEFAULT: Any = object()


def service_field(
    name: str, default: Any = _SHARED_DEFAULT, *, description: str = "", **kwargs: Any
) -> Any:
    """The shared field ``name`` of :data:`SHARED_FIELDS`, asked only by ``setup
    --advanced``: its default, description and bounds unless ``default``, ``description``
    or a bound (``le=120``) is given; other keywords (``env_var``, ``validation_alias``…)
    go to :func:`~hermes_core.providers.base.setup_field`. Raises KeyError for an unknown
    ``name``."""
    shared = SHARED_FIELDS[name]
    return setup_field(
        shared.default if default is _SHARED_DEFAULT else default,
        description=description or shared.description,
        setup="advanced",
        **{**shared.bounds, **kwargs},
    )


MAX_CONFIG_FILE_BYTES = 1_000_000
"""A provider's JSON config file larger than this is refused (it is a few hundred bytes)."""


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object in ``path`` (``{}`` when absent), e.g. Hermes Agent's
    ``$HERMES_HOME/honcho.json``: the one reader of a provider's own JSON config file.

    Read through :func:`~hermes_core.fsutil.read_regular_text` (opened non-blocking, the
    type checked on the open descriptor, at most :data:`MAX_CONFIG_FILE_BYTES`), so a FIFO,
    device or directory (also one swapped in after a check) is refused, never waited on.
    Raises :class:`~hermes_core.errors.ConfigError` naming the file and the fix when it is
    not a regular file, too large, not JSON, or not an object."""
    try:
        text = read_regular_text(path, max_bytes=MAX_CONFIG_FILE_BYTES, what="provider config")
    except FileNotFoundError:
        return {}
    except UnsafeFileError as exc:  # names the file, what it is, and the fix
        raise ConfigError(str(exc.strerror or exc)) from exc
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read ({exc}) — fix its permissions.") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}) — fix or delete the file.") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object — fix or delete the file.")
    return data


def with_file_values(settings: S, file_values: Mapping[str, Any], path: Path) -> S:
    """``settings`` with ``file_values`` (read from ``path``) filling the fields no other
    source set explicitly (keys that are not fields are ignored). Raises ConfigError naming
    the file and the field when a value is invalid."""
    cls = type(settings)
    values = {k: v for k, v in file_values.items() if k in cls.model_fields}
    if not values:
        return settings
    explicit = {name: getattr(settings, name) for name in settings.model_fields_set}
    try:
        return cls.model_validate({**values, **explicit})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        raise ConfigError(f"{path}: invalid '{loc}': {first.get('msg')} — fix the value.") from exc


__all__ = [
    "MAX_CONFIG_FILE_BYTES",
    "SHARED_FIELDS",
    "BaseURL",
    "ServiceProviderSettings",
    "SharedField",
    "advanced",
    "advanced_field",
    "env_alias",
    "env_field",
    "http_url",
    "read_json_object",
    "service_field",
    "with_file_values",
]
