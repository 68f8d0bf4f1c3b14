"""Helpers of the skills layer tests: data paths, SKILL.md builders, JSON tool calls."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from hermes_core.types import ToolContext

DATA = Path(__file__).parent / "data"
SAMPLE_LIBRARY = DATA / "library"
TASKS = DATA / "tasks.yaml"


def skill_md(
    name: str, description: str = "Does a thing.", body: str | None = None, **fields: Any
) -> str:
    """A SKILL.md text with ``fields`` merged into the frontmatter."""
    front: dict[str, Any] = {"name": name, "description": description, **fields}
    text = yaml.safe_dump(front, allow_unicode=True, sort_keys=False)
    if body is None:
        body = f"## Procedure\n1. Do {name} carefully.\n"
    return f"---\n{text}---\n{body}"


def write_skill(root: Path, name: str, category: str | None = None, **kwargs: Any) -> Path:
    """Write a valid skill under ``root`` and return its directory."""
    directory = root / category / name if category else root / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(skill_md(name, **kwargs), encoding="utf-8")
    return directory


def call(fn: Callable[..., str], ctx: ToolContext | None = None, **args: Any) -> dict[str, Any]:
    """Call a handler and parse its JSON."""
    out = fn(args, ctx)
    assert isinstance(out, str)
    data = json.loads(out)
    assert isinstance(data, dict)
    return data
