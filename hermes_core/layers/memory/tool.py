"""The model-facing ``memory`` tool: schema, validation, approval gate, failure cap.

Contract:

* Validation order: missing ``action`` and ``operations`` → "Missing required parameter";
  ``add`` without content → "Content is required for 'add' action."; replace/remove without
  ``old_text`` → recoverable error with current entries and usage; replace without content →
  "content is required for 'replace' action."; unknown action → "Unknown action …". Content is
  threat-scanned (strict) before anything touches disk. Validation and scanning happen
  *before* the approval gate, so an invalid write is never staged.
* Gate: with ``memory.write_approval`` every write is staged; from an unattended background
  review, replace/remove (and batches containing one) are staged as proposals even with the
  gate off. Staged writes return ``{"success": true, "staged": true, "pending_id": …}``.
* Per turn, the 4th and later consolidation failures (over budget, no match, failed batch)
  return a terminal ``{"success": false, "done": true, …}`` without entries; any success and
  every turn start reset the counter.
* After a committed write, ``ctx.notify_memory_write`` is called once per operation.
* The handler never raises: every bad input is a JSON error.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from hermes_core.errors import clip
from hermes_core.scope import user_option
from hermes_core.security.scan import scan
from hermes_core.types import MemoryTarget, ToolContext, ToolSpec

from .engine import MemoryEngine, Outcome
from .ops import ACTIONS, Operation, OpError, locate
from .pending import PendingStore
from .snapshot import sanitize_entry
from .store import FILENAMES, char_count, has_separator_line, normalize_newlines, usage_short

log = logging.getLogger(__name__)

TOOL_NAME = "memory"
TOOLSET = "memory"
FAILURE_CAP = 3
NOT_AVAILABLE = "Memory is not available. It may be disabled in config or this environment."
MISSING = (
    "Missing required parameter: give 'action' (add, replace or remove) for one change, or "
    "'operations' (a list of {action, content, old_text}) for several."
)
SEPARATOR_LINE = (
    "Content has a line containing only '§', the entry separator of the memory file: it "
    "would be stored as several entries or merge with its neighbour. Remove that line, or "
    "save separate facts as separate add operations in one `operations` call."
)

DESCRIPTION = (
    "Save durable facts to persistent memory that survives across sessions (it is shown in "
    "your system prompt at the start of every session; there is no read action). Targets: "
    "'memory' = your own notes (environment facts, conventions, tool quirks, lessons); "
    "'user' = who the user is (name, role, preferences, style). Save proactively when the "
    "user states a preference, corrects you, shares personal details, or you learn a stable "
    "fact about the environment. Priority: user preferences and corrections > environment "
    "facts > procedures. Write declarative facts ('User prefers tabs'), not commands. Prefer "
    "ONE call with `operations` for several changes: the character limit is checked only on "
    "the final state. If memory is full, an add is rejected with the current entries shown: "
    "reissue as one batch that removes or shortens entries and adds the new one. `old_text` "
    "is a short unique substring that locates an entry; replace rewrites the WHOLE entry. "
    "Skip trivial or easily re-discovered facts, raw dumps, task progress, completed-work "
    "logs and temporary TODO state (session_search finds past conversations); reusable "
    "procedures belong in skills."
)


def schema(targets: tuple[MemoryTarget, ...]) -> dict[str, Any]:
    """JSON schema of the tool's parameters (no top-level combinators)."""
    op_item = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "content": {"type": "string", "description": "New entry text (add/replace)."},
            "old_text": {
                "type": "string",
                "description": "Short unique substring of the entry to replace/remove.",
            },
            "priority": {"type": "string", "enum": ["normal", "low"]},
        },
        "required": ["action"],
    }
    return {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": list(ACTIONS),
                "description": "One change. Omit when using `operations`.",
            },
            "target": {
                "type": "string",
                "enum": list(targets),
                "description": "Which store: " + ", ".join(targets) + f" (default {targets[0]}).",
            },
            "content": {
                "type": "string",
                "description": "The entry text for add, or the full new text for replace.",
            },
            "old_text": {
                "type": "string",
                "description": "Required for replace/remove: a short unique substring of the "
                "entry to change (an exact whole-entry match wins).",
            },
            "priority": {
                "type": "string",
                "enum": ["normal", "low"],
                "description": "For add: 'low' marks an entry that may be archived first "
                "when memory overflows.",
            },
            "operations": {
                "type": "array",
                "items": op_item,
                "description": "Several changes applied all-or-nothing, in order; the limit "
                "is checked on the final state. When present, the single-change fields are "
                "ignored.",
            },
        },
        "required": ["target"],
    }


MAX_BATCH_OPERATIONS = 200
"""Most operations one ``memory`` call may carry (checked before anything is parsed)."""
MAX_BATCH_CHARS = 200_000
"""Most characters the operations of one call may carry in total."""


@dataclass
class FailureCounter:
    """Consolidation failures in the current turn of one session."""

    count: int = 0

    def reset(self) -> None:
        self.count = 0


def _text(args: Mapping[str, Any], *names: str) -> tuple[str | None, str | None]:
    """(value, error): the first present string among ``names`` (empty strings count as
    present only when no later alias has text)."""
    values = [args.get(name) for name in names]
    for name, value in zip(names, values, strict=True):
        if value is not None and not isinstance(value, str):
            return None, f"'{name}' must be a string."
    present = [v for v in values if isinstance(v, str)]
    if not present:
        return None, None
    for value in present:
        if value.strip():
            return value, None
    return present[0], None


@dataclass
class MemoryTool:
    """The ``memory`` tool for one session: ``handle`` is the :data:`ToolHandler`."""

    engine: MemoryEngine
    pending: PendingStore
    targets: tuple[MemoryTarget, ...]
    failures: FailureCounter = field(default_factory=FailureCounter)

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=TOOL_NAME,
            description=DESCRIPTION,
            parameters=schema(self.targets),
            handler=self.handle,
            toolset=TOOLSET,
        )

    def handle(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Run one call; always a JSON string, never an exception."""
        try:
            payload = self._dispatch(args, ctx)
        except Exception as exc:
            log.exception("memory tool failed")
            payload = {"success": False, "error": f"Memory write failed: {exc}"}
        return json.dumps(payload, ensure_ascii=False)

    # -- dispatch

    def _dispatch(self, args: Any, ctx: ToolContext) -> dict[str, Any]:
        if not self.targets:
            return {"success": False, "error": NOT_AVAILABLE}
        if not isinstance(args, Mapping):
            return {"success": False, "error": "Arguments must be a JSON object."}
        raw_target = args.get("target")
        if raw_target is None or raw_target == "":
            raw_target = self.targets[0] if "memory" not in self.targets else "memory"
        if raw_target not in ("memory", "user"):
            return {
                "success": False,
                "error": f"Invalid target '{clip(raw_target, 200)}'. Use 'memory' or 'user'.",
            }
        target = cast(MemoryTarget, raw_target)
        if target not in self.targets:
            setting = "memory_enabled" if target == "memory" else "user_profile_enabled"
            return {
                "success": False,
                "error": f"The '{target}' store is disabled (memory.{setting}: false). "
                f"Use target '{self.targets[0]}'.",
            }
        operations = args.get("operations")
        if operations is not None:
            return self._batch(target, operations, ctx)
        action = args.get("action")
        if action is None or action == "":
            return {"success": False, "error": MISSING}
        return self._single(target, action, args, ctx)

    def _single(
        self, target: MemoryTarget, action: Any, args: Mapping[str, Any], ctx: ToolContext
    ) -> dict[str, Any]:
        content, error = _text(args, "content", "new_text")
        if error:
            return {"success": False, "error": error}
        old_text, error = _text(args, "old_text")
        if error:
            return {"success": False, "error": error}
        if action == "add" and content is None:
            return {"success": False, "error": "Content is required for 'add' action."}
        if action in ("replace", "remove") and old_text is None:
            entries = self.engine.store(target).entries()
            payload = self.engine.error_with_entries(
                target,
                f"old_text is required for '{action}' action. Reissue the call with old_text "
                "set to a short unique substring of the entry to change (see current_entries).",
                entries,
            )
            return payload
        if action == "replace" and content is None:
            return {"success": False, "error": "content is required for 'replace' action."}
        if action not in ACTIONS:
            return {
                "success": False,
                "error": f"Unknown action '{clip(action, 200)}'. Use: add, replace, remove",
            }
        priority = args.get("priority", "normal") or "normal"
        if priority not in ("normal", "low"):
            return {"success": False, "error": "priority must be 'normal' or 'low'."}
        content = normalize_newlines(content).strip() if content is not None else None
        old_text = normalize_newlines(old_text).strip() if old_text is not None else None
        if action == "add" and not content:
            return {"success": False, "error": "Content cannot be empty."}
        if action in ("replace", "remove") and not old_text:
            return {"success": False, "error": "old_text cannot be empty."}
        if action == "replace" and not content:
            return {
                "success": False,
                "error": "new_content cannot be empty. Use 'remove' to delete entries.",
            }
        if content is not None and action != "remove" and has_separator_line(content):
            return {"success": False, "error": SEPARATOR_LINE}
        if content is not None and action != "remove" and (bad := _surrogate_error(content)):
            return {"success": False, "error": bad}
        if content is not None and action != "remove":
            result = scan(content, "strict")
            if result.blocked:
                return {"success": False, "error": result.message}
        op = Operation(
            action=cast(Any, action),
            content=content if action != "remove" else None,
            old_text=old_text if action != "add" else None,
            priority=priority,
        )
        proposal = ctx.origin == "background_review" and action != "add"
        if self.engine.settings.write_approval or proposal:
            return self._stage(target, [op], batch=False, ctx=ctx, proposal=proposal)
        outcome = self.engine.run_single(target, op, origin=ctx.origin, session_id=ctx.session.id)
        return self._finish(outcome, ctx)

    def _batch(self, target: MemoryTarget, operations: Any, ctx: ToolContext) -> dict[str, Any]:
        if not isinstance(operations, list):
            return {
                "success": False,
                "error": "operations must be a list of {action, content, old_text} objects.",
            }
        if not operations:
            return {"success": False, "error": "operations list is empty."}
        if len(operations) > MAX_BATCH_OPERATIONS:  # refused by size before any work
            return {
                "success": False,
                "error": f"operations has {len(operations):,} items; at most "
                f"{MAX_BATCH_OPERATIONS} per call (memory holds a few dozen entries). Send the "
                "changes that matter in smaller batches.",
            }
        sized = sum(
            len(v)
            for raw in operations
            if isinstance(raw, dict)
            for v in raw.values()
            if isinstance(v, str)
        )
        if sized > MAX_BATCH_CHARS:
            return {
                "success": False,
                "error": f"operations carry {sized:,} characters; at most {MAX_BATCH_CHARS:,} "
                "per call. Memory is for short facts: send fewer or shorter entries.",
            }
        ops: list[Operation] = []
        for index, raw in enumerate(operations, start=1):
            op_or_error = _parse_op(index, raw)
            if isinstance(op_or_error, str):
                return {"success": False, "error": op_or_error}
            ops.append(op_or_error)
        for index, op in enumerate(ops, start=1):
            if op.action != "remove" and op.content:
                result = scan(op.content, "strict")
                if result.blocked:
                    return {"success": False, "error": f"Operation {index}: {result.message}"}
        proposal = ctx.origin == "background_review" and any(op.action != "add" for op in ops)
        if self.engine.settings.write_approval or proposal:
            return self._stage(target, ops, batch=True, ctx=ctx, proposal=proposal)
        outcome = self.engine.run_batch(target, ops, origin=ctx.origin, session_id=ctx.session.id)
        return self._finish(outcome, ctx)

    # -- gate

    def _stage(
        self,
        target: MemoryTarget,
        ops: list[Operation],
        *,
        batch: bool,
        ctx: ToolContext,
        proposal: bool,
    ) -> dict[str, Any]:
        """Stage ``ops``; replace/remove record the full entry they target (must resolve now)."""
        store = self.engine.store(target)
        state = store.read()
        if not state.readable:
            return store.unreadable_payload(state)
        work = list(state.entries)
        expected: dict[int, str] = {}
        for index, op in enumerate(ops, start=1):
            if op.action == "add":
                if op.content and op.content not in work:
                    work.append(op.content)
                continue
            try:
                position = locate(
                    work,
                    op.old_text or "",
                    render=lambda e: sanitize_entry(e, FILENAMES[target]),
                )
            except OpError as exc:
                prefix = f"Operation {index} ({op.action}): " if batch else ""
                payload: dict[str, Any] = {"success": False, "error": prefix + exc.message}
                if not batch and exc.kind == "no_match":
                    payload = self.engine.error_with_entries(target, exc.message, state.entries)
                elif not batch and exc.matches:
                    payload["matches"] = exc.matches
                else:
                    payload["usage"] = usage_short(char_count(work), store.limit)
                return payload
            expected[index] = work[position]
            if op.action == "remove":
                del work[position]
            else:
                work[position] = op.content or ""
        record = self.pending.stage(
            target,
            ops,
            batch=batch,
            origin=ctx.origin,
            session_id=ctx.session.id,
            expected=expected,
            proposal=proposal,
        )
        why = (
            "Proposed change staged for the user's review (unattended reviews cannot "
            "replace or remove memory directly)."
            if proposal
            else "Memory write staged for approval (memory.write_approval is on)."
        )
        payload = {
            "success": True,
            "staged": True,
            "done": True,
            "pending_id": record.id,
            "target": target,
            "message": f"{why} It is NOT saved yet; the user approves it with "
            f"`hermes-memory memory approve {record.id}{user_option(record.user_id)}` "
            "(or `/memory approve "
            f"{record.id}` in chat). Do not repeat it.",
        }
        if proposal:
            payload["proposal_staged"] = True
        return payload

    # -- results

    def _finish(self, outcome: Outcome, ctx: ToolContext) -> dict[str, Any]:
        if outcome.success:
            self.failures.reset()
            for write in outcome.writes:
                try:
                    ctx.notify_memory_write(write)
                except Exception as exc:  # the write is committed; a mirror failure is not ours
                    log.warning("on_memory_write notification failed: %s", exc)
            return sanitize_echo(outcome.payload)
        if outcome.failure is None:
            return outcome.payload
        self.failures.count += 1
        if self.failures.count > FAILURE_CAP:
            return {
                "success": False,
                "done": True,
                "error": (
                    f"Memory consolidation failed {self.failures.count} times this turn. Stop "
                    "retrying memory calls this turn: tell the user what could not be saved "
                    "and continue with the task."
                ),
            }
        return outcome.payload


def _surrogate_error(content: str) -> str | None:
    """The error for text that cannot be stored as UTF-8 (a lone UTF-16 surrogate, usually
    half of an emoji cut off by the model), else None."""
    for char in content:
        if 0xD800 <= ord(char) <= 0xDFFF:
            return (
                f"Content contains an unpaired surrogate U+{ord(char):04X} (half of an emoji or "
                "other character), which cannot be saved as UTF-8. Remove it or send the whole "
                "character, then retry."
            )
    return None


def sanitize_echo(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with the entries it echoes (replaced/removed/archived) passed through the
    snapshot's sanitiser: removing a poisoned entry — what its ``[BLOCKED: …]`` placeholder
    asks for — must not put the poison back into the model's context. (Providers still get
    the raw previous content through ``on_memory_write``.)"""
    filename = FILENAMES.get(payload.get("target", "memory"), "MEMORY.md")

    def clean(value: Any) -> str:
        text = str(value)
        if sanitize_entry(text, filename) == text:
            return text
        return f"[WITHHELD: the {filename} entry matched threat patterns; it is not shown]"

    out = dict(payload)
    for key in ("replaced_entry", "removed_entry"):
        if isinstance(out.get(key), str):
            out[key] = clean(out[key])
    for key in ("replaced_entries", "removed_entries"):
        if isinstance(out.get(key), Mapping):
            out[key] = {k: clean(v) for k, v in out[key].items()}
    if isinstance(out.get("archived"), list):
        out["archived"] = [
            {**item, "content": clean(item.get("content", ""))}
            if isinstance(item, Mapping)
            else item
            for item in out["archived"]
        ]
    return out


def _parse_op(index: int, raw: Any) -> Operation | str:
    """A validated batch operation, or the error text."""
    suffix = " No operations were applied (batch is all-or-nothing)."
    if not isinstance(raw, Mapping):
        return f"Operation {index}: must be an object with 'action'.{suffix}"
    action = raw.get("action")
    label = clip(action, 200) if isinstance(action, str) else "?"
    prefix = f"Operation {index} ({label}): "
    if action not in ACTIONS:
        return f"{prefix}Unknown action '{clip(action, 200)}'. Use: add, replace, remove.{suffix}"
    content, error = _text(raw, "content", "new_text")
    if error:
        return prefix + error + suffix
    old_text, error = _text(raw, "old_text")
    if error:
        return prefix + error + suffix
    priority = raw.get("priority", "normal") or "normal"
    if priority not in ("normal", "low"):
        return f"{prefix}priority must be 'normal' or 'low'.{suffix}"
    content = normalize_newlines(content).strip() if content is not None else None
    old_text = normalize_newlines(old_text).strip() if old_text is not None else None
    if action == "add" and not content:
        return f"{prefix}Content cannot be empty.{suffix}"
    if action in ("replace", "remove") and not old_text:
        return f"{prefix}old_text cannot be empty.{suffix}"
    if action == "replace" and not content:
        return f"{prefix}new_content cannot be empty. Use 'remove' to delete entries.{suffix}"
    if action != "remove" and content and has_separator_line(content):
        return f"{prefix}{SEPARATOR_LINE}{suffix}"
    if action != "remove" and content and (bad := _surrogate_error(content)):
        return f"{prefix}{bad}{suffix}"
    return Operation(
        action=action,
        content=content if action != "remove" else None,
        old_text=old_text if action != "add" else None,
        priority=priority,
    )


__all__ = ["DESCRIPTION", "TOOL_NAME", "FailureCounter", "MemoryTool", "schema"]
