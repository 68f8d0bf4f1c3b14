"""The settings fields every service provider shares, as field factories.

A provider declares them where it wants them in its ``Settings`` (so setup prompts and its
README keep the provider's own order) and reads them through
:class:`~hermes_core.providers.service.provider.ServiceProvider`::

    timeout: float = timeout_field(10.0, le=300)
    prefetch_wait: float = prefetch_wait_field()
    retries: int = retries_field()
    failure_threshold: int = failure_threshold_field()
    breaker_cooldown: float = breaker_cooldown_field()

Every factory takes ``description=`` and any :func:`~hermes_core.providers.base.setup_field`
keyword (``env_var``, ``validation_alias``…); all are asked only by
``hermes-memory memory setup --advanced``.

:func:`read_json_object` and :func:`with_file_values` read a provider's own JSON config
file (the one Hermes Agent writes, e.g. ``honcho.json``) under the explicit settings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
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
    description: str,
    **kwargs: Any,
) -> Any:
    """A field that ``env_var`` (Hermes Agent's name, shown in setup) and ``fallbacks`` may
    also set, after ``HERMES_MEMORY__PROVIDERS__<PROVIDER>__<FIELD>`` (:func:`env_alias`).
    Bind ``provider`` with ``functools.partial`` per plugin::

        _field = partial(env_field, "honcho")
        api_key: SecretStr | None = _field("api_key", None, "HONCHO_API_KEY", description=...)
    """
    return setup_field(
        default,
        description=description,
        env_var=env_var,
        validation_alias=env_alias(provider, field, env_var, *fallbacks),
        **kwargs,
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


def timeout_field(
    default: float = 10.0,
    *,
    le: float = 300,
    description: str = "Seconds one HTTP call may take.",
    **kwargs: Any,
) -> Any:
    """``timeout``: seconds one call may take (``ServiceClient(timeout=)``)."""
    return setup_field(default, description=description, setup="advanced", gt=0, le=le, **kwargs)


def prefetch_wait_field(
    default: float = 3.0,
    *,
    description: str = "Seconds automatic recall waits for the service.",
    **kwargs: Any,
) -> Any:
    """``prefetch_wait``: seconds ``prefetch`` waits for the background recall."""
    return setup_field(default, description=description, setup="advanced", gt=0, le=30, **kwargs)


def retries_field(
    *, description: str = "Retries (with backoff) of a failed idempotent call.", **kwargs: Any
) -> Any:
    """``retries``: retries of a failed idempotent call (``ServiceClient(retries=)``)."""
    return setup_field(2, description=description, setup="advanced", ge=0, le=10, **kwargs)


def failure_threshold_field(
    *,
    description: str = "Consecutive failures that pause the provider.",
    **kwargs: Any,
) -> Any:
    """``failure_threshold``: consecutive failures that open the circuit breaker."""
    return setup_field(5, description=description, setup="advanced", ge=1, le=100, **kwargs)


def breaker_cooldown_field(
    *,
    description: str = "Seconds the provider stays paused after the failures; then one call "
    "probes the service.",
    **kwargs: Any,
) -> Any:
    """``breaker_cooldown``: seconds the breaker stays open before one probe."""
    return setup_field(60.0, description=description, setup="advanced", ge=0, le=3600, **kwargs)


def recall_max_chars_field(
    *,
    description: str = "At most this many characters of recalled text per turn",
    **kwargs: Any,
) -> Any:
    """``recall_max_chars``: characters of recalled text one turn may inject (4000)."""
    return setup_field(4000, description=description, setup="advanced", ge=200, le=50_000, **kwargs)


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
    "BaseURL",
    "ServiceProviderSettings",
    "advanced",
    "advanced_field",
    "breaker_cooldown_field",
    "env_alias",
    "env_field",
    "failure_threshold_field",
    "http_url",
    "prefetch_wait_field",
    "read_json_object",
    "recall_max_chars_field",
    "retries_field",
    "timeout_field",
    "with_file_values",
]
