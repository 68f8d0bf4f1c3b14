"""The sessions layer as a plugin (hook implementations only; logic lives in sibling modules)."""

from __future__ import annotations


class SessionsLayer:
    """Hook implementations of the sessions layer. One instance per host."""


def create_plugin() -> SessionsLayer:
    """Called once per plugin manager by :func:`hermes_core.plugins.create_plugin_manager`."""
    return SessionsLayer()
