"""Where settings come from, first source wins:

1. init arguments (``load_settings(memory={"provider": "x"})``)
2. environment variables ``HERMES_*`` with ``__`` nesting (``HERMES_MEMORY__PROVIDER``)
3. ``$HERMES_HOME/.env`` (same names)
4. ``$HERMES_HOME/config.yaml``
5. defaults

``HERMES_HOME`` defaults to ``~/.hermes`` and is resolved at call time, never cached at
import, so tests and profiles can switch it.
"""

from __future__ import annotations

import contextvars
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml
from pydantic import ValidationError
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from hermes_core.errors import ConfigError, clip
from hermes_core.fsutil import UnsafeFileError, read_regular_bytes, read_regular_text
from hermes_core.yamlsafe import MAX_YAML_NODES, safe_yaml_load

if TYPE_CHECKING:
    from hermes_core.settings.models import HermesSettings

_LOADING_HOME: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "hermes_loading_home", default=None
)

CONFIG_FILE = "config.yaml"
ENV_FILE = ".env"


def resolve_home(home: Path | str | None = None) -> Path:
    """The Hermes home: ``home`` if given, else ``$HERMES_HOME``, else ``~/.hermes``."""
    if home is not None:
        return Path(home).expanduser()
    env = os.environ.get("HERMES_HOME")
    return Path(env).expanduser() if env else Path.home() / ".hermes"


MAX_CONFIG_BYTES = 1_048_576
"""A config.yaml larger than this is refused (it is hand-written settings, not data)."""


def read_config_file(home: Path) -> dict[str, Any]:
    """The parsed ``config.yaml`` (``{}`` when missing). Raises ConfigError naming the file
    when it is not valid YAML, not a mapping, larger than 1 MiB, or an alias bomb; the
    message never echoes more than ~1 KB of the file."""
    path = home / CONFIG_FILE
    if not path.exists():
        return {}
    try:
        text = read_regular_text(path, max_bytes=MAX_CONFIG_BYTES, what="config file")
    except UnsafeFileError as exc:
        raise ConfigError(f"{exc.strerror}. Fix or remove the file.") from exc
    try:
        data = safe_yaml_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError, RecursionError) as exc:
        detail = clip(str(exc) or type(exc).__name__)
        raise ConfigError(f"{path} could not be parsed: {detail}. Fix or remove the file.") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path} must contain a mapping at the top level, not {type(data).__name__}."
        )
    return data


MAX_ENV_BYTES = 1_048_576
"""A ``.env`` larger than this is refused (it holds a few keys, not data)."""


def check_env_file(home: Path) -> None:
    """Raise ConfigError naming ``<home>/.env`` when it exists but is not a regular file of
    at most :data:`MAX_ENV_BYTES` (a FIFO there would hang every command)."""
    path = home / ENV_FILE
    if not path.exists():
        return
    try:
        read_regular_bytes(path, max_bytes=MAX_ENV_BYTES, what="secrets file")
    except UnsafeFileError as exc:
        raise ConfigError(f"{exc.strerror}. Fix or remove the file.") from exc


class HermesBaseSettings(BaseSettings):
    """Base of every settings model read from the Hermes home."""

    model_config = SettingsConfigDict(
        env_prefix="HERMES_",
        env_nested_delimiter="__",
        extra="ignore",
        validate_default=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        home = _LOADING_HOME.get() or resolve_home()
        # config.yaml is read once, checked (regular file, size cap, no alias bomb) and
        # handed to pydantic as data; .env is checked the same way before dotenv opens it
        config = read_config_file(home)
        check_env_file(home)
        return (
            init_settings,
            env_settings,
            DotEnvSettingsSource(settings_cls, env_file=home / ENV_FILE),
            InitSettingsSource(settings_cls, init_kwargs=config),
        )


S = TypeVar("S", bound=HermesBaseSettings)


def format_validation_error(exc: ValidationError, *, prefix: str = "") -> str:
    """One line per problem: ``memory.memory_char_limit: Input should be a valid integer``.

    Secrets in the message or the rejected value (a password inside a URL, an API key) are
    redacted: the text is printed and logged."""
    from hermes_core.security.redaction import redact  # lazy: only needed on an error

    lines = []
    for err in exc.errors():
        loc = ".".join(str(part) for part in err["loc"])
        key = f"{prefix}.{loc}" if prefix and loc else (prefix or loc)
        lines.append(redact(f"{key}: {err['msg']} (got {clip(repr(err.get('input')), 200)})"))
    return "; ".join(lines)


def build_settings(cls: type[S], home: Path | str | None = None, **init: Any) -> S:
    """Instantiate ``cls`` reading from ``home``; invalid values raise ConfigError naming the
    key and where to fix it (config.yaml, .env or the HERMES_* variable)."""
    resolved = resolve_home(home)
    token = _LOADING_HOME.set(resolved)
    try:
        built = cls(**init)
        remember_home_secrets(resolved, init)
        return built
    except ValidationError as exc:
        detail = format_validation_error(exc)
        raise ConfigError(
            f"invalid settings in {resolved / CONFIG_FILE} or HERMES_* environment: {detail}",
            key=detail.split(":", 1)[0],
        ) from exc
    finally:
        _LOADING_HOME.reset(token)


def remember_home_secrets(home: Path, extra: dict[str, Any] | None = None) -> None:
    """Register the secret-bearing settings of ``home`` (config.yaml, ``.env``, the
    environment, ``extra``) with the one output redaction
    (:mod:`hermes_core.security.redaction`), so no command prints them."""
    from hermes_core.security.redaction import remember_secrets, secret_values
    from hermes_core.settings.files import read_env_file

    found: list[str] = secret_values(dict(os.environ))
    found += secret_values(extra or {})
    try:
        found += secret_values(read_config_file(home))
        found += secret_values(read_env_file(home))
    except (ConfigError, OSError, UnicodeDecodeError):
        pass  # the settings load reports these itself
    remember_secrets(found)


def load_settings(home: Path | str | None = None, **init: Any) -> HermesSettings:
    """The root settings for ``home`` (see the module docstring for precedence)."""
    from hermes_core.settings.models import HermesSettings

    return build_settings(HermesSettings, home, **init)


__all__ = [
    "CONFIG_FILE",
    "ENV_FILE",
    "MAX_YAML_NODES",
    "HermesBaseSettings",
    "build_settings",
    "check_env_file",
    "format_validation_error",
    "load_settings",
    "read_config_file",
    "remember_home_secrets",
    "resolve_home",
    "safe_yaml_load",
]
