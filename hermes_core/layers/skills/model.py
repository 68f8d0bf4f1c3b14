"""SKILL.md: parsing and validation of the agentskills.io format.

A SKILL.md is YAML frontmatter between two ``---`` lines followed by a non-empty Markdown body.
:func:`parse_skill_md` returns a :class:`SkillDocument` or raises :class:`SkillValidationError`
whose ``field`` names the offending field and whose ``reason`` says why and how to fix it;
``str(error)`` is ``"<field>: <reason>"``. Parsing never raises anything else, whatever the
input.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from hermes_core.yamlsafe import safe_yaml_load

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
"""Skill and category names: lowercase letters, digits, ``.``, ``_`` and ``-``."""
NAME_MAX = 64
DESCRIPTION_MAX = 1024
SKILL_MD_MAX_CHARS = 100_000
PLATFORMS = ("linux", "macos", "windows")
ENV_VAR_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FRONTMATTER_MAX_CHARS = 20_000
_STRING_LIST_FIELDS = (
    "tags",
    "requires_tools",
    "requires_toolsets",
    "fallback_for_tools",
    "fallback_for_toolsets",
)


class SkillValidationError(ValueError):
    """A SKILL.md (or a skill name) is invalid. ``field`` is the dotted field path."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True, slots=True)
class EnvVarSpec:
    """One entry of ``required_environment_variables``."""

    name: str
    prompt: str = ""
    help: str = ""
    required_for: str = ""


@dataclass(frozen=True, slots=True)
class SkillMeta:
    """The validated frontmatter. ``raw`` keeps every field, including unknown ones."""

    name: str
    description: str
    version: str | None = None
    license: str | None = None
    platforms: tuple[str, ...] = ()
    required_environment_variables: tuple[EnvVarSpec, ...] = ()
    tags: tuple[str, ...] = ()
    category: str | None = None
    requires_tools: tuple[str, ...] = ()
    requires_toolsets: tuple[str, ...] = ()
    fallback_for_tools: tuple[str, ...] = ()
    fallback_for_toolsets: tuple[str, ...] = ()
    pinned: bool = False
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SkillDocument:
    """A parsed SKILL.md: validated frontmatter plus the Markdown body."""

    meta: SkillMeta
    body: str


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def validate_name(value: object, field_name: str = "name") -> str:
    """Return ``value`` if it is a valid skill/category name, else raise naming ``field_name``."""
    if not isinstance(value, str):
        raise SkillValidationError(field_name, f"must be a string, got {_type_name(value)}.")
    if not value:
        raise SkillValidationError(field_name, "must not be empty.")
    if len(value) > NAME_MAX:
        raise SkillValidationError(
            field_name, f"is {len(value)} characters; the limit is {NAME_MAX}."
        )
    if not NAME_RE.match(value):
        raise SkillValidationError(
            field_name,
            f"{value!r} is not allowed; use lowercase letters, digits, '.', '_' and '-', "
            "starting with a letter or digit (regex ^[a-z0-9][a-z0-9._-]*$).",
        )
    return value


def split_frontmatter(text: str) -> tuple[str, str]:
    """Split SKILL.md text into (frontmatter YAML, body). Raises on a missing/unclosed fence."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        raise SkillValidationError(
            "frontmatter",
            "SKILL.md must start with a '---' line that opens the YAML frontmatter.",
        )
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n").rstrip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise SkillValidationError("frontmatter", "the YAML frontmatter is not closed by a '---' line.")


def _as_text(value: object, field_name: str, *, allow_scalar: bool = False) -> str:
    if isinstance(value, str):
        return value
    if allow_scalar and isinstance(value, int | float | _dt.date) and not isinstance(value, bool):
        return str(value)
    raise SkillValidationError(field_name, f"must be a string, got {_type_name(value)}.")


def _string_list(value: object, field_name: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise SkillValidationError(
            field_name, f"must be a list of strings, got {_type_name(value)}."
        )
    items: list[str] = []
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise SkillValidationError(
                f"{field_name}[{index}]", f"must be a non-empty string, got {_type_name(item)}."
            )
        items.append(item.strip())
    return tuple(items)


def _platforms(value: object) -> tuple[str, ...]:
    names = _string_list(value, "platforms")
    for index, name in enumerate(names):
        if name.lower() not in PLATFORMS:
            raise SkillValidationError(
                f"platforms[{index}]",
                f"{name!r} is not a known platform; use {', '.join(PLATFORMS)}.",
            )
    return tuple(name.lower() for name in names)


def _env_vars(value: object) -> tuple[EnvVarSpec, ...]:
    field_name = "required_environment_variables"
    if not isinstance(value, list):
        raise SkillValidationError(field_name, f"must be a list, got {_type_name(value)}.")
    specs: list[EnvVarSpec] = []
    for index, item in enumerate(value):
        where = f"{field_name}[{index}]"
        if isinstance(item, str):
            item = {"name": item}
        if not isinstance(item, dict):
            raise SkillValidationError(
                where, f"must be a mapping with 'name' (or a string), got {_type_name(item)}."
            )
        name = item.get("name")
        if not isinstance(name, str) or not ENV_VAR_RE.match(name):
            raise SkillValidationError(
                f"{where}.name",
                "must be an environment variable name like API_TOKEN "
                "(letters, digits, '_', not starting with a digit).",
            )
        extras = {}
        for key in ("prompt", "help", "required_for"):
            if key in item and item[key] is not None:
                extras[key] = _as_text(item[key], f"{where}.{key}")
        specs.append(EnvVarSpec(name=name, **extras))
    return tuple(specs)


def _hermes_metadata(raw: Mapping[str, Any]) -> dict[str, Any]:
    metadata = raw.get("metadata")
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise SkillValidationError("metadata", f"must be a mapping, got {_type_name(metadata)}.")
    hermes = metadata.get("hermes")
    if hermes is None:
        return {}
    if not isinstance(hermes, dict):
        raise SkillValidationError(
            "metadata.hermes", f"must be a mapping, got {_type_name(hermes)}."
        )
    out: dict[str, Any] = {}
    for key in _STRING_LIST_FIELDS:
        if hermes.get(key) is not None:
            out[key] = _string_list(hermes[key], f"metadata.hermes.{key}")
    if hermes.get("category") is not None:
        category = _as_text(hermes["category"], "metadata.hermes.category")
        for part in category.split("/"):
            validate_name(part, "metadata.hermes.category")
        out["category"] = category
    if hermes.get("pinned") is not None:
        if not isinstance(hermes["pinned"], bool):
            raise SkillValidationError(
                "metadata.hermes.pinned",
                f"must be true or false, got {_type_name(hermes['pinned'])}.",
            )
        out["pinned"] = hermes["pinned"]
    return out


def parse_frontmatter(yaml_text: str) -> dict[str, Any]:
    """Parse frontmatter YAML into a mapping; every failure becomes a SkillValidationError."""
    if len(yaml_text) > _FRONTMATTER_MAX_CHARS:
        raise SkillValidationError(
            "frontmatter",
            f"is {len(yaml_text)} characters; keep it under {_FRONTMATTER_MAX_CHARS} "
            "and move long text into the body.",
        )
    try:
        data = safe_yaml_load(yaml_text)
    except yaml.YAMLError as exc:
        detail = " ".join(str(exc).split())[:300]
        raise SkillValidationError("frontmatter", f"invalid YAML: {detail}") from None
    except Exception as exc:  # yaml can raise ValueError/RecursionError/... on odd input
        raise SkillValidationError("frontmatter", f"invalid YAML: {exc}"[:300]) from None
    if data is None:
        raise SkillValidationError(
            "frontmatter", "is empty; add at least 'name' and 'description'."
        )
    if not isinstance(data, dict):
        raise SkillValidationError(
            "frontmatter", f"must be a YAML mapping of fields, got {_type_name(data)}."
        )
    for key in data:
        if not isinstance(key, str):
            raise SkillValidationError(
                "frontmatter", f"field names must be strings, got {_type_name(key)} {key!r}."
            )
    return data


def validate_meta(raw: Mapping[str, Any]) -> SkillMeta:
    """Validate a parsed frontmatter mapping (the agentskills.io rules)."""
    if "name" not in raw or raw["name"] is None:
        raise SkillValidationError("name", "required field is missing.")
    name = validate_name(raw["name"])
    if "description" not in raw or raw["description"] is None:
        raise SkillValidationError("description", "required field is missing.")
    description = _as_text(raw["description"], "description").strip()
    if not description:
        raise SkillValidationError(
            "description", "must not be empty; say in one line what the skill is for."
        )
    if len(description) > DESCRIPTION_MAX:
        raise SkillValidationError(
            "description",
            f"is {len(description)} characters; the limit is {DESCRIPTION_MAX}. "
            "Move detail into the body.",
        )
    version = raw.get("version")
    license_ = raw.get("license")
    hermes = _hermes_metadata(raw)
    return SkillMeta(
        name=name,
        description=description,
        version=None if version is None else _as_text(version, "version", allow_scalar=True),
        license=None if license_ is None else _as_text(license_, "license"),
        platforms=() if raw.get("platforms") is None else _platforms(raw["platforms"]),
        required_environment_variables=(
            ()
            if raw.get("required_environment_variables") is None
            else _env_vars(raw["required_environment_variables"])
        ),
        tags=hermes.get("tags", ()),
        category=hermes.get("category"),
        requires_tools=hermes.get("requires_tools", ()),
        requires_toolsets=hermes.get("requires_toolsets", ()),
        fallback_for_tools=hermes.get("fallback_for_tools", ()),
        fallback_for_toolsets=hermes.get("fallback_for_toolsets", ()),
        pinned=hermes.get("pinned", False),
        raw=dict(raw),
    )


def parse_skill_md(text: object) -> SkillDocument:
    """Parse and validate SKILL.md text. Raises only :class:`SkillValidationError`."""
    if not isinstance(text, str):
        raise SkillValidationError("content", f"must be a string, got {_type_name(text)}.")
    if len(text) > SKILL_MD_MAX_CHARS:
        raise SkillValidationError(
            "content",
            f"SKILL.md is {len(text)} characters; the limit is {SKILL_MD_MAX_CHARS:,}. "
            "Move detail into references/ files.",
        )
    if "\x00" in text:
        raise SkillValidationError("content", "contains a NUL character; SKILL.md must be text.")
    yaml_text, body = split_frontmatter(text)
    meta = validate_meta(parse_frontmatter(yaml_text))
    if not body.strip():
        raise SkillValidationError(
            "body",
            "SKILL.md has no instructions after the frontmatter; add the procedure "
            "(When to Use / Procedure / Pitfalls / Verification).",
        )
    return SkillDocument(meta=meta, body=body)


def parse_description_md(text: str) -> str:
    """The description of a category ``DESCRIPTION.md``: its frontmatter ``description``, else
    its first non-empty body line (without leading ``#``). Never raises; ``""`` if none."""
    body = text
    try:
        yaml_text, body = split_frontmatter(text)
        data = safe_yaml_load(yaml_text)
        if isinstance(data, dict) and isinstance(data.get("description"), str):
            return " ".join(data["description"].split())[:DESCRIPTION_MAX]
    except Exception:  # a broken DESCRIPTION.md only loses its description
        pass
    for line in body.splitlines():
        stripped = line.strip().lstrip("#").strip()
        if stripped and stripped != "---":
            return stripped[:DESCRIPTION_MAX]
    return ""


__all__ = [
    "DESCRIPTION_MAX",
    "NAME_MAX",
    "NAME_RE",
    "PLATFORMS",
    "SKILL_MD_MAX_CHARS",
    "EnvVarSpec",
    "SkillDocument",
    "SkillMeta",
    "SkillValidationError",
    "parse_description_md",
    "parse_frontmatter",
    "parse_skill_md",
    "split_frontmatter",
    "validate_meta",
    "validate_name",
]
