"""Honcho (Plastic Labs) as a hermes-core memory provider: peers and sessions in a
workspace, the dialectic over a peer's representation, context for a session."""

from hermes_memory_honcho.provider import HonchoProvider
from hermes_memory_honcho.settings import HonchoSettings

__all__ = ["HonchoProvider", "HonchoSettings"]
