"""pluggy markers for the ``hermes`` project.

Plugins decorate hook implementations with :data:`hookimpl` (re-exported as
``hermes_core.hookimpl``); only :mod:`hermes_core.hookspecs` uses :data:`hookspec`.
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "hermes"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]
