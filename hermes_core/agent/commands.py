"""Slash commands of the reference agent loop.

:func:`run_command` takes the :class:`~hermes_core.agent.loop.Agent` and the typed line and
returns a :class:`CommandResult` of plain-text lines (the UI decides how to print them) and
whether to exit. Unknown commands answer with a hint to ``/help``; nothing here raises for
bad input.

=====================  ==============================================================
/new                   end this session (reason ``new_session``), open a new one linked
                       to it by ``parent_id``
/reset                 end this session (reason ``reset``), open an unlinked one
/compress [focus]      compress the conversation now, optionally focused on a topic
/memory [show]         MEMORY.md and USER.md entries with usage
/memory pending        staged writes (``[auto]`` = proposed by a background review)
/memory approve ID|all apply staged writes; /memory reject ID|all discards them
/skills                the skills the model can load
/search QUERY          search past sessions (session_search)
/refine                run a memory + skill review of this conversation now (attended)
/exit, /quit           leave
/help                  this list, with the skill commands
/<skill> [instruction] load an enabled skill (up to 5 stacked: ``/a /b do X``) into the
                       next turn; a skill named like a built-in gets no command
=====================  ==============================================================
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hermes_core.errors import HermesError
from hermes_core.layers.memory import (
    FILENAMES,
    MemoryEngine,
    approve_pending,
    char_count,
    open_pending,
    percent,
    reject_pending,
)
from hermes_core.layers.skills import (
    EnvVarSpec,
    SkillsService,
    invalidate_index_cache,
    missing_env,
    present_env_names,
    store_env_values,
)
from hermes_core.text import plural

if TYPE_CHECKING:
    from .loop import Agent

HELP = [
    "/new                    start a new session (linked to this one)",
    "/reset                  start a fresh, unlinked session",
    "/compress [focus]       compress the conversation now",
    "/memory [show]          show MEMORY.md and USER.md",
    "/memory pending         staged memory writes",
    "/memory approve ID|all  apply staged writes",
    "/memory reject ID|all   discard staged writes",
    "/skills                 list skills",
    "/search QUERY           search past sessions",
    "/refine                 review this conversation for memory and skills now",
    "/exit                   leave",
]


@dataclass
class CommandResult:
    """Lines to show, whether the UI should exit, and (for ``/skill-name``) the user turn to
    run next with the skills it loaded."""

    lines: list[str] = field(default_factory=list)
    exit: bool = False
    turn: str = ""
    skills: list[str] = field(default_factory=list)


def is_command(line: str) -> bool:
    """True for ``/word ...`` lines."""
    stripped = line.strip()
    return stripped.startswith("/") and len(stripped) > 1 and not stripped.startswith("//")


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return {"success": False, "error": text}
    return value if isinstance(value, dict) else {"success": False, "error": text}


# -- /memory


def _user(agent: Agent) -> str | None:
    """The user of the chat: /memory commands see only this user's files and staged writes."""
    return agent.session.info.user_id


def memory_show(agent: Agent) -> list[str]:
    """Numbered entries of both stores with their usage."""
    engine = MemoryEngine(agent.host.home, agent.settings.memory, _user(agent))
    lines: list[str] = []
    for target in ("memory", "user"):
        try:
            store = engine.store(target)
        except HermesError as exc:  # memory.store: postgresql without a URL
            return [f"Memory could not be opened: {exc}"]
        state = store.read()
        if not state.readable:
            lines.append(f"{FILENAMES[target]}: could not be read ({state.error})")
            continue
        used = char_count(state.entries)
        lines.append(
            f"{FILENAMES[target]} — {percent(used, store.limit)}% "
            f"({used:,}/{store.limit:,} chars), {plural(len(state.entries), 'entry')}"
        )
        lines.extend(f"  {n}. {entry}" for n, entry in enumerate(state.entries, start=1))
        if not state.entries:
            lines.append("  (no entries)")
    lines.append("Changes made in this session show in the system prompt of the next one.")
    return lines


def memory_pending(agent: Agent) -> list[str]:
    try:
        records = open_pending(agent.host.home, agent.settings.memory, _user(agent)).list()
    except HermesError as exc:  # memory.store: postgresql and the server is down
        return [f"Staged writes could not be listed: {exc}"]
    if not records:
        return ["No pending memory writes."]
    lines = [f"{r.id}  {r.target:<6} {'[auto] ' if r.auto else ''}{r.summary()}" for r in records]
    lines.append("Apply with /memory approve ID|all, discard with /memory reject ID|all.")
    return lines


def memory_approve(agent: Agent, ids: list[str]) -> list[str]:
    if not ids:
        return ["Usage: /memory approve ID|all (list them with /memory pending)."]
    home = agent.host.home
    engine = MemoryEngine(home, agent.settings.memory, _user(agent))
    try:
        pending = open_pending(home, agent.settings.memory, engine.user_id)
        approvals = approve_pending(engine, pending, ids, notify=agent.session.notify_memory_write)
    except HermesError as exc:
        return [f"Nothing was approved: {exc}"]
    if not approvals:
        return ["No pending memory writes."]
    return [
        f"✓ {a.pending_id}: {a.outcome.payload.get('message', 'applied')}"
        if a.success
        else f"✗ {a.pending_id}: {a.outcome.payload.get('error', 'not applied')}"
        for a in approvals
    ]


def memory_reject(agent: Agent, ids: list[str]) -> list[str]:
    if not ids:
        return ["Usage: /memory reject ID|all (list them with /memory pending)."]
    try:
        pending = open_pending(agent.host.home, agent.settings.memory, _user(agent))
        results = reject_pending(pending, ids)
    except HermesError as exc:
        return [f"Nothing was rejected: {exc}"]
    if not results:
        return ["No pending memory writes."]
    return [
        f"✓ rejected {i}" if existed else f"✗ no pending write with id {i} — see /memory pending"
        for i, existed in results
    ]


def cmd_memory(agent: Agent, args: list[str]) -> CommandResult:
    sub = args[0].lower() if args else "show"
    rest = args[1:]
    if sub == "show":
        return CommandResult(memory_show(agent))
    if sub == "pending":
        return CommandResult(memory_pending(agent))
    if sub == "approve":
        return CommandResult(memory_approve(agent, rest))
    if sub == "reject":
        return CommandResult(memory_reject(agent, rest))
    return CommandResult(
        [f"Unknown /memory subcommand '{sub}'. Use show, pending, approve, reject."]
    )


# -- the others


def cmd_skills(agent: Agent, args: list[str]) -> CommandResult:
    if "skills_list" not in agent.session.tool_names:
        return CommandResult(["Skills are disabled (skills.enabled: false)."])
    payload = _json(agent.session.call_tool("skills_list", {}))
    if not payload.get("success"):
        return CommandResult([f"skills_list failed: {payload.get('error')}"])
    skills = payload.get("skills") or []
    if not skills:
        return CommandResult(["No skills yet. The agent creates them with skill_manage."])
    lines = [
        f"{s.get('name')}  — {s.get('description', '')}"
        + (f"  [{s['category']}]" if s.get("category") else "")
        for s in skills
        if isinstance(s, Mapping)
    ]
    return CommandResult(lines)


def cmd_search(agent: Agent, args: list[str]) -> CommandResult:
    query = " ".join(args).strip()
    if not query:
        return CommandResult(["Usage: /search QUERY"])
    if "session_search" not in agent.session.tool_names:
        return CommandResult(["The session archive is disabled (sessions.enabled: false)."])
    payload = _json(agent.session.call_tool("session_search", {"query": query}))
    if not payload.get("success"):
        return CommandResult([f"Search failed: {payload.get('error')}"])
    results = payload.get("results") or []
    if not results:
        return CommandResult([str(payload.get("hint") or f"No past session matches '{query}'.")])
    lines = []
    for item in results:
        if not isinstance(item, Mapping):
            continue
        title = item.get("title") or "(untitled)"
        lines.append(f"{item.get('session_id')}  {item.get('when', '')}  {title}")
        summary = item.get("summary") or item.get("snippet")
        if summary:
            lines.append(f"    {' '.join(str(summary).split())[:200]}")
    return CommandResult(lines)


def cmd_new(agent: Agent, args: list[str]) -> CommandResult:
    old = agent.session.id
    agent.new_session(reason="new_session", keep_lineage=True)
    return CommandResult([f"New session {agent.session.id} (continues {old})."])


def cmd_reset(agent: Agent, args: list[str]) -> CommandResult:
    agent.new_session(reason="reset", keep_lineage=False)
    return CommandResult([f"Fresh session {agent.session.id}."])


def cmd_compress(agent: Agent, args: list[str]) -> CommandResult:
    focus = " ".join(args).strip() or None
    if len(agent.history) < 2:
        return CommandResult(["Nothing to compress yet."])
    changed = agent.compress(force=True, focus=focus)
    stats = agent.session.compression
    if not changed:
        reason = stats.last_error or "the conversation is already short"
        return CommandResult([f"Not compressed: {reason}."])
    return CommandResult(
        [
            f"Compressed: {stats.tokens_before:,} → {stats.tokens_after:,} tokens"
            + (" (extractive fallback summary)" if stats.fallbacks else "")
        ]
    )


def cmd_refine(agent: Agent, args: list[str]) -> CommandResult:
    return CommandResult(agent.refine_lines(agent.refine()))


def cmd_exit(agent: Agent, args: list[str]) -> CommandResult:
    return CommandResult(["Bye."], exit=True)


def cmd_help(agent: Agent, args: list[str]) -> CommandResult:
    lines = list(HELP)
    skills = skill_commands(agent)
    if skills:
        lines.append("Skills (/name [instruction] loads the skill into your message):")
        lines.extend(f"/{name:<22} {' '.join(desc.split())[:70]}" for name, desc in skills.items())
    return CommandResult(lines)


COMMANDS: dict[str, Callable[[Agent, list[str]], CommandResult]] = {
    "new": cmd_new,
    "reset": cmd_reset,
    "compress": cmd_compress,
    "memory": cmd_memory,
    "skills": cmd_skills,
    "search": cmd_search,
    "refine": cmd_refine,
    "exit": cmd_exit,
    "quit": cmd_exit,
    "help": cmd_help,
}


# -- skills as commands

MAX_STACKED_SKILLS = 5


def skill_commands(agent: Agent) -> dict[str, str]:
    """Enabled (visible) skill name → description, for ``/name`` commands; names that clash
    with a built-in command are left out (see :func:`skill_command_clashes`)."""
    if "skills_list" not in agent.session.tool_names:
        return {}
    payload = _json(agent.session.call_tool("skills_list", {}))
    out: dict[str, str] = {}
    for item in payload.get("skills") or []:
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            name = item["name"]
            if name.lower() not in COMMANDS:
                out[name] = str(item.get("description") or "")
    return out


def skill_command_clashes(agent: Agent) -> list[str]:
    """Notices for enabled skills whose name is a built-in command (they get no /command)."""
    if "skills_list" not in agent.session.tool_names:
        return []
    payload = _json(agent.session.call_tool("skills_list", {}))
    names = [
        str(item.get("name"))
        for item in payload.get("skills") or []
        if isinstance(item, Mapping) and str(item.get("name", "")).lower() in COMMANDS
    ]
    return [
        f"Skill '{n}' is not available as /{n}: that is a built-in command. Load it by asking "
        f"for it, or rename the skill (create a copy under another name and delete this one)."
        for n in names
    ]


def missing_skill_keys(agent: Agent, name: str) -> list[EnvVarSpec]:
    """Required environment variables of skill ``name`` that are not set (empty when the
    skill is unknown or needs none)."""
    service = SkillsService.from_settings(agent.host.home, agent.settings.skills)
    skill = service.library().get(name)
    if skill is None:
        return []
    specs = skill.meta.required_environment_variables
    present = present_env_names(agent.host.home, (spec.name for spec in specs))
    return missing_env(skill.meta, present)


def store_skill_keys(agent: Agent, values: Mapping[str, str]) -> list[str]:
    """Store values in ``$HERMES_HOME/.env`` (and this process); returns the names written."""
    written = store_env_values(agent.host.home, values)
    invalidate_index_cache(agent.host.home)
    return written


def skill_turn(loaded: list[tuple[str, str]], instruction: str) -> str:
    """The user turn that carries skills loaded with ``/name`` and the user's instruction."""
    parts = []
    for name, content in loaded:
        parts.append(
            f'[The user loaded the skill "{name}" with /{name}; follow it for this request.]\n'
            f'<skill name="{name}">\n{content.strip()}\n</skill>'
        )
    parts.append(instruction.strip() or "Apply the skill above now. Ask me for anything missing.")
    return "\n\n".join(parts)


def cmd_skill(agent: Agent, line: str, available: Mapping[str, str]) -> CommandResult:
    """``/a [/b …] [instruction]``: load up to five skills into the next turn."""
    words = line.strip().split()
    names: list[str] = []
    while words and words[0].startswith("/") and words[0][1:] in available:
        if len(names) == MAX_STACKED_SKILLS:
            return CommandResult([f"At most {MAX_STACKED_SKILLS} skills per message."])
        if words[0][1:] not in names:
            names.append(words[0][1:])
        words.pop(0)
    loaded: list[tuple[str, str]] = []
    lines: list[str] = []
    for name in names:
        payload = _json(agent.session.call_tool("skill_view", {"name": name}))
        if not payload.get("success"):
            return CommandResult([f"Could not load skill '{name}': {payload.get('error')}"])
        loaded.append((name, str(payload.get("content") or "")))
        lines.append(f"Loaded skill '{name}'.")
    return CommandResult(lines, turn=skill_turn(loaded, " ".join(words)), skills=names)


def run_command(agent: Agent, line: str) -> CommandResult:
    """Run one ``/command`` line: a built-in, else ``/skill-name [instruction]``."""
    name, _, rest = line.strip()[1:].partition(" ")
    handler = COMMANDS.get(name.lower())
    if handler is not None:
        return handler(agent, rest.split())
    available = skill_commands(agent)
    if name in available:
        return cmd_skill(agent, line, available)
    return CommandResult([f"Unknown command /{name}. Type /help for the list."])


__all__ = [
    "COMMANDS",
    "HELP",
    "MAX_STACKED_SKILLS",
    "CommandResult",
    "cmd_skill",
    "is_command",
    "missing_skill_keys",
    "run_command",
    "skill_command_clashes",
    "skill_commands",
    "skill_turn",
    "store_skill_keys",
]
