"""The review layer as a plugin (hook implementations only; logic lives in sibling modules)."""

from __future__ import annotations


class ReviewLayer:
    """Hook implementations of the review layer. One instance per host."""


def create_plugin() -> ReviewLayer:
    """Called once per plugin manager by :func:`hermes_core.plugins.create_plugin_manager`."""
    return ReviewLayer()
