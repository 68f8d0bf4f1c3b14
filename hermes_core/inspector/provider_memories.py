"""One user's provider memories for the page and the CLI: list, filter, expire, forget.

Everything goes through the provider's optional capabilities
(:mod:`hermes_core.providers.inspect`): a provider that cannot list its memories, or keep
expiry dates, gets a :class:`HermesError` saying so instead of a silent no-op.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_core.errors import HermesError
from hermes_core.providers.expiry import parse_date
from hermes_core.providers.inspect import ProviderMemory, expiring, inspectable, is_expired

if TYPE_CHECKING:
    from hermes_core.host import MemoryHost

NO_EXPIRY_NOTE = "this provider keeps no expiry dates (it does not implement ExpiringProvider)"


@dataclass(frozen=True)
class ProviderListing:
    """What :func:`list_memories` found: the provider's name, the user it was asked for,
    the memories (filtered), whether expiry is offered, and why nothing could be listed."""

    provider: str
    user_id: str
    memories: list[ProviderMemory]
    can_expire: bool
    note: str = ""

    def to_dict(self, now: float | None = None) -> dict[str, Any]:
        moment = time.time() if now is None else now
        return {
            "provider": self.provider or None,
            "user_id": self.user_id,
            "can_expire": self.can_expire,
            "note": self.note,
            "memories": [m.to_dict() | {"expired": is_expired(m, moment)} for m in self.memories],
        }


def provider_user(host: MemoryHost, user_id: str | None) -> str:
    """The provider's user for ``user_id`` (its configured default user for no user)."""
    if user_id:
        return user_id
    default = getattr(host.provider.settings, "user_id", "") if host.provider else ""
    return str(default or "")


def list_memories(host: MemoryHost, user_id: str | None, query: str = "") -> ProviderListing:
    """``user_id``'s provider memories whose text contains ``query`` (case-insensitive;
    all of them for ``""``), superseded and expired ones included."""
    provider = host.provider
    if provider is None:
        return ProviderListing("", "", [], False, "no memory provider is active")
    uid = provider_user(host, user_id)
    lister = inspectable(provider)
    if lister is None:
        note = f"provider {provider.name} cannot list its memories"
        return ProviderListing(provider.name, uid, [], False, note)
    needle = query.strip().casefold()
    found = [m for m in lister.inspect_memories(uid) if needle in m.text.casefold()]
    can_expire = expiring(provider) is not None
    return ProviderListing(
        provider.name, uid, found, can_expire, "" if can_expire else NO_EXPIRY_NOTE
    )


def set_expiry(host: MemoryHost, user_id: str | None, memory_id: str, date: str) -> float | None:
    """Give ``user_id``'s provider memory ``memory_id`` an expiry (``YYYY-MM-DD``, the start
    of that day, local time) or clear it (``""``); returns the moment. Raises a
    :class:`HermesError` when the provider cannot, the date is malformed or the user has no
    such memory."""
    moment = parse_date(date)
    provider = host.provider
    keeper = expiring(provider)
    if provider is None or keeper is None:
        name = provider.name if provider else "none"
        raise HermesError(f"the active provider ({name}) keeps no expiry dates")
    if not keeper.inspect_set_expiry(provider_user(host, user_id), memory_id, moment):
        raise HermesError(f"no provider memory {memory_id!r} for this user")
    return moment


def forget_memories(host: MemoryHost, user_id: str | None, memory_ids: list[str]) -> int:
    """Delete these provider memories of ``user_id``; returns how many existed."""
    lister = inspectable(host.provider)
    if lister is None:
        raise HermesError("the active provider cannot delete memories one by one")
    return lister.inspect_forget(provider_user(host, user_id), memory_ids)


__all__ = [
    "NO_EXPIRY_NOTE",
    "ProviderListing",
    "forget_memories",
    "list_memories",
    "provider_user",
    "set_expiry",
]
