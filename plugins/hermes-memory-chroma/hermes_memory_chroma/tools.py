"""Model-facing tools: ``chroma_search``, ``chroma_remember``, ``chroma_forget``.

Handlers take ``(args, ctx)`` and return a JSON string; they never raise — bad input and
store failures come back as ``{"success": false, "error": "..."}`` naming the fix. The user
is always ``ctx.session.user_id`` or the configured default: the model cannot pick another.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from hermes_core import ToolContext, ToolSpec
from hermes_core.security.scan import scan

from hermes_memory_chroma.settings import MEMORY_TYPES

if TYPE_CHECKING:
    from hermes_memory_chroma.provider import ChromaProvider

log = logging.getLogger(__name__)

MAX_CONTENT_CHARS = 4000
WRITABLE_TYPES = tuple(t for t in MEMORY_TYPES if t != "dialogue")


class ToolInputError(ValueError):
    """Bad tool arguments; the message says how to fix them."""


def _ok(**payload: Any) -> str:
    return json.dumps({"success": True, **payload}, ensure_ascii=False)


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message}, ensure_ascii=False)


def _text(args: Mapping[str, Any], key: str, *, required: bool, limit: int) -> str:
    value = args.get(key)
    if value is None or value == "":
        if required:
            raise ToolInputError(f"'{key}' is required (a non-empty string)")
        return ""
    if not isinstance(value, str):
        raise ToolInputError(f"'{key}' must be a string, got {type(value).__name__}")
    value = value.strip()
    if required and not value:
        raise ToolInputError(f"'{key}' is required (a non-empty string)")
    if len(value) > limit:
        raise ToolInputError(f"'{key}' is {len(value)} characters; keep it under {limit}")
    return value


def _int(args: Mapping[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    value = args.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolInputError(f"'{key}' must be an integer between {lo} and {hi}")
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        raise ToolInputError(f"'{key}' must be an integer between {lo} and {hi}")
    if not lo <= int(value) <= hi:
        raise ToolInputError(f"'{key}' must be between {lo} and {hi}, got {int(value)}")
    return int(value)


def _type(args: Mapping[str, Any], key: str, default: str | None, allowed: tuple[str, ...]) -> Any:
    value = args.get(key, default)
    if value is None or value == "":
        return default
    if not isinstance(value, str) or value not in allowed:
        raise ToolInputError(f"'{key}' must be one of {', '.join(allowed)}")
    return value


def _guard(fn: Callable[[Mapping[str, Any], ToolContext], str]) -> Callable[..., str]:
    def handler(args: Mapping[str, Any], ctx: ToolContext) -> str:
        if not isinstance(args, Mapping):
            return _error("arguments must be a JSON object")
        try:
            return fn(args, ctx)
        except ToolInputError as exc:
            return _error(str(exc))
        except Exception as exc:  # never raise into the agent loop
            log.warning("chroma tool failed: %s", exc, exc_info=True)
            return _error(f"chroma memory store failed: {exc}. Run `hermes-memory doctor`.")

    handler.__name__ = fn.__name__
    return handler


def build_tools(provider: ChromaProvider) -> list[ToolSpec]:
    """The three tool specs bound to ``provider``."""

    def search(args: Mapping[str, Any], ctx: ToolContext) -> str:
        query = _text(args, "query", required=True, limit=2000)
        limit = _int(args, "limit", 5, 1, 20)
        mem_type = _type(args, "type", None, MEMORY_TYPES)
        days = args.get("since_days")
        since = None
        if days is not None:
            if isinstance(days, bool) or not isinstance(days, (int, float)) or days <= 0:
                raise ToolInputError("'since_days' must be a positive number of days")
            if not math.isfinite(float(days)):
                raise ToolInputError("'since_days' must be a finite number")
            since = time.time() - float(days) * 86400.0
        user = provider.user_for(ctx.session)
        hits = provider.retriever.search(
            user, query, top_k=limit, types=[mem_type] if mem_type else None, since=since
        )
        return _ok(count=len(hits), results=[h.to_dict() for h in hits])

    def remember(args: Mapping[str, Any], ctx: ToolContext) -> str:
        content = _text(args, "content", required=True, limit=MAX_CONTENT_CHARS)
        verdict = scan(content, "strict")  # recalled later into prompts, like MEMORY.md
        if verdict.blocked:
            return _error(verdict.message)
        mem_type = _type(args, "type", "fact", WRITABLE_TYPES)
        subject = _text(args, "subject", required=False, limit=200)
        user = provider.user_for(ctx.session)
        result = provider.store.add(
            user,
            content,
            type=mem_type,
            subject=subject,
            source=f"tool:{ctx.origin}",
            session_id=ctx.session.id,
        )
        return _ok(id=result.id, status=result.status, superseded=list(result.superseded))

    def forget(args: Mapping[str, Any], ctx: ToolContext) -> str:
        memory_id = _text(args, "id", required=True, limit=100)
        user = provider.user_for(ctx.session)
        if not provider.store.delete_memory(user, memory_id):
            return _error(f"no memory with id {memory_id!r}; find ids with chroma_search")
        return _ok(deleted=memory_id)

    type_enum = list(MEMORY_TYPES)
    return [
        ToolSpec(
            name="chroma_search",
            description=(
                "Search the user's long-term memory (hybrid keyword + semantic; English and "
                "Chinese). Returns memories with ids, types and dates, most relevant first."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
                    "type": {"type": "string", "enum": type_enum, "description": "Only this type."},
                    "since_days": {
                        "type": "number",
                        "description": "Only memories created within this many days.",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            handler=_guard(search),
            toolset="memory",
            read_only=True,
        ),
        ToolSpec(
            name="chroma_remember",
            description=(
                "Store a durable fact, decision or to-do in long-term memory. Give a subject "
                "(e.g. 'location') so a later fact on the same subject replaces this one."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "The memory, self-contained."},
                    "type": {
                        "type": "string",
                        "enum": list(WRITABLE_TYPES),
                        "default": "fact",
                    },
                    "subject": {
                        "type": "string",
                        "description": "Optional subject key; a newer memory with the same "
                        "subject supersedes the older one.",
                    },
                },
                "required": ["content"],
                "additionalProperties": False,
            },
            handler=_guard(remember),
            toolset="memory",
        ),
        ToolSpec(
            name="chroma_forget",
            description="Delete one long-term memory by id (ids come from chroma_search).",
            parameters={
                "type": "object",
                "properties": {"id": {"type": "string", "description": "The memory id."}},
                "required": ["id"],
                "additionalProperties": False,
            },
            handler=_guard(forget),
            toolset="memory",
        ),
    ]


__all__ = ["ToolInputError", "build_tools"]
