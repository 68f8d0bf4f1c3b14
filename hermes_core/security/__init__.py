"""Shared security helpers.

Import from the submodules, e.g. ``from hermes_core.security.scan import scan, ScanResult``
(the package deliberately re-exports nothing, so ``hermes_core.security.scan`` always names the
module, never the function).
"""
