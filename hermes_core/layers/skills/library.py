"""Finding skills on disk: roots, discovery, the mtime/size manifest.

The local root ``$HERMES_HOME/skills`` comes first and is writable; ``skills.external_dirs``
are read-only extra roots searched after it, so local names win collisions. A skill is a
directory holding ``SKILL.md``; directories above it are categories (nesting allowed,
``DESCRIPTION.md`` describes one). Hidden directories (``.archive``, ``.history``, ``.hub``)
and backup copies (``name.bak-*``, ``name.backup-*``, … see :func:`is_backup_dir`) are
skipped, and symlinked directories are not followed. Broken skills are reported as problems,
never raised; so are skills whose SKILL.md the threat scanner blocks (see :func:`blocked_reason`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hermes_core.fsutil import UnsafeFileError, read_regular_bytes
from hermes_core.layers.skills.model import (
    SKILL_MD_MAX_CHARS,
    SkillDocument,
    SkillMeta,
    SkillValidationError,
    parse_description_md,
    parse_skill_md,
)
from hermes_core.security.scan import scan

SKILL_FILE = "SKILL.md"
CATEGORY_FILE = "DESCRIPTION.md"
DEFAULT_CATEGORY = "general"
SUPPORT_DIRS = ("references", "templates", "scripts", "assets", "examples")
"""Subdirectories listed in ``linked_files``; ``examples`` is readable but not writable."""
WRITABLE_SUPPORT_DIRS = ("references", "templates", "scripts", "assets")


@dataclass(frozen=True, slots=True)
class SkillRoot:
    """A directory holding skills. Only the local root is writable."""

    path: Path
    read_only: bool = False
    label: str = "local"


@dataclass(frozen=True, slots=True)
class Skill:
    """A valid skill found on disk."""

    doc: SkillDocument
    category: str
    directory: Path
    root: SkillRoot

    @property
    def name(self) -> str:
        """The frontmatter ``name``."""
        return self.doc.meta.name

    @property
    def meta(self) -> SkillMeta:
        """The validated frontmatter."""
        return self.doc.meta

    @property
    def skill_md(self) -> Path:
        """Path of the skill's SKILL.md."""
        return self.directory / SKILL_FILE


@dataclass(frozen=True, slots=True)
class SkillProblem:
    """A SKILL.md that could not be loaded, with the reason."""

    path: Path
    error: str


@dataclass(frozen=True, slots=True)
class Library:
    """Every skill of every root. ``skills`` maps name → skill (first root wins)."""

    skills: Mapping[str, Skill] = field(default_factory=dict)
    categories: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[SkillProblem, ...] = ()
    shadowed: tuple[Skill, ...] = ()

    def get(self, name: str) -> Skill | None:
        """The skill called ``name``, or None."""
        return self.skills.get(name)


def local_root(home: Path) -> Path:
    """``$HERMES_HOME/skills``."""
    return home / "skills"


def skill_roots(home: Path, external_dirs: Iterable[str] = ()) -> tuple[SkillRoot, ...]:
    """The local root followed by the external roots (relative paths are taken from home).

    Duplicates (the same resolved directory twice) are dropped.
    """
    roots = [SkillRoot(local_root(home), read_only=False, label="local")]
    seen = {os.path.realpath(roots[0].path)}
    for raw in external_dirs:
        if not raw or not str(raw).strip():
            continue
        path = Path(os.path.expandvars(str(raw))).expanduser()
        if not path.is_absolute():
            path = home / path
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        roots.append(SkillRoot(path, read_only=True, label="external"))
    return tuple(roots)


_BACKUP_DIR = re.compile(
    r"(?i)(?:\.(?:bak|backup|orig|old|save|copy|tmp)(?:[._-].*|\d+)?"
    r"|[_-](?:bak|backup|orig|old|copy)[_-]?\d[\d_.:T-]*|~|\s\(\d+\))$"
)


def is_backup_dir(name: str) -> bool:
    """Directory names that are copies kept by hand or by tools, never skills:
    ``x.bak``, ``x.bak-2024…``, ``x.backup-1``, ``x.orig``, ``x-bak-20240101``, ``x_old_2``,
    ``x~``, ``x (2)`` and hidden directories (``.archive``, ``.history``, ``.hub``). A bare
    ``-backup``/``-old`` suffix is a name (``db-backup``), not a copy."""
    return name.startswith(".") or _BACKUP_DIR.search(name) is not None


def _walk(root: Path) -> Iterator[tuple[Path, list[str], list[str]]]:
    if not root.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not is_backup_dir(d))
        yield Path(dirpath), dirnames, filenames


def iter_tracked_files(roots: Sequence[SkillRoot]) -> Iterator[tuple[SkillRoot, Path]]:
    """Every SKILL.md and category DESCRIPTION.md, in discovery order."""
    for root in roots:
        for dirpath, dirnames, filenames in _walk(root.path):
            if SKILL_FILE in filenames:
                if dirpath != root.path:
                    dirnames[:] = []  # support files below a skill are not skills
                yield root, dirpath / SKILL_FILE
            elif CATEGORY_FILE in filenames and dirpath != root.path:
                yield root, dirpath / CATEGORY_FILE


def manifest(roots: Sequence[SkillRoot]) -> dict[str, list[int]]:
    """``{path: [mtime_ns, size]}`` of every tracked file; any change means a new library."""
    out: dict[str, list[int]] = {}
    for root in roots:
        out[f"root:{root.path}"] = [int(root.path.is_dir()), 0]
    for _root, path in iter_tracked_files(roots):
        try:
            st = path.lstat()
        except OSError:
            continue
        out[str(path)] = [st.st_mtime_ns, st.st_size]
    return out


def read_text_file(path: Path, *, max_chars: int) -> str:
    """Read a UTF-8 text file that is not a symlink. Raises ValueError with a clear reason."""
    if path.is_symlink():
        raise ValueError(f"{path.name} is a symlink; symlinks are not followed.")
    try:
        data = read_regular_bytes(path, max_bytes=max_chars * 4, what="skill file")
    except UnsafeFileError as exc:
        raise ValueError(exc.strerror) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path.name} is not valid UTF-8 ({exc.reason}).") from None
    return text.removeprefix("\ufeff")


def _category_of(root: Path, skill_dir: Path, meta: SkillMeta) -> str:
    relative = skill_dir.parent.relative_to(root).as_posix()
    if relative and relative != ".":
        return relative
    return meta.category or DEFAULT_CATEGORY


_SCAN_CACHE: dict[tuple[str, int, int], str | None] = {}
_SCAN_CACHE_MAX = 4096


def blocked_reason(path: Path, text: str) -> str | None:
    """Why ``text`` (read from ``path``) must not reach the model, or ``None``.

    Skills written through skill_manage or ``hermes-memory skills install`` were scanned on the way
    in; a SKILL.md placed by hand or shipped in ``skills.external_dirs`` was not, and its
    description goes into the frozen system prompt. So every file is scanned (scope
    ``context``) when loaded; results are cached by path, mtime and size.
    """
    try:
        st = path.stat()
        key: tuple[str, int, int] | None = (str(path), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is not None and key in _SCAN_CACHE:
        return _SCAN_CACHE[key]
    result = scan(text, "context")
    reason = (
        None
        if not result.blocked
        else f"blocked by the threat scanner ({', '.join(result.pattern_ids)}): left out of "
        "the skills index and skill_view — remove the injected text, or the file"
    )
    if key is not None:
        if len(_SCAN_CACHE) >= _SCAN_CACHE_MAX:
            _SCAN_CACHE.clear()
        _SCAN_CACHE[key] = reason
    return reason


def load_library(roots: Sequence[SkillRoot]) -> Library:
    """Read and validate every skill of ``roots``. Duplicate names keep the first found."""
    skills: dict[str, Skill] = {}
    categories: dict[str, str] = {}
    problems: list[SkillProblem] = []
    shadowed: list[Skill] = []
    for root, path in iter_tracked_files(roots):
        if path.name == CATEGORY_FILE:
            category = path.parent.relative_to(root.path).as_posix()
            if category not in categories:
                try:
                    categories[category] = parse_description_md(
                        read_text_file(path, max_chars=SKILL_MD_MAX_CHARS)
                    )
                except (OSError, ValueError):
                    categories[category] = ""
            continue
        if path.parent == root.path:
            problems.append(
                SkillProblem(
                    path,
                    f"SKILL.md sits directly in the skills root; move it into "
                    f"{root.path}/<skill-name>/SKILL.md.",
                )
            )
            continue
        try:
            text = read_text_file(path, max_chars=SKILL_MD_MAX_CHARS)
            doc = parse_skill_md(text)
        except SkillValidationError as exc:
            problems.append(SkillProblem(path, str(exc)))
            continue
        except (OSError, ValueError) as exc:
            problems.append(SkillProblem(path, str(exc)))
            continue
        blocked = blocked_reason(path, text)
        if blocked is not None:
            problems.append(SkillProblem(path, blocked))
            continue
        skill = Skill(
            doc=doc,
            category=_category_of(root.path, path.parent, doc.meta),
            directory=path.parent,
            root=root,
        )
        if skill.name in skills:
            shadowed.append(skill)
            continue
        skills[skill.name] = skill
    ordered = dict(sorted(skills.items()))
    return Library(
        skills=ordered,
        categories=dict(sorted(categories.items())),
        problems=tuple(problems),
        shadowed=tuple(shadowed),
    )


def linked_files(skill_dir: Path) -> dict[str, list[str]]:
    """Support files per subdirectory (relative POSIX paths), symlinks and hidden files left
    out. Only non-empty subdirectories appear."""
    out: dict[str, list[str]] = {}
    for sub in SUPPORT_DIRS:
        base = skill_dir / sub
        if not base.is_dir() or base.is_symlink():
            continue
        files: list[str] = []
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                full = Path(dirpath) / name
                if name.startswith(".") or full.is_symlink():
                    continue
                files.append(full.relative_to(skill_dir).as_posix())
        if files:
            out[sub] = files
    return out


__all__ = [
    "CATEGORY_FILE",
    "DEFAULT_CATEGORY",
    "SKILL_FILE",
    "SUPPORT_DIRS",
    "WRITABLE_SUPPORT_DIRS",
    "Library",
    "Skill",
    "SkillProblem",
    "SkillRoot",
    "blocked_reason",
    "is_backup_dir",
    "iter_tracked_files",
    "linked_files",
    "load_library",
    "local_root",
    "manifest",
    "read_text_file",
    "skill_roots",
]
