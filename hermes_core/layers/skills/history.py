"""Previous versions of local skills: kept before ``patch``, ``edit`` and ``delete``.

A version is a copy of the whole skill directory (SKILL.md and support files) taken just
before the change, in ``$HERMES_HOME/skills/.history/<name>/<number>/`` with ``skill/`` (the
copy) and ``meta.json`` (number, action, origin, time, the skill's directory relative to the
local root). Numbers only grow; at most ``skills.history_versions`` versions are kept per
skill (oldest dropped first; 0 keeps none). The ``.history`` directory is hidden, so it is
never indexed.

:func:`revert` restores a version (default: the newest) into the local root, first keeping
the current state as a version of its own (action ``revert``), so a revert can be reverted.
Callers hold the local root's lock (``SkillManager`` does; :func:`revert` takes it itself).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_core.fsutil import atomic_write_text, ensure_private_dir, file_lock, read_regular_text
from hermes_core.layers.skills.index import invalidate_index_cache
from hermes_core.layers.skills.library import SKILL_FILE, SkillRoot, load_library, read_text_file
from hermes_core.layers.skills.model import (
    SKILL_MD_MAX_CHARS,
    SkillValidationError,
    parse_skill_md,
    validate_name,
)

HISTORY_DIR = ".history"
META_FILE = "meta.json"
COPY_DIR = "skill"
HISTORY_ACTIONS = ("patch", "edit", "delete")


class HistoryError(Exception):
    """A history request cannot be served; the message says why and what to run."""


@dataclass(frozen=True, slots=True)
class Version:
    """One kept version of a skill."""

    name: str
    number: int
    action: str
    created_at: float
    origin: str
    relative: str
    path: Path

    @property
    def skill_md(self) -> Path:
        """The kept SKILL.md."""
        return self.path / COPY_DIR / SKILL_FILE

    def description(self) -> str:
        """The kept SKILL.md's description ("" when unreadable)."""
        try:
            doc = parse_skill_md(read_text_file(self.skill_md, max_chars=SKILL_MD_MAX_CHARS))
        except (OSError, ValueError):
            return ""
        return doc.meta.description


def history_root(local: Path) -> Path:
    """``<local root>/.history``."""
    return local / HISTORY_DIR


def _skill_history(local: Path, name: str) -> Path:
    try:
        validate_name(name)
    except SkillValidationError as exc:
        raise HistoryError(str(exc)) from None
    return history_root(local) / name


def list_versions(local: Path, name: str) -> list[Version]:
    """Kept versions of ``name``, oldest first (unreadable entries skipped)."""
    base = _skill_history(local, name)
    if not base.is_dir() or base.is_symlink():
        return []
    versions: list[Version] = []
    for entry in base.iterdir():
        if not entry.name.isdigit() or entry.is_symlink():
            continue
        try:
            meta = json.loads(read_regular_text(entry / META_FILE, max_bytes=1 << 20))
        except (OSError, ValueError):
            continue
        if not isinstance(meta, dict) or not (entry / COPY_DIR / SKILL_FILE).is_file():
            continue
        versions.append(
            Version(
                name=name,
                number=int(entry.name),
                action=str(meta.get("action", "")),
                created_at=float(meta.get("created_at", 0.0) or 0.0),
                origin=str(meta.get("origin", "")),
                relative=str(meta.get("relative", name)),
                path=entry,
            )
        )
    return sorted(versions, key=lambda v: v.number)


def _prune(local: Path, name: str, keep: int) -> None:
    versions = list_versions(local, name)
    for old in versions[: max(0, len(versions) - keep)]:
        shutil.rmtree(old.path, ignore_errors=True)


def snapshot(
    local: Path, skill_dir: Path, name: str, *, action: str, keep: int, origin: str = ""
) -> Version | None:
    """Copy ``skill_dir`` as the next version of ``name``; None when ``keep`` is 0 or the
    directory is gone. Old versions beyond ``keep`` are dropped."""
    if keep <= 0 or not (skill_dir / SKILL_FILE).is_file():
        return None
    base = ensure_private_dir(_skill_history(local, name))
    existing = [int(p.name) for p in base.iterdir() if p.name.isdigit()]
    number = max(existing, default=0) + 1
    target = base / str(number)
    staging = base / f".tmp-{secrets.token_hex(4)}"
    try:
        shutil.copytree(skill_dir, staging / COPY_DIR, symlinks=True)
        relative = skill_dir.relative_to(local).as_posix()
        meta = {
            "number": number,
            "action": action,
            "origin": origin,
            "created_at": time.time(),
            "relative": relative,
        }
        atomic_write_text(staging / META_FILE, json.dumps(meta, ensure_ascii=False))
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _prune(local, name, keep)
    return next((v for v in list_versions(local, name) if v.number == number), None)


@dataclass(frozen=True, slots=True)
class Reverted:
    """What :func:`revert` did."""

    name: str
    restored: Version
    directory: Path
    kept_current: Version | None


def revert(
    home: Path, local: Path, name: str, number: int | None = None, *, keep: int = 10
) -> Reverted:
    """Restore version ``number`` (default: newest) of ``name`` into the local root."""
    with file_lock(local):
        versions = list_versions(local, name)
        if not versions:
            raise HistoryError(
                f"no kept versions of skill '{name}' — history starts with the first "
                "patch, edit or delete (skills.history_versions > 0)."
            )
        if number is None:
            chosen = versions[-1]
        else:
            match = [v for v in versions if v.number == number]
            if not match:
                raise HistoryError(
                    f"skill '{name}' has no version {number}; kept: "
                    + ", ".join(str(v.number) for v in versions)
                    + f" (see `hermes-memory skills history {name}`)."
                )
            chosen = match[0]
        try:
            doc = parse_skill_md(read_text_file(chosen.skill_md, max_chars=SKILL_MD_MAX_CHARS))
        except (OSError, ValueError) as exc:
            raise HistoryError(
                f"version {chosen.number} of '{name}' is unreadable: {exc}"
            ) from None
        if doc.meta.name != name:
            raise HistoryError(
                f"version {chosen.number} has frontmatter name {doc.meta.name!r}, not {name!r}."
            )
        current = _current_dir(local, name) or local / chosen.relative
        real_local = os.path.realpath(local)
        if os.path.commonpath([real_local, os.path.realpath(current)]) != real_local:
            raise HistoryError(f"{current} is outside the skills root {local}; refusing.")
        kept = snapshot(local, current, name, action="revert", keep=keep + 1)
        ensure_private_dir(current.parent)
        staging = current.parent / f".revert-{secrets.token_hex(4)}"
        try:
            shutil.copytree(chosen.path / COPY_DIR, staging, symlinks=True)
            if current.exists():
                shutil.rmtree(current)
            os.replace(staging, current)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        _prune(local, name, max(keep, 1))
    invalidate_index_cache(home)
    return Reverted(name=name, restored=chosen, directory=current, kept_current=kept)


def _current_dir(local: Path, name: str) -> Path | None:
    """The local directory whose SKILL.md names ``name`` (None when the skill is gone)."""
    skill = load_library([SkillRoot(local)]).get(name)
    return skill.directory if skill is not None else None


def delete_history(local: Path, name: str) -> None:
    """Forget every kept version of ``name``."""
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(_skill_history(local, name))


__all__ = [
    "HISTORY_ACTIONS",
    "HISTORY_DIR",
    "HistoryError",
    "Reverted",
    "Version",
    "delete_history",
    "history_root",
    "list_versions",
    "revert",
    "snapshot",
]
