"""hermes-memory-mem0: mem0 (mem0ai) as a Hermes memory provider.

Modes: ``oss`` (in-process ``mem0.Memory``, local chroma + bundled multilingual embedder,
offline), ``host`` (self-hosted mem0 REST server) and ``platform`` (Mem0 Platform API).
Importing this package does not import mem0.
"""

from __future__ import annotations

from hermes_memory_mem0.provider import Mem0Provider
from hermes_memory_mem0.settings import Mem0Settings

__version__ = "0.1.0"

__all__ = ["Mem0Provider", "Mem0Settings", "__version__"]
