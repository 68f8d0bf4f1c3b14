"""Hermes Agent compatibility: a sibling of ``agent/`` that calls the Session API, the hook
facade and the provider registry, never a layer.

Bridge modules (issue 14 points 3 and 4): :mod:`.bridge_discovery` finds providers written
for Hermes Agent without importing them, :mod:`.bridge_inbound` runs one under our host,
:mod:`.bridge_outbound` runs one of ours inside Hermes Agent and :mod:`.bridge_install`
writes the plugin directory Hermes Agent loads it from.
"""
