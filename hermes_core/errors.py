"""Errors a user can see. Each says what happened and what fixes it, and carries the
structured fields a caller may want to inspect (``requested``, ``active``, ``installed``...)."""

from __future__ import annotations

from collections.abc import Sequence

ECHO_LIMIT = 1000
"""At most this many characters of a user-supplied argument appear in an error message."""


def clip(value: object, limit: int = ECHO_LIMIT) -> str:
    """``str(value)`` cut to ``limit`` characters with ``… (N more chars)`` — for echoing an
    argument in an error without putting megabytes into a log or a tool result."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more chars)"


class HermesError(Exception):
    """Base class of every error hermes-core raises on purpose."""


class ConfigError(HermesError):
    """Configuration is invalid; the message names the key and the file or env var."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class PluginError(HermesError):
    """A plugin or provider could not be loaded, activated or called."""


class ProviderConflictError(PluginError):
    """A second, different external memory provider was activated."""

    def __init__(self, requested: str, active: str) -> None:
        self.requested = requested
        self.active = active
        super().__init__(
            f"cannot activate memory provider '{requested}': '{active}' is already the active "
            "external memory provider and only one may be active at a time. Switch with "
            f"`hermes-memory memory use {requested}` or edit memory.provider in config.yaml."
        )


class UnknownProviderError(PluginError):
    """No installed distribution offers the requested provider name. ``hint`` is the
    sentence saying how to install it (the raiser computes it:
    :func:`hermes_core.providers.sources.install_hint`)."""

    def __init__(self, requested: str, installed: Sequence[str], *, hint: str = "") -> None:
        self.requested = requested
        self.installed = tuple(installed)
        self.hint = hint
        listing = ", ".join(self.installed) if self.installed else "none"
        super().__init__(
            f"memory provider '{requested}' is not installed. Installed: {listing}. "
            + (f"{hint} " if hint else "")
            + "`hermes-memory memory list` shows what is installed."
        )


class ProviderLoadError(PluginError):
    """An entry point exists but does not yield a usable MemoryProvider subclass.

    The original exception (import error, validation error) is chained as ``__cause__``.
    """

    def __init__(self, name: str, message: str, *, distribution: str | None = None) -> None:
        self.name = name
        self.distribution = distribution
        super().__init__(message)


class DuplicateProviderError(ProviderLoadError):
    """Two distributions offer the same provider name."""

    def __init__(self, name: str, distributions: Sequence[str]) -> None:
        self.distributions = tuple(distributions)
        super().__init__(
            name,
            f"memory provider '{name}' is offered by more than one distribution: "
            f"{', '.join(self.distributions)}. Uninstall all but one "
            "(`hermes-memory uninstall <distribution>`).",
        )


__all__ = [
    "ConfigError",
    "DuplicateProviderError",
    "HermesError",
    "PluginError",
    "ProviderConflictError",
    "ProviderLoadError",
    "UnknownProviderError",
]
