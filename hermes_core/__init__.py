"""hermes-core: the memory system of a Hermes-style agent, as a pluggy plugin host.

Public API: the ``hookimpl`` marker, the provider base classes, the Session API
(``MemoryHost``, ``Session``), the hook value types and the errors. Importing this package
does no I/O and loads no plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_core.errors import (
    ConfigError,
    DuplicateProviderError,
    HermesError,
    PluginError,
    ProviderConflictError,
    ProviderLoadError,
    UnknownProviderError,
)
from hermes_core.markers import hookimpl
from hermes_core.providers.base import MemoryProvider, ProviderSettings, setup_field
from hermes_core.types import (
    ChatMessage,
    CompressionBudget,
    CompressionResult,
    HealthCheck,
    MemoryContext,
    MemoryWrite,
    PromptBlock,
    PromptOrder,
    SessionInfo,
    ToolContext,
    ToolSpec,
    Turn,
)

if TYPE_CHECKING:
    from hermes_core.host import MemoryHost, Session

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # The Session API pulls in the plugin manager; load it on first use only.
    if name in {"MemoryHost", "Session"}:
        from hermes_core import host

        return getattr(host, name)
    raise AttributeError(f"module 'hermes_core' has no attribute {name!r}")


__all__ = [
    "ChatMessage",
    "CompressionBudget",
    "CompressionResult",
    "ConfigError",
    "DuplicateProviderError",
    "HealthCheck",
    "HermesError",
    "MemoryContext",
    "MemoryHost",
    "MemoryProvider",
    "MemoryWrite",
    "PluginError",
    "PromptBlock",
    "PromptOrder",
    "ProviderConflictError",
    "ProviderLoadError",
    "ProviderSettings",
    "Session",
    "SessionInfo",
    "ToolContext",
    "ToolSpec",
    "Turn",
    "UnknownProviderError",
    "__version__",
    "hookimpl",
    "setup_field",
]
