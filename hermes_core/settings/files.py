"""Writing ``config.yaml`` and ``.env`` safely (atomic, 0600, validated keys)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from hermes_core.errors import ConfigError, clip
from hermes_core.fsutil import atomic_write_text, file_lock, read_regular_text
from hermes_core.settings.base import (
    CONFIG_FILE,
    ENV_FILE,
    MAX_ENV_BYTES,
    check_env_file,
    read_config_file,
)

_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LINE_SEPARATORS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029\x00"
"""Every character ``str.splitlines`` breaks on (plus NUL): none may reach a ``.env`` line."""
_SEPARATOR_TABLE = dict.fromkeys(map(ord, LINE_SEPARATORS))
ENV_KEY_DENYLIST = frozenset(
    {
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "DYLD_INSERT_LIBRARIES",
        "DYLD_LIBRARY_PATH",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "PATH",
        "HOME",
        "SHELL",
        "HERMES_HOME",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
    }
)


def validate_env_key(key: str) -> str:
    """Return ``key`` if it may be written to ``.env``; raise ConfigError saying why not."""
    if not isinstance(key, str) or not _ENV_KEY.fullmatch(key):
        raise ConfigError(
            f"{clip(key, 200)!r} is not a valid environment variable name (letters, digits and "
            "_, not starting with a digit; no spaces or line breaks).",
            key=clip(key, 200),
        )
    if key.upper() in ENV_KEY_DENYLIST:
        raise ConfigError(
            f"'{key}' may not be set from .env (it changes how programs run).", key=key
        )
    return key


def _clean_env_value(value: str) -> str:
    """One ``.env`` line's value: every line separator removed (CR, LF, VT, FF, U+0085,
    U+2028, U+2029, the C0 separators, NUL), quoted and escaped when needed."""
    cleaned = value.translate(_SEPARATOR_TABLE)
    if any(ch in cleaned for ch in " #\"'$\\`"):
        escaped = cleaned.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    return cleaned


def read_env_file(home: Path) -> dict[str, str]:
    """Key/value pairs of ``$HERMES_HOME/.env`` (comments and blank lines skipped)."""
    path = home / ENV_FILE
    values: dict[str, str] = {}
    if not path.exists():
        return values
    check_env_file(home)
    for raw in read_regular_text(path, max_bytes=MAX_ENV_BYTES, what="secrets file").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip().removeprefix("export ").strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        values[key] = value
    return values


def write_env_values(home: Path, updates: Mapping[str, str]) -> list[str]:
    """Merge ``updates`` into ``$HERMES_HOME/.env`` atomically with mode 0600.

    Every key is validated first (identifier, not in the denylist); every line separator
    (CR, LF, VT, FF, U+0085, U+2028, U+2029…) is stripped from values, so a value can never
    start a new line. Existing lines and comments are kept; updated keys are rewritten in place.
    Returns the keys written. Raises ConfigError before touching the file if any key is bad.
    """
    for key, value in updates.items():
        validate_env_key(key)
        if not isinstance(value, str):
            raise ConfigError(f"the value of {key} must be a string, not {type(value).__name__}.")
    path = home / ENV_FILE
    with file_lock(path):
        check_env_file(home)
        lines = (
            read_regular_text(path, max_bytes=MAX_ENV_BYTES, what="secrets file").splitlines()
            if path.exists()
            else []
        )
        pending = dict(updates)
        out: list[str] = []
        for raw in lines:
            key = raw.split("=", 1)[0].strip().removeprefix("export ").strip()
            if "=" in raw and key in pending:
                out.append(f"{key}={_clean_env_value(pending.pop(key))}")
            else:
                out.append(raw)
        out.extend(f"{key}={_clean_env_value(value)}" for key, value in pending.items())
        atomic_write_text(path, "\n".join(out) + "\n")
    return list(updates)


def set_config_value(home: Path, dotted: str, value: Any) -> dict[str, Any]:
    """Set ``dotted`` (e.g. ``memory.provider``) in ``config.yaml`` atomically, keeping the
    rest of the file. Returns the new document."""
    path = home / CONFIG_FILE
    with file_lock(path):
        data = read_config_file(home)
        node: dict[str, Any] = data
        parts = dotted.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        node[parts[-1]] = value
        atomic_write_text(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return data


__all__ = [
    "ENV_KEY_DENYLIST",
    "read_env_file",
    "set_config_value",
    "validate_env_key",
    "write_env_values",
]
