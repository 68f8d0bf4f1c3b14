"""The compression layer as a plugin (hook implementations only; logic lives in sibling modules)."""

from __future__ import annotations


class CompressionLayer:
    """Hook implementations of the compression layer. One instance per host."""


def create_plugin() -> CompressionLayer:
    """Called once per plugin manager by :func:`hermes_core.plugins.create_plugin_manager`."""
    return CompressionLayer()
