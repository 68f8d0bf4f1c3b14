"""hermes-core: the memory system of a Hermes-style agent, as a pluggy plugin host.

Public API: the ``hookimpl`` marker, the provider base classes, the Session API
(``MemoryHost``, ``Session``), the hook value types and the errors. Importing this package
does no I/O and loads no plugin. It is cheap: the provider base classes (which need the
settings models, i.e. ``pydantic_settings``) and the Session API load on first attribute
access (:func:`__getattr__`), so ``import hermes_core`` and ``hermes-memory --help`` never import
``pydantic_settings``, ``httpx``, ``numpy`` or ``prompt_toolkit``.
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
    from hermes_core.providers.base import MemoryProvider, ProviderSettings, setup_field

__version__ = "0.1.0"


_LAZY = {
    "MemoryHost": "hermes_core.host",
    "Session": "hermes_core.host",
    "MemoryProvider": "hermes_core.providers.base",
    "ProviderSettings": "hermes_core.providers.base",
    "setup_field": "hermes_core.providers.base",
}
"""Public names loaded on first use: the Session API pulls in the plugin manager, the
provider base classes the settings models (``pydantic_settings``)."""


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is not None:
        import importlib

        value = getattr(importlib.import_module(module_name), name)
        globals()[name] = value  # later lookups skip this function
        return value
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
