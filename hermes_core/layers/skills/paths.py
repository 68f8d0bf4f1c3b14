"""Confining model-supplied paths to a skill directory.

:func:`confined_path` accepts only relative POSIX paths without ``..``, ``~`` or backslashes,
whose every existing component below the base is a real directory or file (never a
symlink), and whose resolved location stays inside the base. Anything else raises
:class:`PathRefused` with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

MAX_PATH_CHARS = 1024


class PathRefused(ValueError):
    """A path argument escapes (or could escape) the skill directory."""


def confined_path(
    base: Path, relative: object, *, allowed_top: Sequence[str] | None = None
) -> Path:
    """``base / relative`` after the checks above. ``allowed_top`` restricts the first
    component (e.g. ``references``) and then requires a file below it."""
    if not isinstance(relative, str) or not relative.strip():
        raise PathRefused(
            "file_path must be a non-empty relative path such as references/notes.md."
        )
    if len(relative) > MAX_PATH_CHARS or "\x00" in relative:
        raise PathRefused("file_path is too long or contains a NUL character.")
    if "\\" in relative:
        raise PathRefused(f"file_path {relative!r} contains '\\'; use '/' separators.")
    if relative.startswith(("/", "~")) or PurePosixPath(relative).is_absolute():
        raise PathRefused(
            f"file_path {relative!r} is absolute; give a path relative to the skill directory."
        )
    parts = [part for part in PurePosixPath(relative).parts if part not in ("", ".")]
    if ".." in parts:
        raise PathRefused(
            f"file_path {relative!r} contains '..'; paths must stay inside the skill."
        )
    if not parts:
        raise PathRefused("file_path must name a file inside the skill directory.")
    if allowed_top is not None and (parts[0] not in allowed_top or len(parts) < 2):
        raise PathRefused(
            f"file_path {relative!r} must be a file under one of: "
            + ", ".join(f"{top}/" for top in allowed_top)
            + "."
        )
    current = base
    if base.is_symlink():
        raise PathRefused(f"skill directory {base} is a symlink; refusing to follow it.")
    for part in parts:
        current = current / part
        if current.is_symlink():
            raise PathRefused(
                f"{current.relative_to(base).as_posix()} is a symlink; refusing to follow it."
            )
    real_base = os.path.realpath(base)
    real_target = os.path.realpath(current)
    if os.path.commonpath([real_base, real_target]) != real_base or real_target == real_base:
        raise PathRefused(f"file_path {relative!r} resolves outside the skill directory.")
    return current


__all__ = ["MAX_PATH_CHARS", "PathRefused", "confined_path"]
