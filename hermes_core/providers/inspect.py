"""What a provider that can list its memories offers the inspector (``hermes-memory ui``, forget).

A provider opts in by implementing :class:`InspectableProvider` (plain methods, no hook):
the users it holds memories for, one user's memories (superseded ones included, with what
replaced them and when) and deletion by id or of a whole user. Providers that cannot list
what they store (remote services without a listing API) simply do not implement it; the
inspector then says so instead of pretending to have searched them.

A provider whose listing depends on its configuration (mem0: the local mode only) may offer
``inspect_supported()`` (no arguments): when it answers False, :func:`inspectable` and
:func:`expiring` treat the provider as one without the capabilities.

A provider may also offer ``inspect_compact()`` (no arguments): called before a forget
proof's raw byte search, to rewrite its own files so deleted memories leave no bytes behind
(chroma zeroes the unused capacity of its vector index files there), and
``inspect_paths()`` (no arguments): directories outside ``$HERMES_HOME`` where it keeps
data (mem0: ``MEM0_DIR``), which the proof's raw byte search covers as well.

Expiry is a second, optional capability: a provider that implements
:class:`ExpiringProvider` as well lets a user give one memory an expiry date (the page and
``hermes-memory memory provider-expire``); its ``prefetch`` must then leave expired memories out
(:func:`hermes_core.providers.expiry.drop_expired` over the dates of
:class:`~hermes_core.providers.expiry.ExpiryLedger`) and its ``inspect_memories`` fills
``ProviderMemory.expires_at``. A provider without it is shown as "keeps no expiry dates".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class ProviderMemory:
    """One memory as a provider stores it. ``superseded_by`` names the memory that replaced
    it (``""``: current) and ``replaced_at`` when; ``expires_at`` is an expiry (epoch
    seconds) when the provider keeps one."""

    id: str
    text: str
    created_at: float = 0.0
    kind: str = ""
    source: str = ""
    session_id: str = ""
    superseded_by: str = ""
    replaced_at: float | None = None
    expires_at: float | None = None

    @property
    def active(self) -> bool:
        return not self.superseded_by

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "created_at": self.created_at,
            "kind": self.kind,
            "source": self.source,
            "session_id": self.session_id,
            "superseded_by": self.superseded_by or None,
            "replaced_at": self.replaced_at,
            "expires_at": self.expires_at,
        }


@runtime_checkable
class InspectableProvider(Protocol):
    """A provider whose memories can be listed and deleted one by one (chroma, …)."""

    def inspect_users(self) -> list[str]:
        """User ids that have memories."""
        ...

    def inspect_memories(self, user_id: str) -> list[ProviderMemory]:
        """Every memory of ``user_id``, superseded ones included, newest first."""
        ...

    def inspect_forget(self, user_id: str, memory_ids: Sequence[str]) -> int:
        """Delete these memories of ``user_id`` everywhere the provider keeps them (indexes
        and histories too); returns how many existed."""
        ...

    def inspect_forget_user(self, user_id: str) -> int:
        """Delete everything of ``user_id``; returns how many memories went."""
        ...


@runtime_checkable
class ExpiringProvider(Protocol):
    """A provider whose memories can carry an expiry date (chroma, holographic, mem0 local).
    Expired memories stay listed (``expires_at`` in the past) but leave recall."""

    def inspect_set_expiry(self, user_id: str, memory_id: str, expires_at: float | None) -> bool:
        """Give ``user_id``'s memory ``memory_id`` an expiry (epoch seconds) or clear it
        (``None``); False when the user has no such memory (nothing is recorded then)."""
        ...


def inspectable(provider: object) -> InspectableProvider | None:
    """``provider`` when it implements :class:`InspectableProvider` (and does not answer
    False from ``inspect_supported()``), else ``None``."""
    if not isinstance(provider, InspectableProvider):
        return None
    supported = getattr(provider, "inspect_supported", None)
    return None if callable(supported) and not supported() else provider


def expiring(provider: object) -> ExpiringProvider | None:
    """``provider`` when it can list its memories and keep expiry dates, else ``None``."""
    if inspectable(provider) is not None and isinstance(provider, ExpiringProvider):
        return provider
    return None


def is_expired(memory: ProviderMemory, now: float) -> bool:
    """Whether ``memory`` carries an expiry that has passed at ``now``."""
    return memory.expires_at is not None and memory.expires_at <= now


__all__ = [
    "ExpiringProvider",
    "InspectableProvider",
    "ProviderMemory",
    "expiring",
    "inspectable",
    "is_expired",
]
