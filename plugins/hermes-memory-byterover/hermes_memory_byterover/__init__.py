"""hermes-memory-byterover: ByteRover as a Hermes memory provider, through its ``brv``
command-line tool (npm package ``byterover-cli``), one knowledge tree per user. Each brv call
is a subprocess with a timeout behind a circuit breaker.
"""

from __future__ import annotations

from hermes_memory_byterover.provider import ByteRoverProvider
from hermes_memory_byterover.settings import ByteRoverSettings

__version__ = "0.1.0"

__all__ = ["ByteRoverProvider", "ByteRoverSettings", "__version__"]
