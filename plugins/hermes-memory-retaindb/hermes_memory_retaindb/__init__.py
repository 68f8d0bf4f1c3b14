"""RetainDB as a hermes-core memory provider."""

from hermes_memory_retaindb.provider import RetainDBProvider
from hermes_memory_retaindb.settings import RetainDBSettings

__all__ = ["RetainDBProvider", "RetainDBSettings"]
