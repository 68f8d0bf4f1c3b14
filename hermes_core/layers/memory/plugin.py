"""The memory layer as a plugin (hook implementations only; logic lives in sibling modules)."""

from __future__ import annotations


class MemoryLayer:
    """Hook implementations of the memory layer. One instance per host."""


def create_plugin() -> MemoryLayer:
    """Called once per plugin manager by :func:`hermes_core.plugins.create_plugin_manager`."""
    return MemoryLayer()
