"""What the ``hermes-memory skills`` listings show, as typed functions the CLI calls and
prints (the CLI only parses and prints): the skill list with index status and usage counts,
ranked matches, a validation report, pending-write details and ids, kept versions.

Contract: rows are plain JSON-ready dicts (the ``--json`` output prints them as they are); no
function here prints or prompts. Paths are strings.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.layers.skills.find import SkillStatsStore
from hermes_core.layers.skills.history import list_versions
from hermes_core.layers.skills.index import hidden_reason
from hermes_core.layers.skills.install import InstallError, check_installable
from hermes_core.layers.skills.library import Skill, SkillRoot, load_library, local_root
from hermes_core.layers.skills.manage import list_pending
from hermes_core.layers.skills.tools import SkillsService


def hidden_by(service: SkillsService, skill: Skill) -> str | None:
    """Why ``service``'s prompt index leaves ``skill`` out (platform, disabled, missing
    tools), or None when it is shown."""
    return hidden_reason(
        skill,
        platform=service.platform,
        disabled=service.settings.disabled,
        available_tools=service.available_tools,
        available_toolsets=service.available_toolsets,
    )


def skill_status(service: SkillsService, skill: Skill) -> str:
    """``shown`` when the skill is in the prompt index, else ``hidden: <reason>``."""
    reason = hidden_by(service, skill)
    return "shown" if reason is None else f"hidden: {reason}"


@dataclass(frozen=True, slots=True)
class SkillListing:
    """``skills list``: one row per skill (name, category, description, source, status,
    views, successes, failures, path), sorted by category then name, and the files that
    could not be read as skills (``path``, ``error``)."""

    rows: list[dict[str, Any]]
    problems: list[dict[str, str]]


def in_category(category: str, wanted: str | None) -> bool:
    """True when ``category`` is ``wanted`` or below it (``wanted`` None: every category)."""
    return not wanted or category == wanted or category.startswith(wanted + "/")


def list_skills(service: SkillsService, category: str | None = None) -> SkillListing:
    """Every skill of ``service``'s roots (of ``category`` and its subcategories when given)
    with its index status and usage counts (see :class:`SkillListing`)."""
    library = service.library()
    stats = SkillStatsStore(service.home).stats_or_empty()
    rows: list[dict[str, Any]] = []
    for skill in sorted(library.skills.values(), key=lambda s: (s.category, s.name)):
        if not in_category(skill.category, category):
            continue
        record = stats.get(skill.name)
        rows.append(
            {
                "name": skill.name,
                "category": skill.category,
                "description": skill.meta.description,
                "source": skill.root.label,
                "status": skill_status(service, skill),
                "views": record.views if record else 0,
                "successes": record.successes if record else 0,
                "failures": record.failures if record else 0,
                "path": str(skill.directory),
            }
        )
    problems = [{"path": str(p.path), "error": p.error} for p in library.problems]
    return SkillListing(rows, problems)


def find_rows(service: SkillsService, query: str, limit: int) -> tuple[list[dict[str, Any]], str]:
    """Visible skills ranked for ``query`` (what ``skills_find`` returns) as rows (name,
    category, score, relevance, success_rate rounded to 3 places, description), and the
    matching mode used."""
    ranked, mode = service.find(query, limit)
    rows: list[dict[str, Any]] = [
        {
            "name": r.skill.name,
            "category": r.skill.category,
            "score": r.score,
            "relevance": r.relevance,
            "success_rate": round(r.stats.success_rate, 3),
            "description": r.skill.meta.description,
        }
        for r in ranked
    ]
    return rows, mode


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """``skills validate``: skills that would install (``name``, ``path`` of SKILL.md),
    files that are not valid skills, and valid skills ``install`` would refuse (symlinks,
    size, threat scan), each as ``path`` and ``error``."""

    valid: list[dict[str, str]] = field(default_factory=list)
    problems: list[dict[str, str]] = field(default_factory=list)
    refused: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing is invalid or refused."""
        return not self.problems and not self.refused

    @property
    def empty(self) -> bool:
        """True when no SKILL.md was found at all."""
        return not self.valid and self.ok


def _validate_targets(
    path: Path | None, service: SkillsService
) -> tuple[list[SkillRoot], Path | None]:
    """Roots to scan, and the single skill directory when ``path`` names one skill."""
    if path is None:
        return list(service.roots), None
    if path.is_file():
        path = path.parent
    if (path / "SKILL.md").exists():
        return [SkillRoot(path.parent, read_only=True, label="path")], path
    return [SkillRoot(path, read_only=True, label="path")], None


def validate_skills(service: SkillsService, path: Path | None = None) -> ValidationReport:
    """Validate one skill (``path`` is its directory or a file in it), a directory of
    skills, or (``path`` None) every root of ``service``; a valid skill counts only when
    ``install`` would take it too."""
    roots, single = _validate_targets(path, service)
    library = load_library(roots)
    found = list(library.skills.values()) + list(library.shadowed)
    problems = list(library.problems)
    if single is not None:
        found = [s for s in found if s.directory == single]
        problems = [p for p in problems if p.path.parent == single]
    report = ValidationReport(problems=[{"path": str(p.path), "error": p.error} for p in problems])
    for skill in found:
        try:
            check_installable(skill.directory)
        except InstallError as exc:
            report.refused.append({"path": str(skill.skill_md), "error": str(exc)})
            continue
        report.valid.append({"name": skill.name, "path": str(skill.skill_md)})
    return report


def pending_detail(record: dict[str, Any]) -> str:
    """One line saying what a staged skill write holds (content, new text or file path)."""
    args = record["args"]
    detail = args.get("content") or args.get("new_string") or args.get("file_path") or ""
    return str(detail).replace("\n", " ")


def pending_ids(home: Path, target: str) -> list[str]:
    """The staged write ids ``target`` names: every one for ``all``, else ``[target]``."""
    if target == "all":
        return [str(r["id"]) for r in list_pending(home)]
    return [target]


def history_rows(home: Path, name: str) -> list[dict[str, Any]]:
    """Kept versions of local skill ``name`` (version, action, origin,
    created_at, when as local time, description, path). Raises
    :class:`~.history.HistoryError` naming the fix."""
    return [
        {
            "version": v.number,
            "action": v.action,
            "origin": v.origin,
            "created_at": v.created_at,
            "when": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(v.created_at)),
            "description": v.description(),
            "path": str(v.path),
        }
        for v in list_versions(local_root(home), name)
    ]


__all__ = [
    "SkillListing",
    "ValidationReport",
    "find_rows",
    "hidden_by",
    "history_rows",
    "in_category",
    "list_skills",
    "pending_detail",
    "pending_ids",
    "skill_status",
    "validate_skills",
]
