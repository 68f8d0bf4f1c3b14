"""Fixtures of the skills layer tests: a home, a service over it, a tool context."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core.layers.skills.tools import SkillsService
from hermes_core.settings.base import load_settings
from hermes_core.types import SessionInfo, ToolContext


@pytest.fixture
def home(hermes_home: Path) -> Path:
    """The Hermes home, with an empty local skills root."""
    (hermes_home / "skills").mkdir()
    return hermes_home


@pytest.fixture
def make_service(home: Path) -> Callable[..., SkillsService]:
    """``make_service(**skills_settings)`` → a SkillsService over ``home``."""

    def make(
        tools: tuple[str, ...] | None = ("memory", "skills_list", "skill_view", "skill_manage"),
        toolsets: tuple[str, ...] | None = ("memory", "skills"),
        **skills: Any,
    ) -> SkillsService:
        settings = load_settings(home, skills=skills) if skills else load_settings(home)
        return SkillsService(home, settings.skills, tools, toolsets)

    return make


@pytest.fixture
def service(make_service: Callable[..., SkillsService]) -> SkillsService:
    return make_service()


@pytest.fixture
def ctx(home: Path) -> ToolContext:
    return ToolContext(session=SessionInfo(id="s1", home=home, settings=load_settings(home)))
