"""``required_environment_variables``: which are missing, and storing them.

A variable counts as set when it is non-empty in the process environment or in
``$HERMES_HOME/.env``. Reports carry names and the skill's own ``prompt``/``help``/
``required_for`` texts, never values. :func:`store_env_values` writes through the settings'
safe ``.env`` writer (validated keys, atomic, 0600) and exports the values to this process
so a running agent can use them at once. ``HERMES_*`` names are refused (they are settings),
as are the names the ``.env`` writer refuses (``PATH``, ``LD_PRELOAD``, …).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hermes_core.errors import ConfigError
from hermes_core.layers.skills.model import EnvVarSpec, SkillMeta
from hermes_core.settings.files import read_env_file, write_env_values

RESERVED_PREFIX = "HERMES_"
"""Variables a skill may never have written for it: they would change hermes' own settings
(a skill asking for ``HERMES_LLM__BASE_URL`` could redirect the model traffic)."""


def present_env_names(home: Path, names: Iterable[str] | None = None) -> frozenset[str]:
    """Names (of ``names``, or all) with a non-empty value in the environment or ``.env``."""
    try:
        dotenv = read_env_file(home)
    except (OSError, UnicodeDecodeError):
        dotenv = {}
    found = {k for k, v in os.environ.items() if v} | {k for k, v in dotenv.items() if v}
    return frozenset(found if names is None else found & set(names))


def missing_env(meta: SkillMeta, present: Iterable[str]) -> list[EnvVarSpec]:
    """The skill's required variables that are not in ``present``, in declared order."""
    have = set(present)
    return [spec for spec in meta.required_environment_variables if spec.name not in have]


def describe(spec: EnvVarSpec) -> dict[str, Any]:
    """JSON-ready description of a variable (name and texts; never a value)."""
    out: dict[str, Any] = {"name": spec.name}
    for key in ("prompt", "help", "required_for"):
        value = getattr(spec, key)
        if value:
            out[key] = value
    return out


def setup_hint(skill_name: str, missing: Iterable[EnvVarSpec]) -> str:
    """One line telling the user how to set ``missing`` (for tools and the index)."""
    names = ", ".join(spec.name for spec in missing)
    return (
        f"Not set: {names}. Ask the user to run `hermes-memory skills env {skill_name}` (stores "
        f"them "
        "in $HERMES_HOME/.env); never ask them to paste a secret into the chat."
    )


def store_env_values(home: Path, values: Mapping[str, str]) -> list[str]:
    """Write non-empty ``values`` to ``$HERMES_HOME/.env`` and this process's environment.
    Raises :class:`hermes_core.errors.ConfigError` for a refused key before writing."""
    updates = {k: v for k, v in values.items() if v}
    for key in updates:
        if key.upper().startswith(RESERVED_PREFIX):
            raise ConfigError(
                f"'{key}' is a hermes setting, not a skill key; a skill may not set it. "
                "Change settings in config.yaml instead.",
                key=key,
            )
    if not updates:
        return []
    written = write_env_values(home, updates)
    for key in written:
        os.environ[key] = updates[key]
    return written


__all__ = ["describe", "missing_env", "present_env_names", "setup_hint", "store_env_values"]
