"""Tier 0 of progressive disclosure: the skills index in the frozen system prompt.

:func:`render_index` turns a :class:`Library` into the ``## Skills`` block: guidance lines, then
``<available_skills>`` with categories sorted (``  <category>: <description>``) and one
``    - <name>: <description>`` line per visible skill. Skills are hidden when their
``platforms`` exclude the current platform, when listed in ``skills.disabled`` (as ``name``,
or ``<platform>:name`` for one platform only), when a
``requires_tools``/``requires_toolsets`` entry is NOT available, or when a
``fallback_for_tools``/``fallback_for_toolsets`` entry IS available. Tool conditions are only
evaluated when the caller says which tools exist (``available_tools`` not None).

:class:`IndexCache` caches renders in memory (LRU 32) and on disk
(``$HERMES_HOME/.skills_prompt_snapshot.json``), both keyed by an mtime/size manifest of every
SKILL.md and DESCRIPTION.md, and valid only while the same required environment variables are
set (the index notes missing ones); :func:`invalidate_index_cache` clears both after a skill
write.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from hermes_core.fsutil import atomic_write_text, read_regular_text
from hermes_core.layers.skills.envkeys import present_env_names
from hermes_core.layers.skills.library import Library, Skill, SkillRoot, load_library, manifest

SNAPSHOT_FILE = ".skills_prompt_snapshot.json"
SNAPSHOT_VERSION = 2
MEMORY_CACHE_SIZE = 32

INDEX_HEADER = "## Skills (mandatory)"
INDEX_GUIDANCE = (
    "Before replying, scan the skills below. If a skill matches or is even partially relevant "
    "to the task, load it with skill_view(name) and follow its instructions.",
    "If a skill you loaded is wrong, incomplete or outdated, fix it with "
    "skill_manage(action='patch') before finishing.",
    "After difficult or iterative work (trial and error, a changed approach, a user "
    "correction), offer to save the approach as a skill with skill_manage(action='create').",
)
INDEX_CLOSING = "Only proceed without loading a skill if genuinely none are relevant to the task."


def current_platform() -> str:
    """``linux``, ``macos`` or ``windows`` for the running interpreter."""
    if sys.platform.startswith("darwin"):
        return "macos"
    if sys.platform.startswith(("win32", "cygwin", "msys")):
        return "windows"
    return "linux"


def hidden_reason(
    skill: Skill,
    *,
    platform: str,
    disabled: Collection[str] = (),
    available_tools: Collection[str] | None = None,
    available_toolsets: Collection[str] | None = None,
) -> str | None:
    """Why ``skill`` is hidden from the index, or None when it is shown."""
    meta = skill.meta
    if meta.platforms and platform not in meta.platforms:
        return f"platforms {list(meta.platforms)} exclude {platform}"
    if meta.name in disabled:
        return "listed in skills.disabled"
    if f"{platform}:{meta.name}" in disabled:
        return f"listed in skills.disabled for {platform}"
    if available_tools is not None:
        for tool in meta.requires_tools:
            if tool not in available_tools:
                return f"requires tool {tool!r}, which is not available"
        for tool in meta.fallback_for_tools:
            if tool in available_tools:
                return f"fallback for tool {tool!r}, which is available"
    if available_toolsets is not None:
        for toolset in meta.requires_toolsets:
            if toolset not in available_toolsets:
                return f"requires toolset {toolset!r}, which is not available"
        for toolset in meta.fallback_for_toolsets:
            if toolset in available_toolsets:
                return f"fallback for toolset {toolset!r}, which is available"
    return None


def visible_skills(
    library: Library,
    *,
    platform: str | None = None,
    disabled: Collection[str] = (),
    available_tools: Collection[str] | None = None,
    available_toolsets: Collection[str] | None = None,
) -> list[Skill]:
    """Skills of ``library`` that pass :func:`hidden_reason`, sorted by (category, name)."""
    plat = platform or current_platform()
    shown = [
        skill
        for skill in library.skills.values()
        if hidden_reason(
            skill,
            platform=plat,
            disabled=disabled,
            available_tools=available_tools,
            available_toolsets=available_toolsets,
        )
        is None
    ]
    return sorted(shown, key=lambda s: (s.category, s.name))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render_index(
    library: Library,
    *,
    platform: str | None = None,
    disabled: Collection[str] = (),
    available_tools: Collection[str] | None = None,
    available_toolsets: Collection[str] | None = None,
    present_env: Collection[str] | None = None,
) -> str:
    """The tier-0 index text, or ``""`` when no skill is visible. With ``present_env`` (the
    environment variable names that are set), a skill whose required variables are not all
    set says so on its line: ``(needs NAME: not set — hermes-memory skills env <skill>)``."""
    skills = visible_skills(
        library,
        platform=platform,
        disabled=disabled,
        available_tools=available_tools,
        available_toolsets=available_toolsets,
    )
    if not skills:
        return ""
    lines = [INDEX_HEADER, *INDEX_GUIDANCE, "", "<available_skills>"]
    current: str | None = None
    for skill in skills:
        if skill.category != current:
            current = skill.category
            description = _one_line(library.categories.get(current, ""))
            lines.append(f"  {current}: {description}" if description else f"  {current}:")
        line = f"    - {skill.name}: {_one_line(skill.meta.description)}"
        if present_env is not None:
            missing = [
                spec.name
                for spec in skill.meta.required_environment_variables
                if spec.name not in present_env
            ]
            if missing:
                line += (
                    f" (needs {', '.join(missing)}: not set — "
                    f"`hermes-memory skills env {skill.name}`)"
                )
        lines.append(line)
    lines += ["</available_skills>", "", INDEX_CLOSING]
    return "\n".join(lines)


_MEMORY: OrderedDict[tuple[str, str, str], tuple[str, tuple[str, ...], tuple[str, ...]]] = (
    OrderedDict()
)
"""(home, manifest, filters) → (text, required env names, those of them set at render)."""


def required_env_names(library: Library) -> tuple[str, ...]:
    """Every variable some skill of ``library`` requires, sorted."""
    return tuple(
        sorted(
            {
                spec.name
                for skill in library.skills.values()
                for spec in skill.meta.required_environment_variables
            }
        )
    )


_MEMORY_LOCK = threading.Lock()


def _filters_key(
    platform: str,
    disabled: Collection[str],
    tools: Collection[str] | None,
    toolsets: Collection[str] | None,
) -> str:
    payload = {
        "platform": platform,
        "disabled": sorted(disabled),
        "tools": None if tools is None else sorted(tools),
        "toolsets": None if toolsets is None else sorted(toolsets),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:24]


def _manifest_key(files: dict[str, list[int]]) -> str:
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:24]


def invalidate_index_cache(home: Path) -> None:
    """Forget every cached render for ``home`` (memory and disk). Called after any skill write."""
    key = str(home)
    with _MEMORY_LOCK:
        for entry in [k for k in _MEMORY if k[0] == key]:
            del _MEMORY[entry]
    with contextlib.suppress(FileNotFoundError):
        (home / SNAPSHOT_FILE).unlink()


class IndexCache:
    """Renders the index of ``roots`` for ``home``, reusing cached text while no tracked file
    changed. ``last_source`` says where the last render came from: memory, disk or render."""

    def __init__(self, home: Path, roots: Sequence[SkillRoot]) -> None:
        self.home = home
        self.roots = tuple(roots)
        self.last_source = ""

    @property
    def snapshot_path(self) -> Path:
        """``$HERMES_HOME/.skills_prompt_snapshot.json``."""
        return self.home / SNAPSHOT_FILE

    def _read_snapshot(self) -> dict[str, Any]:
        try:
            data = json.loads(read_regular_text(self.snapshot_path, max_bytes=64 << 20))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != SNAPSHOT_VERSION:
            return {}
        return data

    def render(
        self,
        *,
        platform: str | None = None,
        disabled: Collection[str] = (),
        available_tools: Collection[str] | None = None,
        available_toolsets: Collection[str] | None = None,
    ) -> str:
        """The index for these filters (see :func:`render_index`)."""
        plat = platform or current_platform()
        files = manifest(self.roots)
        mkey = _manifest_key(files)
        fkey = _filters_key(plat, disabled, available_tools, available_toolsets)
        memory_key = (str(self.home), mkey, fkey)
        with _MEMORY_LOCK:
            entry = _MEMORY.get(memory_key)
        if entry is not None and self._env_same(entry[1], entry[2]):
            with _MEMORY_LOCK:
                _MEMORY.move_to_end(memory_key)
            self.last_source = "memory"
            return entry[0]
        snapshot = self._read_snapshot()
        renders = snapshot.get("renders") if snapshot.get("manifest") == files else None
        cached: Any = renders.get(fkey) if isinstance(renders, dict) else None
        if _valid_render(cached) and self._env_same(cached["required"], cached["present"]):
            text: str = cached["text"]
            required = tuple(str(n) for n in cached["required"])
            present = tuple(str(n) for n in cached["present"])
            self.last_source = "disk"
        else:
            library = load_library(self.roots)
            required = required_env_names(library)
            present = tuple(sorted(present_env_names(self.home, required)))
            text = render_index(
                library,
                platform=plat,
                disabled=disabled,
                available_tools=available_tools,
                available_toolsets=available_toolsets,
                present_env=present,
            )
            self.last_source = "render"
            kept = renders if isinstance(renders, dict) else {}
            kept = {k: v for k, v in kept.items() if _valid_render(v)}
            kept[fkey] = {"text": text, "required": list(required), "present": list(present)}
            with contextlib.suppress(OSError):
                self.home.mkdir(parents=True, exist_ok=True)
                atomic_write_text(
                    self.snapshot_path,
                    json.dumps(
                        {"version": SNAPSHOT_VERSION, "manifest": files, "renders": kept},
                        ensure_ascii=False,
                    ),
                )
        with _MEMORY_LOCK:
            _MEMORY[memory_key] = (text, tuple(required), tuple(present))
            while len(_MEMORY) > MEMORY_CACHE_SIZE:
                _MEMORY.popitem(last=False)
        return text

    def _env_same(self, required: Sequence[str], present: Sequence[str]) -> bool:
        """Are exactly ``present`` of ``required`` still set (the index notes missing keys)?"""
        if not required:
            return True
        return set(present_env_names(self.home, required)) == set(present)


def _valid_render(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("text"), str)
        and isinstance(value.get("required"), list)
        and isinstance(value.get("present"), list)
    )


__all__ = [
    "INDEX_CLOSING",
    "INDEX_GUIDANCE",
    "INDEX_HEADER",
    "SNAPSHOT_FILE",
    "IndexCache",
    "current_platform",
    "hidden_reason",
    "invalidate_index_cache",
    "render_index",
    "required_env_names",
    "visible_skills",
]
