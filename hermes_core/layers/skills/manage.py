"""``skill_manage``: create / edit / patch / delete / write_file / remove_file.

Every action is first *planned* (validated, scanned, turned into file operations) without
touching disk; only a complete plan is executed, under ``$HERMES_HOME/skills.lock``. A refused
action (bad arguments, invalid SKILL.md, a path escaping the skill, content blocked by the
threat scanner with scope ``context``) therefore changes nothing. With
``skills.write_approval`` the plan's arguments are staged under
``$HERMES_HOME/pending/skills/<id>.json`` instead; :func:`approve_pending` replays them.
Edits and deletes keep the previous version under ``skills/.archive/`` for rollback.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hermes_core.fsutil import atomic_write_text, ensure_private_dir, file_lock, read_regular_text
from hermes_core.layers.skills.history import HISTORY_ACTIONS, snapshot
from hermes_core.layers.skills.index import invalidate_index_cache
from hermes_core.layers.skills.library import (
    SKILL_FILE,
    WRITABLE_SUPPORT_DIRS,
    Library,
    Skill,
    SkillRoot,
    is_backup_dir,
    linked_files,
    load_library,
    local_root,
)
from hermes_core.layers.skills.model import (
    SKILL_MD_MAX_CHARS,
    SkillValidationError,
    parse_skill_md,
    validate_name,
)
from hermes_core.layers.skills.paths import PathRefused, confined_path
from hermes_core.security.scan import ScanResult, scan

ACTIONS = ("create", "edit", "patch", "delete", "write_file", "remove_file")
SUPPORT_FILE_MAX_CHARS = 100_000
SUPPORT_FILE_MAX_BYTES = 1024 * 1024
PREVIEW_CHARS = 500
ARCHIVE_DIR = ".archive"
PENDING_DIR = Path("pending") / "skills"

Scanner = Callable[[str], ScanResult]


def context_scan(text: str) -> ScanResult:
    """The default scanner: :func:`hermes_core.security.scan.scan` with scope ``context``."""
    return scan(text, "context")


class ManageError(Exception):
    """A refused action. ``extra`` is merged into the JSON error response."""

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra


@dataclass(frozen=True, slots=True)
class FileOp:
    """One step of a plan: write ``text`` to ``path``, remove the file, or archive a directory."""

    kind: Literal["write", "remove", "archive_dir", "archive_file"]
    path: Path
    text: str = ""


@dataclass
class Plan:
    """A validated action, ready to execute."""

    action: str
    name: str
    ops: list[FileOp] = field(default_factory=list)
    message: str = ""
    result: dict[str, Any] = field(default_factory=dict)
    skill_dir: Path | None = None
    """The existing skill directory the plan changes (kept as a version before patch,
    edit and delete)."""


# ---------------------------------------------------------------- argument helpers


def _opt_str(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ManageError(f"'{key}' must be a string, got {type(value).__name__}.")
    return value


def _req_str(args: Mapping[str, Any], key: str, action: str) -> str:
    value = _opt_str(args, key)
    if value is None:
        raise ManageError(f"'{key}' is required for action '{action}'.")
    return value


def _flag(args: Mapping[str, Any], key: str) -> bool:
    value = args.get(key)
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0", "no", ""):
        return False
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ManageError(f"'{key}' must be true or false, got {value!r}."[:200])


def _check_name(value: object, field_name: str = "name") -> str:
    try:
        return validate_name(value, field_name)
    except SkillValidationError as exc:
        raise ManageError(f"Invalid {exc.field}: {exc.reason}") from None


# ---------------------------------------------------------------- matching


def find_spans(text: str, old: str) -> list[tuple[int, int]]:
    """Non-overlapping spans of ``old`` in ``text``: exact matches if any, else matches where
    every run of whitespace (including indentation and line breaks) may differ."""
    spans: list[tuple[int, int]] = []
    start = text.find(old)
    while start != -1:
        spans.append((start, start + len(old)))
        start = text.find(old, start + len(old))
    if spans:
        return spans
    tokens = old.split()
    if not tokens:
        return []
    pattern = re.compile(r"\s+".join(re.escape(token) for token in tokens))
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def apply_patch(text: str, old: str, new: str, *, replace_all: bool, label: str) -> tuple[str, int]:
    """Replace ``old`` with ``new`` in ``text`` (see :func:`find_spans`). Returns the new text
    and the number of replacements. Raises :class:`ManageError` on no match or an ambiguous
    match without ``replace_all``."""
    if not old.strip():
        raise ManageError("'old_string' must contain non-whitespace text to find.")
    spans = find_spans(text, old)
    if not spans:
        raise ManageError(
            f"old_string not found in {label}. Copy the exact text from the file "
            f"(skill_view) and retry. File preview (first {PREVIEW_CHARS} chars):\n"
            + text[:PREVIEW_CHARS],
            preview=text[:PREVIEW_CHARS],
        )
    if len(spans) > 1 and not replace_all:
        raise ManageError(
            f"old_string matches {len(spans)} places in {label}; include more surrounding "
            "text to make it unique, or set replace_all=true.",
            matches=len(spans),
        )
    out = text
    for start, end in reversed(spans):
        out = out[:start] + new + out[end:]
    return out, len(spans)


# ---------------------------------------------------------------- the manager


class SkillManager:
    """Plans and executes ``skill_manage`` actions for one home and its roots."""

    def __init__(
        self,
        home: Path,
        roots: Sequence[SkillRoot],
        *,
        write_approval: bool = False,
        scanner: Scanner = context_scan,
        history_versions: int = 10,
    ) -> None:
        self.home = home
        self.roots = tuple(roots)
        self.write_approval = write_approval
        self.scanner = scanner
        self.history_versions = history_versions

    @property
    def local(self) -> Path:
        """The writable root."""
        return local_root(self.home)

    # -- helpers

    def _scan(self, text: str, what: str) -> None:
        result = self.scanner(text)
        if result.blocked:
            raise ManageError(
                f"{result.message} ({what} was not written; nothing changed.)",
                pattern_ids=list(result.pattern_ids),
                blocked=True,
            )

    def _existing(self, library: Library, name: str) -> Skill:
        skill = library.get(name)
        if skill is None:
            names = list(library.skills)
            raise ManageError(
                f"Skill '{name}' not found. Use skills_list to see the {len(names)} "
                "available skills, or action='create' to make it.",
                available=names[:50],
            )
        return skill

    def _writable(self, skill: Skill) -> Skill:
        if skill.root.read_only:
            raise ManageError(
                f"Skill '{skill.name}' lives in the read-only external directory "
                f"{skill.root.path}; copy it into {self.local} to change it."
            )
        return skill

    def _validated_skill_md(self, content: str, name: str, what: str) -> None:
        try:
            doc = parse_skill_md(content)
        except SkillValidationError as exc:
            raise ManageError(f"{what}: {exc}", field=exc.field) from None
        if doc.meta.name != name:
            raise ManageError(
                f"{what}: name: frontmatter name {doc.meta.name!r} does not match the skill "
                f"name {name!r}; make them equal.",
                field="name",
            )

    def _archive_path(self, name: str, filename: str) -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"-{time.time_ns() % 10**9:09d}"
        return self.local / ARCHIVE_DIR / name / f"{stamp}-{filename}"

    # -- planning

    def plan(self, args: Mapping[str, Any]) -> Plan:
        """Validate ``args`` against the current disk state. Raises :class:`ManageError`."""
        if not isinstance(args, Mapping):
            raise ManageError("Arguments must be a JSON object.")
        action = args.get("action")
        if action not in ACTIONS:
            raise ManageError(
                f"'action' must be one of {', '.join(ACTIONS)}; got {action!r}."[:300]
            )
        name = _check_name(args.get("name"))
        library = load_library(self.roots)
        planner = getattr(self, f"_plan_{action}")
        plan: Plan = planner(args, name, library)
        return plan

    def _plan_create(self, args: Mapping[str, Any], name: str, library: Library) -> Plan:
        content = _req_str(args, "content", "create")
        category = _opt_str(args, "category")
        if category is not None and category != "":
            _check_name(category, "category")
        if is_backup_dir(name):
            raise ManageError(
                f"'{name}' looks like a backup copy (.bak/.backup/.orig/…); such folders are "
                "not indexed as skills. Choose another name."
            )
        existing = library.get(name)
        if existing is not None:
            raise ManageError(f"A skill named '{name}' already exists at {existing.directory}.")
        directory = self.local / category / name if category else self.local / name
        if directory.exists() or directory.is_symlink():
            raise ManageError(f"A skill named '{name}' already exists at {directory}.")
        if category and directory.parent.is_symlink():
            raise ManageError(f"{directory.parent} is a symlink; refusing to write through it.")
        self._validated_skill_md(content, name, "Invalid SKILL.md")
        self._scan(content, "SKILL.md")
        target = directory / SKILL_FILE
        return Plan(
            "create",
            name,
            [FileOp("write", target, content)],
            f"Skill '{name}' created at {directory}.",
            {"path": str(target)},
        )

    def _plan_edit(self, args: Mapping[str, Any], name: str, library: Library) -> Plan:
        content = _req_str(args, "content", "edit")
        skill = self._writable(self._existing(library, name))
        self._check_skill_dir(skill)
        self._validated_skill_md(content, name, "Invalid SKILL.md")
        self._scan(content, "SKILL.md")
        old = read_regular_text(skill.skill_md, max_bytes=SKILL_MD_MAX_CHARS * 4, what="SKILL.md")
        backup = self._archive_path(name, SKILL_FILE)
        return Plan(
            "edit",
            name,
            [FileOp("archive_file", backup, old), FileOp("write", skill.skill_md, content)],
            f"Skill '{name}' rewritten; the previous SKILL.md is kept at {backup}.",
            {"path": str(skill.skill_md), "backup": str(backup)},
            skill_dir=skill.directory,
        )

    def _plan_patch(self, args: Mapping[str, Any], name: str, library: Library) -> Plan:
        old = _req_str(args, "old_string", "patch")
        new = _req_str(args, "new_string", "patch")
        replace_all = _flag(args, "replace_all")
        skill = self._writable(self._existing(library, name))
        self._check_skill_dir(skill)
        file_path = _opt_str(args, "file_path")
        if file_path is None or _names_own_skill_md(file_path, skill):
            target, label = skill.skill_md, SKILL_FILE
        else:
            target = self._support_path(skill, file_path)
            label = file_path
            if not target.is_file():
                raise self._missing_file(skill, file_path)
        try:
            text = read_regular_text(target, max_bytes=SUPPORT_FILE_MAX_BYTES, what=label)
        except (OSError, UnicodeDecodeError) as exc:
            raise ManageError(f"Could not read {label}: {exc}") from None
        patched, count = apply_patch(text, old, new, replace_all=replace_all, label=label)
        if target == skill.skill_md:
            if len(patched) > SKILL_MD_MAX_CHARS:
                raise ManageError(
                    f"Patch would make SKILL.md {len(patched)} characters; the limit is "
                    f"{SKILL_MD_MAX_CHARS:,}. Move detail into references/."
                )
            try:
                doc = parse_skill_md(patched)
            except SkillValidationError as exc:
                raise ManageError(
                    f"Patch would break SKILL.md structure: {exc}", field=exc.field
                ) from None
            if doc.meta.name != name:
                raise ManageError(
                    "Patch would break SKILL.md structure: name: the frontmatter name would "
                    f"change from {name!r} to {doc.meta.name!r}; skills are renamed by "
                    "create + delete."
                )
        else:
            self._check_support_size(patched, label)
        self._scan(patched, label)
        return Plan(
            "patch",
            name,
            [FileOp("write", target, patched)],
            f"Patched {label} of skill '{name}' ({count} replacement{'s' if count != 1 else ''}).",
            {"path": str(target), "replacements": count},
            skill_dir=skill.directory,
        )

    def _plan_delete(self, args: Mapping[str, Any], name: str, library: Library) -> Plan:
        skill = self._writable(self._existing(library, name))
        if skill.meta.pinned:
            raise ManageError(
                f"Skill '{name}' is pinned (metadata.hermes.pinned: true); unpin it first."
            )
        absorbed = args.get("absorbed_into")
        if absorbed is not None and absorbed != "":
            target_name = _check_name(absorbed, "absorbed_into")
            if target_name == name:
                raise ManageError("'absorbed_into' must name a different skill.")
            if library.get(target_name) is None:
                raise ManageError(
                    f"absorbed_into: skill '{target_name}' does not exist; create or name the "
                    "umbrella skill first."
                )
        self._check_skill_dir(skill, deleting=True)
        archive = self._archive_path(name, "skill")
        result: dict[str, Any] = {"path": str(skill.directory), "archived_to": str(archive)}
        if absorbed:
            result["absorbed_into"] = absorbed
        return Plan(
            "delete",
            name,
            [FileOp("archive_dir", skill.directory, str(archive))],
            f"Skill '{name}' deleted (archived at {archive}).",
            result,
            skill_dir=skill.directory,
        )

    def _plan_write_file(self, args: Mapping[str, Any], name: str, library: Library) -> Plan:
        file_path = _req_str(args, "file_path", "write_file")
        content = _req_str(args, "file_content", "write_file")
        skill = self._writable(self._existing(library, name))
        self._check_skill_dir(skill)
        target = self._support_path(skill, file_path)
        if target.is_dir():
            raise ManageError(f"file_path {file_path!r} is a directory; name a file.")
        self._check_support_size(content, file_path)
        self._scan(content, file_path)
        return Plan(
            "write_file",
            name,
            [FileOp("write", target, content)],
            f"Wrote {file_path} in skill '{name}'.",
            {"path": str(target)},
        )

    def _plan_remove_file(self, args: Mapping[str, Any], name: str, library: Library) -> Plan:
        file_path = _req_str(args, "file_path", "remove_file")
        skill = self._writable(self._existing(library, name))
        self._check_skill_dir(skill)
        target = self._support_path(skill, file_path)
        if not target.is_file():
            raise self._missing_file(skill, file_path)
        return Plan(
            "remove_file",
            name,
            [FileOp("remove", target)],
            f"Removed {file_path} from skill '{name}'.",
            {"path": str(target)},
        )

    def _check_skill_dir(self, skill: Skill, *, deleting: bool = False) -> None:
        """The skill directory and every directory between it and its root are real
        directories strictly inside the root. Deleting also refuses a symlinked root."""
        root = skill.root.path
        real_root = os.path.realpath(root)
        if deleting and root.is_symlink():
            raise ManageError(f"Skills root {root} is a symlink; refusing to delete skills there.")
        current = skill.directory
        while True:
            if current.is_symlink():
                raise ManageError(f"{current} is a symlink; refusing to modify it.")
            if current.parent == root or current == current.parent:
                break
            current = current.parent
        real_dir = os.path.realpath(skill.directory)
        if real_dir == real_root or os.path.commonpath([real_root, real_dir]) != real_root:
            raise ManageError(f"{skill.directory} is not strictly inside the skills root {root}.")

    def _support_path(self, skill: Skill, file_path: str) -> Path:
        try:
            return confined_path(skill.directory, file_path, allowed_top=WRITABLE_SUPPORT_DIRS)
        except PathRefused as exc:
            raise ManageError(str(exc)) from None

    def _missing_file(self, skill: Skill, file_path: str) -> ManageError:
        available = [f for files in linked_files(skill.directory).values() for f in files]
        return ManageError(
            f"File '{file_path}' not found in skill '{skill.name}'. Available files: "
            + (", ".join(available) if available else "(none)"),
            available_files=available,
        )

    @staticmethod
    def _check_support_size(content: str, label: str) -> None:
        if len(content) > SUPPORT_FILE_MAX_CHARS:
            raise ManageError(
                f"{label} would be {len(content):,} characters; the limit is "
                f"{SUPPORT_FILE_MAX_CHARS:,}."
            )
        size = len(content.encode("utf-8", "surrogatepass"))
        if size > SUPPORT_FILE_MAX_BYTES:
            raise ManageError(f"{label} would be {size:,} bytes; the limit is 1 MiB.")
        if "\x00" in content:
            raise ManageError(f"{label} contains a NUL character; only text files are supported.")

    # -- execution

    def execute(self, plan: Plan, *, origin: str = "") -> None:
        """Apply ``plan``'s operations in order and clear the index cache. Before a patch,
        edit or delete the skill directory is kept as a version (see history.py)."""
        ensure_private_dir(self.local)
        if plan.action in HISTORY_ACTIONS and plan.skill_dir is not None:
            version = snapshot(
                self.local,
                plan.skill_dir,
                plan.name,
                action=plan.action,
                keep=self.history_versions,
                origin=origin,
            )
            if version is not None:
                plan.result["version_kept"] = version.number
                plan.message += (
                    f" Previous version kept as {version.number} "
                    f"(`hermes-memory skills revert {plan.name} {version.number}`)."
                )
        for op in plan.ops:
            if op.kind in ("write", "archive_file"):
                ensure_private_dir(op.path.parent)
                atomic_write_text(op.path, op.text)
            elif op.kind == "remove":
                op.path.unlink()
                _prune_empty_dirs(op.path.parent, stop_at=op.path.parent.parent)
            elif op.kind == "archive_dir":
                destination = Path(op.text)
                ensure_private_dir(destination.parent)
                shutil.move(str(op.path), str(destination))
                _prune_empty_dirs(op.path.parent, stop_at=self.local)
        invalidate_index_cache(self.home)

    def run(
        self,
        args: Mapping[str, Any],
        *,
        origin: str = "foreground",
        session_id: str = "",
        bypass_approval: bool = False,
    ) -> dict[str, Any]:
        """Plan and execute (or stage) an action. Returns the JSON-ready result; raises
        :class:`ManageError` when refused."""
        with file_lock(self.local):
            plan = self.plan(args)
            if self.write_approval and not bypass_approval:
                pending = stage_pending(self.home, args, origin=origin, session_id=session_id)
                return {
                    "success": True,
                    "staged": True,
                    "pending_id": pending,
                    "message": (
                        f"Skill {plan.action} of '{plan.name}' staged for approval (id {pending}); "
                        "the user reviews it with `hermes-memory skills pending` and "
                        f"`hermes-memory skills approve {pending}`."
                    ),
                }
            self.execute(plan, origin=origin)
        return {
            "success": True,
            "action": plan.action,
            "name": plan.name,
            "message": plan.message,
            **plan.result,
        }


def _names_own_skill_md(file_path: str, skill: Skill) -> bool:
    """``""``, ``SKILL.md``, ``./SKILL.md``, ``<name>/SKILL.md`` or
    ``<category>/<name>/SKILL.md`` (the skill's own category) all name the skill's SKILL.md."""
    path = file_path.strip().replace("\\", "/").removeprefix("./")
    own = {
        "",
        SKILL_FILE,
        f"{skill.name}/{SKILL_FILE}",
        f"{skill.directory.name}/{SKILL_FILE}",
        f"{skill.category}/{skill.directory.name}/{SKILL_FILE}",
    }
    return path in own


def _prune_empty_dirs(start: Path, *, stop_at: Path) -> None:
    current = start
    stop = os.path.realpath(stop_at)
    while os.path.realpath(current) != stop and current != current.parent:
        try:
            current.rmdir()
        except OSError:
            return
        current = current.parent


# ---------------------------------------------------------------- staged writes


def pending_dir(home: Path) -> Path:
    """``$HERMES_HOME/pending/skills``."""
    return home / PENDING_DIR


_KEPT_ARGS = (
    "action",
    "name",
    "content",
    "old_string",
    "new_string",
    "replace_all",
    "category",
    "file_path",
    "file_content",
    "absorbed_into",
)


def stage_pending(
    home: Path, args: Mapping[str, Any], *, origin: str = "foreground", session_id: str = ""
) -> str:
    """Write a pending record for ``args`` and return its id."""
    pending_id = time.strftime("%Y%m%d%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)
    record = {
        "id": pending_id,
        "created_at": time.time(),
        "origin": origin,
        "session_id": session_id,
        "args": {k: args[k] for k in _KEPT_ARGS if k in args},
    }
    directory = ensure_private_dir(pending_dir(home))
    atomic_write_text(
        directory / f"{pending_id}.json", json.dumps(record, ensure_ascii=False, indent=2)
    )
    return pending_id


def list_pending(home: Path) -> list[dict[str, Any]]:
    """Every readable pending record, oldest first (unreadable files are skipped)."""
    directory = pending_dir(home)
    if not directory.is_dir():
        return []
    records: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.json")):
        try:
            data = json.loads(read_regular_text(path, max_bytes=4 << 20))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("args"), dict):
            data.setdefault("id", path.stem)
            records.append(data)
    return records


def _pending_file(home: Path, pending_id: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", pending_id):
        raise ManageError(
            f"'{pending_id}' is not a pending id; see `hermes-memory skills pending`."
        )
    path = pending_dir(home) / f"{pending_id}.json"
    if not path.is_file():
        raise ManageError(
            f"No pending skill write with id '{pending_id}'; see `hermes-memory skills pending`."
        )
    return path


def approve_pending(manager: SkillManager, pending_id: str) -> dict[str, Any]:
    """Replay a staged write (re-validated and re-scanned against the current disk). The
    record is removed when applied; kept when the replay is refused."""
    path = _pending_file(manager.home, pending_id)
    try:
        record = json.loads(read_regular_text(path, max_bytes=4 << 20))
        args = record["args"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ManageError(f"Pending record {path} is unreadable; reject it.") from None
    result = manager.run(args, origin=str(record.get("origin", "")), bypass_approval=True)
    path.unlink(missing_ok=True)
    return result


def reject_pending(home: Path, pending_id: str) -> None:
    """Discard a staged write."""
    _pending_file(home, pending_id).unlink()


__all__ = [
    "ACTIONS",
    "PREVIEW_CHARS",
    "SUPPORT_FILE_MAX_BYTES",
    "SUPPORT_FILE_MAX_CHARS",
    "FileOp",
    "ManageError",
    "Plan",
    "SkillManager",
    "apply_patch",
    "approve_pending",
    "context_scan",
    "find_spans",
    "list_pending",
    "pending_dir",
    "reject_pending",
    "stage_pending",
]
