"""Supermemory as a hermes-core memory provider: memories and documents in per-user
container tags, search, profile, and whole-session ingest."""

from hermes_memory_supermemory.provider import SupermemoryProvider
from hermes_memory_supermemory.settings import SupermemorySettings

__all__ = ["SupermemoryProvider", "SupermemorySettings"]
