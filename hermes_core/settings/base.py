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
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from hermes_core.errors import ConfigError, clip

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
MAX_YAML_NODES = 100_000
"""Nodes a YAML document may expand to, aliases counted at every use (alias bombs)."""


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """How many nodes ``root`` stands for once every alias is expanded; stops (returning a
    number over ``limit``) as soon as the count passes it. Shared nodes are sized once, so
    the work is linear in the number of distinct nodes. A node that contains itself counts
    as over the limit."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    active: set[int] = set()
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes and not children_done:
            continue
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        if children_done:
            active.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[key] > limit:
                return sizes[key]
            continue
        if key in active:
            return limit + 1  # recursive alias
        active.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in active:
                return limit + 1
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes.get(id(root), 0)


def safe_yaml_load(text: str, *, max_nodes: int = MAX_YAML_NODES) -> Any:
    """``yaml.safe_load`` that refuses alias bombs and recursive aliases (ValueError) before
    constructing anything: the composed node graph is sized with every alias expanded."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded_size(node, max_nodes)
        if size > max_nodes:
            raise ValueError(
                f"the document expands to more than {max_nodes:,} values through YAML aliases "
                "(&anchor / *alias); remove the aliases or write the values out"
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def read_config_file(home: Path) -> dict[str, Any]:
    """The parsed ``config.yaml`` (``{}`` when missing). Raises ConfigError naming the file
    when it is not valid YAML, not a mapping, larger than 1 MiB, or an alias bomb; the
    message never echoes more than ~1 KB of the file."""
    path = home / CONFIG_FILE
    if not path.exists():
        return {}
    try:
        if not path.is_file():
            raise ConfigError(f"{path} is not a regular file. Replace it with a YAML file.")
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"{path} is {size:,} bytes, larger than {MAX_CONFIG_BYTES:,}: it is not a "
                "settings file. Fix or remove it."
            )
        data = safe_yaml_load(path.read_text(encoding="utf-8-sig"))
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
        read_config_file(home)  # fail with a clear ConfigError before pydantic sees it
        return (
            init_settings,
            env_settings,
            DotEnvSettingsSource(settings_cls, env_file=home / ENV_FILE),
            YamlConfigSettingsSource(settings_cls, yaml_file=home / CONFIG_FILE),
        )


S = TypeVar("S", bound=HermesBaseSettings)


def format_validation_error(exc: ValidationError, *, prefix: str = "") -> str:
    """One line per problem: ``memory.memory_char_limit: Input should be a valid integer``.

    Secrets in the message or the rejected value (a password inside a URL, an API key) are
    redacted: the text is printed and logged."""
    from hermes_core.security.redact import redact  # lazy: only needed on an error

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
        return cls(**init)
    except ValidationError as exc:
        detail = format_validation_error(exc)
        raise ConfigError(
            f"invalid settings in {resolved / CONFIG_FILE} or HERMES_* environment: {detail}",
            key=detail.split(":", 1)[0],
        ) from exc
    finally:
        _LOADING_HOME.reset(token)


def load_settings(home: Path | str | None = None, **init: Any) -> HermesSettings:
    """The root settings for ``home`` (see the module docstring for precedence)."""
    from hermes_core.settings.models import HermesSettings

    return build_settings(HermesSettings, home, **init)


__all__ = [
    "CONFIG_FILE",
    "ENV_FILE",
    "HermesBaseSettings",
    "build_settings",
    "format_validation_error",
    "load_settings",
    "read_config_file",
    "resolve_home",
]
