"""Model-facing skill tools (toolset ``skills``): ``skills_list``, ``skill_view``,
``skill_manage``, ``skills_find`` and ``skill_feedback``.

Every handler returns a JSON string and never raises: bad input gives
``{"success": false, "error": "..."}``. Reading tools see the skills that the tier-0 index
shows (platform, ``skills.disabled`` and tool conditions applied); ``skill_manage`` may touch
any local skill, hidden or not, so a broken or hidden skill can still be fixed.
"""

from __future__ import annotations

import difflib
import json
import logging
import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.embedding import load_embedder
from hermes_core.layers.skills.envkeys import (
    describe,
    missing_env,
    present_env_names,
    setup_hint,
)
from hermes_core.layers.skills.find import NOTE_MAX_CHARS, Ranked, SkillStatsStore, rank_skills
from hermes_core.layers.skills.index import IndexCache, current_platform, visible_skills
from hermes_core.layers.skills.library import (
    SUPPORT_DIRS,
    Library,
    Skill,
    SkillRoot,
    blocked_reason,
    linked_files,
    load_library,
    read_text_file,
    skill_roots,
)
from hermes_core.layers.skills.manage import ManageError, SkillManager
from hermes_core.layers.skills.paths import PathRefused, confined_path
from hermes_core.layers.skills.semantic import SkillVectors
from hermes_core.settings.models import SkillsSettings
from hermes_core.tool_results import tool_error, tool_ok
from hermes_core.types import ToolContext, ToolSpec

log = logging.getLogger(__name__)

TOOLSET = "skills"
SUPPORT_FILE_VIEW_MAX_CHARS = 100_000
DEFAULT_AVAILABLE_TOOLS: tuple[str, ...] = (
    "memory",
    "session_search",
    "skills_list",
    "skill_view",
    "skill_manage",
    "skills_find",
    "skill_feedback",
)
"""Tools the plugin assumes exist when neither the host nor settings say (memory layers only)."""
DEFAULT_AVAILABLE_TOOLSETS: tuple[str, ...] = ("memory", "session_search", "skills")


@dataclass
class SkillsService:
    """The skills of one home under one settings section, as tools."""

    home: Path
    settings: SkillsSettings
    available_tools: Collection[str] | None = DEFAULT_AVAILABLE_TOOLS
    available_toolsets: Collection[str] | None = DEFAULT_AVAILABLE_TOOLSETS

    @classmethod
    def from_settings(
        cls,
        home: Path,
        settings: SkillsSettings,
        available_tools: Collection[str] | None = None,
        available_toolsets: Collection[str] | None = None,
    ) -> SkillsService:
        """Tool availability from ``skills.available_tools``/``available_toolsets``, else the
        arguments, else :data:`DEFAULT_AVAILABLE_TOOLS`/:data:`DEFAULT_AVAILABLE_TOOLSETS`."""
        tools = settings.available_tools
        if tools is None:
            tools = list(available_tools or DEFAULT_AVAILABLE_TOOLS)
        toolsets = settings.available_toolsets
        if toolsets is None:
            toolsets = list(available_toolsets or DEFAULT_AVAILABLE_TOOLSETS)
        return cls(home, settings, tools, toolsets)

    @property
    def roots(self) -> tuple[SkillRoot, ...]:
        """Local root first, then ``skills.external_dirs``."""
        return skill_roots(self.home, self.settings.external_dirs)

    @property
    def platform(self) -> str:
        """``skills.platform`` or the running platform."""
        return (self.settings.platform or current_platform()).lower()

    def library(self) -> Library:
        """Every skill on disk (hidden ones included)."""
        return load_library(self.roots)

    def visible(self, library: Library | None = None) -> list[Skill]:
        """Skills shown in the index and the reading tools."""
        return visible_skills(
            library or self.library(),
            platform=self.platform,
            disabled=self.settings.disabled,
            available_tools=self.available_tools,
            available_toolsets=self.available_toolsets,
        )

    def render_index(self) -> str:
        """The tier-0 index (cached, see :class:`IndexCache`)."""
        return IndexCache(self.home, self.roots).render(
            platform=self.platform,
            disabled=self.settings.disabled,
            available_tools=self.available_tools,
            available_toolsets=self.available_toolsets,
        )

    def manager(self) -> SkillManager:
        """A :class:`SkillManager` honouring ``skills.write_approval``."""
        return SkillManager(
            self.home,
            self.roots,
            write_approval=self.settings.write_approval,
            history_versions=self.settings.history_versions,
        )

    def semantic_scores(self, skills: Sequence[Skill], task: str) -> dict[str, float] | None:
        """Cosine of ``task`` to each skill, or None (lexical only) when
        ``skills.semantic_matching`` is off, the embedder is not installed, or it fails."""
        if not self.settings.semantic_matching:
            return None
        embedder = load_embedder()
        if embedder is None:
            return None
        try:
            return SkillVectors(self.home, embedder).similarities(skills, task)
        except Exception as exc:  # matching falls back to lexical, never fails
            log.warning("semantic skill matching failed (%s); using lexical only", exc)
            return None

    def find(self, task: str, limit: int = 5) -> tuple[list[Ranked], str]:
        """Visible skills ranked for ``task`` and the matching mode (``semantic+lexical`` or
        ``lexical``)."""
        skills = self.visible()
        stats = self.stats_store().stats_or_empty(s.name for s in skills)
        semantic = self.semantic_scores(skills, task)
        ranked = rank_skills(skills, task, stats, limit=limit, semantic=semantic)
        return ranked, "lexical" if semantic is None else "semantic+lexical"

    def stats_store(self) -> SkillStatsStore:
        """The skill tables of ``state.db``."""
        return SkillStatsStore(self.home)

    # ------------------------------------------------------------------ handlers

    def _not_found(self, name: str, skills: list[Skill]) -> str:
        names = [s.name for s in skills]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        return tool_error(
            f"Skill '{name}' not found.{hint} Use skills_list or skills_find to see "
            "available skills.",
            available=names[:50],
        )

    def skills_list(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> str:
        """Tier 1: name, description and category of every visible skill."""
        category = args.get("category")
        if category is not None and not isinstance(category, str):
            return tool_error("'category' must be a string.")
        library = self.library()
        skills = self.visible(library)
        if category:
            skills = [
                s for s in skills if s.category == category or s.category.startswith(category + "/")
            ]
        categories = sorted({s.category for s in skills})
        return tool_ok(
            count=len(skills),
            skills=[
                {"name": s.name, "description": s.meta.description, "category": s.category}
                for s in skills
            ],
            categories={c: library.categories.get(c, "") for c in categories},
        )

    def skill_view(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> str:
        """Tier 2 (SKILL.md + linked_files) or tier 3 (one support file)."""
        name = args.get("name")
        if not isinstance(name, str) or not name.strip():
            return tool_error("'name' is required: the skill name from the skills index.")
        skills = self.visible()
        skill = next((s for s in skills if s.name == name.strip()), None)
        if skill is None:
            return self._not_found(name.strip(), skills)
        file_path = args.get("file_path")
        if file_path is None or file_path == "":
            try:
                content = read_text_file(skill.skill_md, max_chars=SUPPORT_FILE_VIEW_MAX_CHARS)
            except (OSError, ValueError) as exc:
                return tool_error(f"Could not read SKILL.md of '{skill.name}': {exc}")
            try:
                self.stats_store().record_view(skill.name)
            except Exception as exc:  # usage counts are best effort
                log.warning("could not record skill view: %s", exc)
            extra: dict[str, Any] = {}
            required = skill.meta.required_environment_variables
            if required:
                present = present_env_names(self.home, (spec.name for spec in required))
                missing = missing_env(skill.meta, present)
                extra["required_environment_variables"] = [
                    {**describe(spec), "set": spec.name in present} for spec in required
                ]
                if missing:
                    extra["missing_environment_variables"] = [describe(s) for s in missing]
                    extra["setup_hint"] = setup_hint(skill.name, missing)
            return tool_ok(
                name=skill.name,
                category=skill.category,
                path=str(skill.directory),
                read_only=skill.root.read_only,
                content=content,
                linked_files=linked_files(skill.directory),
                hint="Load a support file with skill_view(name, file_path).",
                **extra,
            )
        try:
            target = confined_path(skill.directory, file_path, allowed_top=SUPPORT_DIRS)
        except PathRefused as exc:
            return tool_error(str(exc))
        if not target.is_file():
            available = [f for files in linked_files(skill.directory).values() for f in files]
            return tool_error(
                f"File '{file_path}' not found in skill '{skill.name}'.",
                available_files=available,
            )
        try:
            content = read_text_file(target, max_chars=SUPPORT_FILE_VIEW_MAX_CHARS)
        except (OSError, ValueError) as exc:
            return tool_error(f"Could not read {file_path}: {exc}")
        blocked = blocked_reason(target, content)
        if blocked is not None:
            return tool_error(f"{file_path} of skill '{skill.name}' is {blocked}.")
        return tool_ok(name=skill.name, file_path=file_path, content=content)

    def skill_manage(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> str:
        """Create / edit / patch / delete / write_file / remove_file (see manage.py)."""
        origin = ctx.origin if ctx is not None else "foreground"
        session_id = ctx.session.id if ctx is not None else ""
        try:
            result = self.manager().run(args, origin=origin, session_id=session_id)
        except ManageError as exc:
            return tool_error(exc.message, **exc.extra)
        return json.dumps(result, ensure_ascii=False, default=str)

    def skills_find(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> str:
        """Skills ranked for a task: relevance blended with recorded success."""
        task = args.get("task")
        if not isinstance(task, str) or not task.strip():
            return tool_error("'task' is required: describe the task in a sentence.")
        limit = args.get("limit", 5)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 20:
            return tool_error("'limit' must be an integer from 1 to 20.")
        ranked, mode = self.find(task[:4000], limit)
        return tool_ok(
            task=task[:200],
            matching=mode,
            results=[
                {
                    "name": r.skill.name,
                    "description": r.skill.meta.description,
                    "category": r.skill.category,
                    "score": r.score,
                    "relevance": r.relevance,
                    "successes": r.stats.successes,
                    "failures": r.stats.failures,
                    "success_rate": round(r.stats.success_rate, 3),
                }
                for r in ranked
            ],
            hint=(
                "Load the best match with skill_view(name)."
                if ranked
                else "No skill matches; proceed without one, and consider saving the approach."
            ),
        )

    def skill_feedback(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> str:
        """Record whether following a skill worked."""
        name = args.get("name")
        outcome = args.get("outcome")
        note = args.get("note")
        if not isinstance(name, str) or not name.strip():
            return tool_error("'name' is required: the skill you followed.")
        if outcome not in ("success", "failure"):
            return tool_error("'outcome' must be 'success' or 'failure'.")
        if note is not None and not isinstance(note, str):
            return tool_error("'note' must be a string.")
        if note is not None and len(note) > NOTE_MAX_CHARS:
            return tool_error(f"'note' is {len(note)} characters; the limit is {NOTE_MAX_CHARS}.")
        library = self.library()
        if library.get(name.strip()) is None:
            return self._not_found(name.strip(), list(library.skills.values()))
        session_id = ctx.session.id if ctx is not None else ""
        store = self.stats_store()
        try:
            stats = store.record_outcome(name.strip(), outcome, note, session_id)
        except (sqlite3.Error, OSError) as exc:
            return tool_error(
                f"Could not record the outcome in {store.path}: {exc}. The skill itself is "
                "fine; the user can move a damaged state.db aside (it is recreated)."
            )
        return tool_ok(
            name=name.strip(),
            outcome=outcome,
            successes=stats.successes,
            failures=stats.failures,
            success_rate=round(stats.success_rate, 3),
        )


def _guarded(name: str, fn: Callable[[Mapping[str, Any], ToolContext], str]) -> Any:
    def handler(args: Mapping[str, Any], ctx: ToolContext) -> str:
        if not isinstance(args, Mapping):
            return tool_error("Arguments must be a JSON object.")
        try:
            return fn(args, ctx)
        except Exception as exc:  # a tool never raises; the host logs, the model sees JSON
            log.exception("%s failed", name)
            return tool_error(f"{name} failed unexpectedly: {type(exc).__name__}: {exc}"[:500])

    handler.__name__ = name
    return handler


def build_tool_specs(service: SkillsService) -> list[ToolSpec]:
    """The five skill tools bound to ``service``."""
    return [
        ToolSpec(
            name="skills_list",
            description=(
                "List available skills (name, description, category). Optionally filter by "
                "category. Use skill_view to load one."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "category": {"type": "string", "description": "Only this category."}
                },
                "additionalProperties": False,
            },
            handler=_guarded("skills_list", service.skills_list),
            toolset=TOOLSET,
            read_only=True,
        ),
        ToolSpec(
            name="skill_view",
            description=(
                "Load a skill. First call returns SKILL.md content plus a 'linked_files' dict "
                "of support files; pass file_path (e.g. references/api.md) to read one of them."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Skill name."},
                    "file_path": {
                        "type": "string",
                        "description": "Support file relative to the skill directory.",
                    },
                },
                "required": ["name"],
                "additionalProperties": False,
            },
            handler=_guarded("skill_view", service.skill_view),
            toolset=TOOLSET,
            read_only=True,
        ),
        ToolSpec(
            name="skill_manage",
            description=(
                "Create, edit, patch or delete skills (procedural memory) and their support "
                "files. create/edit take full SKILL.md content (YAML frontmatter with name and "
                "description, then the procedure). patch replaces old_string with new_string "
                "(whitespace-tolerant, must be unique unless replace_all). write_file/"
                "remove_file act on references/, templates/, scripts/ or assets/."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "action": {
                        "type": "string",
                        "enum": [
                            "create",
                            "edit",
                            "patch",
                            "delete",
                            "write_file",
                            "remove_file",
                        ],
                    },
                    "name": {"type": "string", "description": "Skill name (a-z0-9._-)."},
                    "content": {"type": "string", "description": "Full SKILL.md (create/edit)."},
                    "old_string": {"type": "string", "description": "Text to find (patch)."},
                    "new_string": {"type": "string", "description": "Replacement (patch)."},
                    "replace_all": {"type": "boolean", "description": "Replace every match."},
                    "category": {"type": "string", "description": "Category dir (create)."},
                    "file_path": {
                        "type": "string",
                        "description": "Support file, e.g. references/notes.md.",
                    },
                    "file_content": {"type": "string", "description": "write_file content."},
                    "absorbed_into": {
                        "type": "string",
                        "description": "delete: the umbrella skill that now covers this one.",
                    },
                },
                "required": ["action", "name"],
                "additionalProperties": False,
            },
            handler=_guarded("skill_manage", service.skill_manage),
            toolset=TOOLSET,
        ),
        ToolSpec(
            name="skills_find",
            description=(
                "Find the skills most relevant to a task, ranked by text relevance and their "
                "recorded success rate."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "task": {"type": "string", "description": "The task, in a sentence."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 20},
                },
                "required": ["task"],
                "additionalProperties": False,
            },
            handler=_guarded("skills_find", service.skills_find),
            toolset=TOOLSET,
            read_only=True,
        ),
        ToolSpec(
            name="skill_feedback",
            description=(
                "Record whether following a skill worked (success or failure, with an "
                "optional note); this improves skills_find ranking."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "outcome": {"type": "string", "enum": ["success", "failure"]},
                    "note": {"type": "string"},
                },
                "required": ["name", "outcome"],
                "additionalProperties": False,
            },
            handler=_guarded("skill_feedback", service.skill_feedback),
            toolset=TOOLSET,
        ),
    ]


__all__ = [
    "DEFAULT_AVAILABLE_TOOLS",
    "DEFAULT_AVAILABLE_TOOLSETS",
    "TOOLSET",
    "SkillsService",
    "build_tool_specs",
]
