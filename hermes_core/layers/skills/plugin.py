"""The skills layer as a plugin (hook implementations only; logic lives in sibling modules)."""

from __future__ import annotations


class SkillsLayer:
    """Hook implementations of the skills layer. One instance per host."""


def create_plugin() -> SkillsLayer:
    """Called once per plugin manager by :func:`hermes_core.plugins.create_plugin_manager`."""
    return SkillsLayer()
