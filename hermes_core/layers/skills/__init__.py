"""Built-in layer: skills (SKILL.md files) as procedural memory, agent-wide.

``model`` (the SKILL.md format), ``library`` and ``paths`` (finding skills on disk), ``index``
(the prompt index), ``tools``, ``manage``, ``find`` and ``install``, ``listing`` (what the
``skills`` commands show), ``plugin`` (the hooks; registered from
``hermes_core.plugins.BUILTIN_PLUGINS``).

The layer's public face is ``__all__`` below: code outside the layers (cli/, mcp/, compat/,
agent/, bench/, host.py, hooks.py) imports these names from ``hermes_core.layers.skills`` and
nothing from its modules (tests/test_layer_boundaries.py). Names load on first use, so
importing the package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.lazy import lazy_names

if TYPE_CHECKING:
    from .browse import browse as browse_skills
    from .envkeys import describe, missing_env, present_env_names, store_env_values
    from .find import SkillStatsStore, rank_skills
    from .history import HistoryError, list_versions, revert
    from .index import IndexCache, hidden_reason, invalidate_index_cache, visible_skills
    from .install import InstallError, check_installable, install_skill
    from .library import SkillRoot, linked_files, load_library, local_root, skill_roots
    from .listing import (
        SkillListing,
        ValidationReport,
        find_rows,
        history_rows,
        list_skills,
        pending_detail,
        pending_ids,
        skill_status,
        validate_skills,
    )
    from .manage import ManageError, approve_pending, list_pending, reject_pending
    from .model import EnvVarSpec
    from .semantic import SkillVectors
    from .tools import DEFAULT_AVAILABLE_TOOLS, DEFAULT_AVAILABLE_TOOLSETS, SkillsService

_HOME: dict[str, str] = {
    "SkillListing": "listing",
    "ValidationReport": "listing",
    "find_rows": "listing",
    "history_rows": "listing",
    "list_skills": "listing",
    "pending_detail": "listing",
    "pending_ids": "listing",
    "skill_status": "listing",
    "validate_skills": "listing",
    "approve_pending": "manage",
    "browse_skills": "browse",
    "check_installable": "install",
    "DEFAULT_AVAILABLE_TOOLS": "tools",
    "DEFAULT_AVAILABLE_TOOLSETS": "tools",
    "describe": "envkeys",
    "EnvVarSpec": "model",
    "hidden_reason": "index",
    "HistoryError": "history",
    "IndexCache": "index",
    "install_skill": "install",
    "InstallError": "install",
    "invalidate_index_cache": "index",
    "linked_files": "library",
    "list_pending": "manage",
    "list_versions": "history",
    "load_library": "library",
    "local_root": "library",
    "ManageError": "manage",
    "missing_env": "envkeys",
    "present_env_names": "envkeys",
    "rank_skills": "find",
    "reject_pending": "manage",
    "revert": "history",
    "skill_roots": "library",
    "SkillRoot": "library",
    "SkillsService": "tools",
    "SkillStatsStore": "find",
    "SkillVectors": "semantic",
    "store_env_values": "envkeys",
    "visible_skills": "index",
}
"""Public name -> the module of this layer that defines it."""
_ALIASES = {"browse_skills": "browse"}
"""Public names that differ from the defining module's (``browse`` is also a module name)."""


__getattr__ = lazy_names(__name__, _HOME, _ALIASES)

__all__ = [
    "DEFAULT_AVAILABLE_TOOLS",
    "DEFAULT_AVAILABLE_TOOLSETS",
    "EnvVarSpec",
    "HistoryError",
    "IndexCache",
    "InstallError",
    "ManageError",
    "SkillListing",
    "SkillRoot",
    "SkillStatsStore",
    "SkillVectors",
    "SkillsService",
    "ValidationReport",
    "approve_pending",
    "browse_skills",
    "check_installable",
    "describe",
    "find_rows",
    "hidden_reason",
    "history_rows",
    "install_skill",
    "invalidate_index_cache",
    "linked_files",
    "list_pending",
    "list_skills",
    "list_versions",
    "load_library",
    "local_root",
    "missing_env",
    "pending_detail",
    "pending_ids",
    "present_env_names",
    "rank_skills",
    "reject_pending",
    "revert",
    "skill_roots",
    "skill_status",
    "store_env_values",
    "validate_skills",
    "visible_skills",
]
