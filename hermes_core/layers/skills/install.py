"""Installing a skill from a directory or a zip archive into the local root.

The source must hold exactly one skill: ``SKILL.md`` at its top, or inside a single top-level
directory. Before anything is copied, the SKILL.md is validated, every file is checked
(regular files only, no symlinks, no ``..``/absolute zip members, size limits) and every text
file is scanned with scope ``context``. The copy is staged in a hidden temp directory inside
the local root and renamed into place, so a refused or failed install leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from hermes_core.fsutil import ensure_private_dir, read_regular_bytes, read_regular_text
from hermes_core.layers.skills.index import invalidate_index_cache
from hermes_core.layers.skills.library import SKILL_FILE, SkillRoot, load_library, local_root
from hermes_core.layers.skills.manage import Scanner, context_scan
from hermes_core.layers.skills.model import (
    SKILL_MD_MAX_CHARS,
    SkillDocument,
    SkillValidationError,
    parse_skill_md,
    validate_name,
)

INSTALLED_MARKER = ".installed.json"
"""Left in an installed skill's directory (source, time): ``hermes-memory skills browse``
shows it."""
MAX_FILES = 500
MAX_FILE_BYTES = 1024 * 1024
MAX_TOTAL_BYTES = 20 * 1024 * 1024


class InstallError(Exception):
    """The source cannot be installed; the message says why and how to fix it."""


@dataclass(frozen=True, slots=True)
class Installed:
    """Where a skill was installed."""

    name: str
    directory: Path
    files: int


def _check_tree(base: Path) -> list[Path]:
    files: list[Path] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        for entry in [*dirnames, *filenames]:
            path = Path(dirpath) / entry
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise InstallError(
                    f"{path.relative_to(base)} is a symlink; a skill holds regular files only."
                )
            if entry in filenames and not stat.S_ISREG(mode):
                raise InstallError(f"{path.relative_to(base)} is not a regular file.")
        for name in filenames:
            path = Path(dirpath) / name
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                raise InstallError(
                    f"{path.relative_to(base)} is {size:,} bytes; the limit is 1 MiB."
                )
            total += size
            files.append(path)
    if len(files) > MAX_FILES or total > MAX_TOTAL_BYTES:
        raise InstallError(
            f"the skill has {len(files)} files / {total:,} bytes; too large to install."
        )
    return files


def _skill_dir_of(base: Path) -> Path:
    if (base / SKILL_FILE).is_file():
        return base
    children = [p for p in base.iterdir() if not p.name.startswith((".", "__MACOSX"))]
    if len(children) == 1 and children[0].is_dir() and (children[0] / SKILL_FILE).is_file():
        return children[0]
    raise InstallError(
        f"no {SKILL_FILE} found at the top of {base.name} or in a single top-level directory; "
        "point at the skill directory itself."
    )


def _validate_and_scan(skill_dir: Path, scanner: Scanner) -> SkillDocument:
    files = _check_tree(skill_dir)
    try:
        text = read_regular_text(skill_dir / SKILL_FILE, max_bytes=4 << 20, what="skill file")
        doc = parse_skill_md(text)
    except UnicodeDecodeError:
        raise InstallError(f"{SKILL_FILE} is not valid UTF-8.") from None
    except SkillValidationError as exc:
        raise InstallError(f"invalid {SKILL_FILE}: {exc}") from None
    _scan_files(skill_dir, files, scanner)
    return doc


def check_installable(skill_dir: Path, scanner: Scanner = context_scan) -> None:
    """The file checks and threat scan ``install_skill`` applies to an already valid skill
    (regular files only, size limits, every text file scanned with scope ``context``), so
    ``hermes-memory skills validate`` answers "would this install?". Raises
    :class:`InstallError`."""
    _scan_files(skill_dir, _check_tree(skill_dir), scanner)


def _scan_files(skill_dir: Path, files: list[Path], scanner: Scanner) -> None:
    for path in files:
        try:
            content = read_regular_bytes(path, max_bytes=64 << 20).decode("utf-8")
        except UnicodeDecodeError:
            continue  # binary assets are not prompt text; they are never injected
        result = scanner(content[: SKILL_MD_MAX_CHARS * 10])
        if result.blocked:
            raise InstallError(
                f"{path.relative_to(skill_dir)} blocked by the threat scanner "
                f"({', '.join(result.pattern_ids)}): {result.message}"
            )


_ZIP_UTF8_FLAG = 0x800


def _member_name(info: zipfile.ZipInfo) -> str:
    """The member's real name. Without the UTF-8 flag, :mod:`zipfile` decodes names as
    cp437, which turns the UTF-8 names most zip tools write (``模板.md``) into mojibake;
    those raw bytes are decoded as UTF-8, then GB18030 (zips made on Chinese Windows),
    else left as they were."""
    if info.flag_bits & _ZIP_UTF8_FLAG or info.filename.isascii():
        return info.filename
    try:
        raw = info.filename.encode("cp437")
    except UnicodeEncodeError:
        return info.filename
    for encoding in ("utf-8", "gb18030"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return info.filename


def _extract_zip(archive: Path, into: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            members = zf.infolist()
            if len(members) > MAX_FILES * 2:
                raise InstallError(f"{archive.name} has {len(members)} entries; too many.")
            total = 0
            for info in members:
                name = _member_name(info)
                pure = PurePosixPath(name)
                if (
                    name.startswith(("/", "\\"))
                    or "\\" in name
                    or ".." in pure.parts
                    or ":" in name
                ):
                    raise InstallError(f"zip member {name!r} has an unsafe path; refusing.")
                if stat.S_ISLNK(info.external_attr >> 16):
                    raise InstallError(f"zip member {name!r} is a symlink; refusing.")
                total += info.file_size
                if info.file_size > MAX_FILE_BYTES or total > MAX_TOTAL_BYTES:
                    raise InstallError(f"{archive.name} is too large once extracted.")
            for info in members:
                target = into / _member_name(info)
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    except zipfile.BadZipFile as exc:
        raise InstallError(f"{archive.name} is not a valid zip file ({exc}).") from None


def install_skill(
    source: Path,
    home: Path,
    roots: tuple[SkillRoot, ...],
    *,
    category: str | None = None,
    scanner: Scanner = context_scan,
) -> Installed:
    """Validate, scan and copy ``source`` (directory or .zip) into the local root."""
    if category:
        try:
            for part in category.split("/"):
                validate_name(part, "category")
        except SkillValidationError as exc:
            raise InstallError(str(exc)) from None
    if not source.exists():
        raise InstallError(f"{source} does not exist.")
    local = ensure_private_dir(local_root(home))
    with tempfile.TemporaryDirectory(prefix=".install-", dir=local) as tmp:
        staging = Path(tmp) / "src"
        if source.is_file() and zipfile.is_zipfile(source):
            staging.mkdir()
            _extract_zip(source, staging)
            skill_dir = _skill_dir_of(staging)
        elif source.is_dir():
            skill_dir = _skill_dir_of(source)
            _check_tree(skill_dir)
            shutil.copytree(skill_dir, staging, symlinks=True)
            skill_dir = staging
        else:
            raise InstallError(f"{source} is neither a skill directory nor a zip archive.")
        doc = _validate_and_scan(skill_dir, scanner)
        name = doc.meta.name
        existing = load_library(roots).get(name)
        if existing is not None:
            raise InstallError(
                f"a skill named '{name}' already exists at {existing.directory}; remove it first "
                f"with `hermes-memory skills remove {name}`."
            )
        chosen = category or doc.meta.category
        destination = local / chosen / name if chosen else local / name
        if destination.exists():
            raise InstallError(f"{destination} already exists; remove it first.")
        ensure_private_dir(destination.parent)
        count = sum(1 for p in skill_dir.rglob("*") if p.is_file())
        marker = {"source": str(source), "installed_at": time.time()}
        (skill_dir / INSTALLED_MARKER).write_text(json.dumps(marker), encoding="utf-8")
        os.replace(skill_dir, destination)
    with contextlib.suppress(OSError):
        os.chmod(destination, 0o700)
    invalidate_index_cache(home)
    return Installed(name=name, directory=destination, files=count)


__all__ = ["InstallError", "Installed", "check_installable", "install_skill"]
