"""Checks for providers that implement the inspector's capabilities (docs/ui.md).

:func:`forget_and_prove` runs "forget a subject" for one user against a real home and
asserts what a provider author must guarantee: the phrase was in the files before, the
preview found exactly the expected provider memories, the proof is clean and no file below
``roots`` (the home, plus any directory the provider keeps data in) holds its bytes after.
:func:`expire_and_prove` does the same for "expire a memory".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from hermes_core.errors import HermesError
from hermes_core.host import MemoryHost, Session
from hermes_core.inspector import forget
from hermes_core.inspector.provider_memories import list_memories, set_expiry
from hermes_core.providers.inspect import InspectableProvider, inspectable

PHRASE = "Zanzibar"
PHRASE_ZH = "桂林山水"
"""A subject to forget, in English and Chinese (put them in the facts you seed)."""


def add_to_memory(session: Session, fact: str) -> None:
    """Store ``fact`` with the built-in memory tool (a user fact the provider mirrors)."""
    session.call_tool("memory", {"action": "add", "target": "user", "content": fact})


def seed_memories(
    home: Path,
    provider: str,
    facts: Mapping[str, Sequence[str]],
    *,
    config: str = "",
    add: Callable[[Session, str], None] = add_to_memory,
    flush_seconds: float = 30,
) -> Path:
    """Activate ``provider`` in ``home`` (``config.yaml``: ``memory.provider`` plus the
    ``config`` lines, indented under ``memory:``), store each user's ``facts`` in a session
    of theirs through ``add`` (default: the built-in memory tool) and wait for the writes;
    returns ``home``."""
    lines = "".join(f"  {line}\n" for line in config.splitlines() if line.strip())
    (home / "config.yaml").write_text(f"memory:\n  provider: {provider}\n{lines}", encoding="utf-8")
    with MemoryHost.open(home) as host:
        assert host.provider is not None and host.provider.name == provider, host.provider
        for user, texts in facts.items():
            with host.session(user_id=user) as session:
                for fact in texts:
                    add(session, fact)
        host.flush(flush_seconds)
    return home


def file_bytes(*roots: Path) -> bytes:
    """Every regular file's bytes below ``roots`` (symlinks not followed), concatenated."""
    return b"".join(
        p.read_bytes()
        for root in roots
        for p in sorted(Path(root).rglob("*"))
        if p.is_file() and not p.is_symlink()
    )


def forget_and_prove(
    home: Path,
    user_id: str,
    phrase: str,
    *,
    provider_matches: int = 1,
    roots: tuple[Path, ...] = (),
) -> InspectableProvider:
    """Forget ``phrase`` for ``user_id`` in ``home`` and assert the proof (see the module
    docstring); returns the provider (open on a closed host: only for its files' sake)."""
    needle = phrase.encode()
    assert needle in file_bytes(home, *roots), "the phrase should be stored before forgetting"
    with MemoryHost.open(home) as host:
        lister = inspectable(host.provider)
        assert lister is not None, "the active provider cannot list its memories"
        preview = forget.find_subject(host, user_id, phrase)
        assert preview.counts["provider"] == provider_matches, preview.to_dict()
        assert preview.provider_note == ""
        report = forget.forget_subject(host, user_id, phrase)
        assert report.proof.clean, report.proof.to_dict()
        assert not [m for m in lister.inspect_memories(user_id) if phrase in m.text]
    assert needle not in file_bytes(home, *roots), "the phrase's bytes survived the forget"
    return lister


def memories_by_user(home: Path) -> dict[str, list[str]]:
    """``{user: sorted memory texts}`` of the active provider of ``home``."""
    with MemoryHost.open(home) as host:
        lister = inspectable(host.provider)
        assert lister is not None, "the active provider cannot list its memories"
        return {
            u: sorted(m.text for m in lister.inspect_memories(u)) for u in lister.inspect_users()
        }


def forget_user_and_prove(
    home: Path, user_id: str, phrase: str, *, roots: tuple[Path, ...] = ()
) -> int:
    """Forget ``user_id`` entirely, assert that the provider lists nothing of them and that
    a proof for ``phrase`` (one of their memories) is clean; returns the provider's count."""
    with MemoryHost.open(home) as host:
        report = forget.forget_user(host, user_id)
        assert not report.problems, report.problems
        lister = inspectable(host.provider)
        assert lister is not None and user_id not in lister.inspect_users()
        assert forget.prove(host, user_id, phrase).clean
    assert phrase.encode() not in file_bytes(home, *roots)
    return report.removed.get("provider", 0)


def expire_and_prove(home: Path, user_id: str, other: str, phrase: str, question: str) -> None:
    """Expire ``user_id``'s provider memory holding ``phrase`` and assert what an
    :class:`~hermes_core.providers.inspect.ExpiringProvider` must guarantee: it is recalled
    for ``question`` before; ``other`` cannot expire it; expired (yesterday) it stays listed
    with its expiry but leaves recall; a date in the future, or clearing the expiry, brings
    it back."""
    with MemoryHost.open(home) as host:

        def recalled() -> bool:
            with host.session(user_id=user_id) as s:
                return phrase in s.before_turn(question)

        assert recalled(), f"{phrase!r} was not recalled for {question!r} before expiry"
        memory = next(m for m in list_memories(host, user_id).memories if phrase in m.text)
        try:
            set_expiry(host, other, memory.id, "2001-01-01")
        except HermesError as exc:
            assert "no provider memory" in str(exc), exc
        else:
            raise AssertionError(f"{other!r} could expire {user_id!r}'s memory")
        yesterday = time.strftime("%Y-%m-%d", time.localtime(time.time() - 86400))
        set_expiry(host, user_id, memory.id, yesterday)
        listed = next(m for m in list_memories(host, user_id).memories if m.id == memory.id)
        assert listed.expires_at is not None and listed.expires_at < time.time()
        assert not recalled(), f"{phrase!r} was recalled after it expired"
        set_expiry(host, user_id, memory.id, "2099-01-01")
        assert recalled(), f"{phrase!r} was not recalled with an expiry in the future"
        set_expiry(host, user_id, memory.id, "")
        assert recalled(), f"{phrase!r} was not recalled once its expiry was cleared"


__all__ = [
    "PHRASE",
    "PHRASE_ZH",
    "add_to_memory",
    "expire_and_prove",
    "file_bytes",
    "forget_and_prove",
    "forget_user_and_prove",
    "memories_by_user",
    "seed_memories",
]
