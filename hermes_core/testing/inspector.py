"""Checks for providers that implement the inspector's capabilities (docs/ui.md).

:func:`forget_and_prove` runs "forget a subject" for one user against a real home and
asserts what a provider author must guarantee: the phrase was in the files before, the
preview found exactly the expected provider memories, the proof is clean and no file below
``roots`` (the home, plus any directory the provider keeps data in) holds its bytes after.
"""

from __future__ import annotations

from pathlib import Path

from hermes_core.host import MemoryHost
from hermes_core.inspector import forget
from hermes_core.providers.inspect import InspectableProvider, inspectable


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


__all__ = ["file_bytes", "forget_and_prove"]
