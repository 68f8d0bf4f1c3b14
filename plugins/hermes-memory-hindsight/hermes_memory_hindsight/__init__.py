"""Hindsight (Vectorize) as a hermes-core memory provider."""

from hermes_memory_hindsight.provider import HindsightProvider
from hermes_memory_hindsight.settings import HindsightSettings

__all__ = ["HindsightProvider", "HindsightSettings"]
