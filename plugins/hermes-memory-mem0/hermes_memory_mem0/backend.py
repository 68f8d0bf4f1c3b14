"""The one interface the provider talks to, whatever the mode (oss, host, platform).

Every method is scoped: reads take a ``user_id`` and only return that user's memories;
``get`` returns the owner so callers can refuse cross-user updates and deletes.
Errors are the frame's typed service errors, so the circuit breaker can tell "the service is
down" from "you asked for something that does not exist" (:class:`Mem0NotFound`,
:class:`Mem0Invalid` never trip it). The remote modes raise the
:class:`~hermes_core.providers.service.ServiceClient`'s errors themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hermes_core.providers.service import ServiceError, ServiceNotFound, ServiceRequestError


class Mem0Error(ServiceError):
    """A backend call failed (network, server error, library error). A
    :class:`~hermes_core.providers.service.ServiceError`: it counts on the breaker."""

    def __init__(self, message: str, **kwargs: Any) -> None:
        kwargs.setdefault("service", "Mem0")
        super().__init__(message, **kwargs)


class Mem0NotFound(Mem0Error, ServiceNotFound):
    """The memory does not exist (HTTP 404, unknown id). Not a service failure."""


class Mem0Invalid(Mem0Error, ServiceRequestError):
    """The request was rejected as invalid (HTTP 400/422, validation). Not a service failure."""


class Mem0LLMError(Mem0Error):
    """The extraction LLM failed (``infer=True``); the oss backend then stores verbatim."""


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One memory as every backend reports it."""

    id: str
    memory: str
    user_id: str | None = None
    score: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    event: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "memory": self.memory}
        if self.score is not None:
            out["score"] = round(float(self.score), 4)
        if self.event:
            out["event"] = self.event
        return out


class Backend(Protocol):
    """What each mode implements. All calls may raise :class:`Mem0Error` subclasses."""

    def add(self, request: AddRequest) -> list[MemoryItem]: ...

    def search(self, query: str, *, user_id: str, top_k: int) -> list[MemoryItem]: ...

    def get(self, memory_id: str) -> MemoryItem | None: ...

    def list(self, *, user_id: str, limit: int) -> list[MemoryItem]: ...

    def update(self, memory_id: str, text: str) -> None: ...

    def delete(self, memory_id: str) -> None: ...

    def close(self) -> None: ...


def item_from(raw: Mapping[str, Any], *, event: str | None = None) -> MemoryItem | None:
    """Normalise one memory dict of any mem0 flavour (``memory`` or ``data.memory``,
    ids at top level or in ``metadata``). ``None`` when it carries no id."""
    mem_id = raw.get("id")
    if mem_id is None:
        return None
    text = raw.get("memory")
    if text is None and isinstance(raw.get("data"), Mapping):
        text = raw["data"].get("memory")
    metadata = raw.get("metadata") if isinstance(raw.get("metadata"), Mapping) else {}
    user_id = raw.get("user_id")
    if user_id is None and isinstance(metadata, Mapping):
        user_id = metadata.get("user_id")
    score = raw.get("score")
    return MemoryItem(
        id=str(mem_id),
        memory=str(text or ""),
        user_id=str(user_id) if user_id is not None else None,
        score=float(score) if isinstance(score, int | float) else None,
        metadata=dict(metadata or {}),
        event=event or (str(raw["event"]) if raw.get("event") else None),
    )


def owned_by(
    items: Sequence[MemoryItem], user_id: str, limit: int | None = None
) -> list[MemoryItem]:
    """Items of ``user_id`` only (items whose owner the backend did not report are kept), at
    most ``limit``. Every backend applies it on top of its own user filter, so a backend that
    ignores the filter still cannot leak another user's memories."""
    own = [item for item in items if item.user_id in (None, user_id)]
    return own if limit is None else own[:limit]


@dataclass(frozen=True)
class AddRequest:
    """One add: ``messages`` of ``user_id`` written by ``agent_id`` with ``metadata``;
    ``infer``: mem0's LLM extracts facts from them (else they are stored verbatim)."""

    messages: Sequence[Mapping[str, str]]
    user_id: str
    agent_id: str
    metadata: Mapping[str, Any]
    infer: bool

    def body(self) -> dict[str, Any]:
        """The JSON body of the add, the same for the self-hosted server and the Platform
        (and the keyword arguments of the in-process ``Memory.add`` but ``messages``)."""
        return {
            "messages": [dict(m) for m in self.messages],
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "metadata": dict(self.metadata),
            "infer": self.infer,
        }


def items_from(payload: Any) -> list[MemoryItem]:
    """Normalise a list response: a bare list, ``{"results": [...]}`` or ``{"memories": ...}``."""
    rows: Any = payload
    if isinstance(payload, Mapping):
        rows = payload.get("results", payload.get("memories", []))
    if not isinstance(rows, list):
        return []
    out = []
    for row in rows:
        if isinstance(row, Mapping):
            item = item_from(row)
            if item is not None:
                out.append(item)
    return out


__all__ = [
    "Backend",
    "Mem0Error",
    "Mem0Invalid",
    "Mem0LLMError",
    "Mem0NotFound",
    "MemoryItem",
    "item_from",
    "items_from",
]
