"""Forget a subject in the local skills: SKILL.md, support notes and their kept versions.

Skills are the agent's, shared by every user of a home, but their notes can name a person
or a subject. :func:`find_phrase` lists every line of a UTF-8 text file below
``$HERMES_HOME/skills`` (the ``.history`` versions included; external, read-only roots are
never touched) that contains a phrase (case-insensitive, Chinese too); :func:`forget_phrase`
rewrites those files without those lines (atomically) and clears the skills index cache.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hermes_core.fsutil import atomic_write_text

from .index import invalidate_index_cache
from .library import local_root

MAX_NOTE_BYTES = 4 * 1024 * 1024
"""Files larger than this are not read (they are not notes)."""


@dataclass(frozen=True)
class SkillHit:
    """One matching line: the file (relative to the skills root), its 1-based number, text."""

    path: str
    line: int
    text: str

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "text": self.text}


def _text_files(root: Path) -> list[Path]:
    found: list[Path] = []
    if not root.is_dir() or root.is_symlink():
        return found
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file() or path.name.endswith(".lock"):
                continue
            try:
                if path.stat().st_size <= MAX_NOTE_BYTES:
                    found.append(path)
            except OSError:
                continue
    return found


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def find_phrase(home: Path, phrase: str) -> list[SkillHit]:
    """Every line of the local skills' text files that mentions ``phrase``."""
    needle = phrase.casefold()
    root = local_root(home)
    hits: list[SkillHit] = []
    for path in _text_files(root):
        text = _read(path)
        if text is None or needle not in text.casefold():
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if needle in line.casefold():
                hits.append(SkillHit(str(path.relative_to(root)), number, line))
    return hits


def forget_phrase(home: Path, phrase: str) -> list[SkillHit]:
    """Drop every line :func:`find_phrase` finds from its file; returns them."""
    hits = find_phrase(home, phrase)
    needle = phrase.casefold()
    root = local_root(home)
    for relative in sorted({h.path for h in hits}):
        path = root / relative
        text = _read(path)
        if text is None:
            continue
        kept = [line for line in text.splitlines(keepends=True) if needle not in line.casefold()]
        atomic_write_text(path, "".join(kept))
    if hits:
        invalidate_index_cache(home)  # the rendered index on disk goes too
    return hits


__all__ = ["SkillHit", "find_phrase", "forget_phrase"]
