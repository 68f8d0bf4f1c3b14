"""hermes-memory-openviking: the OpenViking context database (Volcengine) as a Hermes memory
provider. Memories and resources live under ``viking://`` per account and user; the server
extracts memories from committed sessions. Importing this package does not import httpx.
"""

from __future__ import annotations

from hermes_memory_openviking.provider import OpenVikingProvider
from hermes_memory_openviking.settings import OpenVikingSettings

__version__ = "0.1.0"

__all__ = ["OpenVikingProvider", "OpenVikingSettings", "__version__"]
