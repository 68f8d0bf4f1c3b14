"""The skills layer as a plugin (hook implementations only; logic lives in sibling modules).

* ``system_prompt_block``: the tier-0 index (``PromptOrder.SKILLS``), rendered once per
  session and then returned unchanged for that session id (the prompt stays frozen even if a
  skill is written mid-session; the next session sees the change).
* ``register_tools``: ``skills_list``, ``skill_view``, ``skill_manage``, ``skills_find``,
  ``skill_feedback`` (toolset ``skills``).
* ``health_check``: roots readable, broken SKILL.md files, pending approvals, matching mode
  (semantic + lexical, or lexical only without the ``[embed]`` extra).

The tools available to the agent (for ``requires_*``/``fallback_for_*`` filtering) come from
``skills.available_tools`` / ``skills.available_toolsets`` when set; otherwise the index uses
the routed ``tool_names`` the host passes plus the constructor's tools (default
:data:`DEFAULT_AVAILABLE_TOOLS`), and toolsets default to :data:`DEFAULT_AVAILABLE_TOOLSETS`.
The host should set ``skills.available_tools`` to the agent loop's own tools (terminal,
browser, ...) since those are not routed through the plugin host.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from pathlib import Path

from hermes_core.embedding import INSTALL_HINT, embedder_status
from hermes_core.layers.skills.index import SNAPSHOT_FILE
from hermes_core.layers.skills.manage import list_pending
from hermes_core.layers.skills.tools import (
    DEFAULT_AVAILABLE_TOOLS,
    SkillsService,
    build_tool_specs,
)
from hermes_core.markers import hookimpl
from hermes_core.settings.models import HermesSettings, SkillsSettings
from hermes_core.types import HealthCheck, PromptBlock, PromptOrder, SessionInfo, ToolSpec


class SkillsLayer:
    """Hook implementations of the skills layer. One instance per host."""

    def __init__(
        self,
        available_tools: Collection[str] | None = None,
        available_toolsets: Collection[str] | None = None,
    ) -> None:
        self.settings: HermesSettings | None = None
        self.home: Path | None = None
        self._available_tools = available_tools
        self._available_toolsets = available_toolsets
        self._blocks: dict[str, PromptBlock | None] = {}
        self._services: dict[str, SkillsService] = {}
        self._lock = threading.Lock()

    @hookimpl
    def configure(self, settings: HermesSettings, home: Path) -> None:
        """Remember the host's settings and home; touches no files."""
        self.settings = settings
        self.home = home

    def service(self, settings: SkillsSettings, home: Path) -> SkillsService:
        """A :class:`SkillsService` for ``home`` with the configured tool availability."""
        return SkillsService.from_settings(
            home, settings, self._available_tools, self._available_toolsets
        )

    def _session_service(
        self, session: SessionInfo, tool_names: frozenset[str] | None = None
    ) -> SkillsService:
        """The session's service (one per session id, shared by its tools and its index).

        When ``tool_names`` are given (from ``system_prompt_block``) and
        ``skills.available_tools`` is unset, they join the available tools, so the reading
        tools see the same skills as the index.
        """
        with self._lock:
            service = self._services.get(session.id)
            if service is None:
                service = self._services[session.id] = self.service(
                    session.settings.skills, session.home
                )
            if tool_names and session.settings.skills.available_tools is None:
                base = self._available_tools or DEFAULT_AVAILABLE_TOOLS
                service.available_tools = sorted({*base, *tool_names})
            return service

    @hookimpl
    def system_prompt_block(
        self, session: SessionInfo, tool_names: frozenset[str]
    ) -> PromptBlock | None:
        """The skills index, frozen per session id.

        Tool conditions are evaluated against ``skills.available_tools`` when set, else
        against the routed ``tool_names`` plus the constructor's (or the default) tools.
        """
        with self._lock:
            if session.id in self._blocks:
                return self._blocks[session.id]
        block: PromptBlock | None = None
        if session.settings.skills.enabled:
            text = self._session_service(session, tool_names).render_index()
            if text:
                block = PromptBlock(text=text, order=PromptOrder.SKILLS, source="skills")
        with self._lock:
            return self._blocks.setdefault(session.id, block)

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec] | None:
        """The five skill tools, or None when ``skills.enabled`` is false."""
        if not session.settings.skills.enabled:
            return None
        return build_tool_specs(self._session_service(session))

    @hookimpl
    def on_session_end(self, session: SessionInfo) -> None:
        """Drop the session's frozen block."""
        with self._lock:
            self._blocks.pop(session.id, None)
            self._services.pop(session.id, None)

    @hookimpl
    def health_check(self, home: Path) -> list[HealthCheck]:
        """Roots, broken skills and pending approvals."""
        settings = self.settings.skills if self.settings is not None else SkillsSettings()
        service = self.service(settings, home)
        checks: list[HealthCheck] = []
        missing = [r for r in service.roots if r.read_only and not r.path.is_dir()]
        checks.append(
            HealthCheck(
                name="skills.roots",
                ok=not missing,
                detail=(
                    f"{len(service.roots)} root(s); local {service.roots[0].path}"
                    if not missing
                    else "missing external dir(s): " + ", ".join(str(r.path) for r in missing)
                ),
                fix=""
                if not missing
                else "Create the directory or remove it from skills.external_dirs.",
            )
        )
        library = service.library()
        problems = library.problems
        checks.append(
            HealthCheck(
                name="skills.library",
                ok=not problems,
                detail=(
                    f"{len(library.skills)} skill(s) valid"
                    + (
                        "; broken: " + "; ".join(f"{p.path}: {p.error}" for p in problems[:5])
                        if problems
                        else ""
                    )
                ),
                fix=""
                if not problems
                else "Run `hermes-memory skills validate` and fix the listed SKILL.md files.",
            )
        )
        pending = list_pending(home)
        checks.append(
            HealthCheck(
                name="skills.pending",
                ok=True,
                detail=f"{len(pending)} staged skill write(s)"
                + (" — review with `hermes-memory skills pending`" if pending else ""),
            )
        )
        checks.append(matching_check(settings))
        snapshot = home / SNAPSHOT_FILE
        checks.append(
            HealthCheck(
                name="skills.index_cache",
                ok=True,
                detail=f"{snapshot} {'present' if snapshot.exists() else 'not built yet'}",
            )
        )
        return checks


def matching_check(settings: SkillsSettings) -> HealthCheck:
    """``skills.matching``: semantic + lexical, or lexical only and how to change that.
    Lexical-only is reported ok (it works), with the fix that adds cross-language matching."""
    if not settings.semantic_matching:
        return HealthCheck(
            name="skills.matching",
            ok=True,
            detail="lexical only (skills.semantic_matching: false)",
        )
    status = embedder_status()
    if status.available:
        return HealthCheck(
            name="skills.matching",
            ok=True,
            detail=f"semantic + lexical ({status.name}, offline; EN↔ZH and paraphrases)"
            + (f" — {status.advice}" if status.advice else ""),
            fix=INSTALL_HINT if status.advice else "",
        )
    return HealthCheck(
        name="skills.matching",
        ok=True,
        detail=f"lexical only — {status.detail}; paraphrased or cross-language tasks "
        f"(Chinese task, English skill) rank poorly. Semantic matching: {INSTALL_HINT}",
        fix=f"For semantic matching: {INSTALL_HINT}",
    )


def create_plugin() -> SkillsLayer:
    """Called once per plugin manager by :func:`hermes_core.plugins.create_plugin_manager`."""
    return SkillsLayer()
