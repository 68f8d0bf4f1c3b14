"""The read-only ``memory_archive`` tool: search entries moved out by the overflow archive."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from hermes_core.types import ToolContext, ToolSpec

from .archive import MemoryArchive
from .snapshot import sanitize_entry

log = logging.getLogger(__name__)

TOOL_NAME = "memory_archive"

DESCRIPTION = (
    "Search memory entries that were archived when MEMORY.md or USER.md overflowed (they are "
    "no longer in your system prompt but were never deleted). Read-only. Give `query` (words "
    "that must all occur; Chinese works too) or omit it to list the newest archived entries. "
    "The user can restore an entry with `hermes-memory memory restore ID`."
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Words to look for (all must occur)."},
        "target": {"type": "string", "enum": ["memory", "user"]},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
    },
}


class MemoryArchiveTool:
    """Handler of ``memory_archive`` for one home."""

    def __init__(self, archive: MemoryArchive) -> None:
        self.archive = archive

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=TOOL_NAME,
            description=DESCRIPTION,
            parameters=PARAMETERS,
            handler=self.handle,
            toolset="memory",
            read_only=True,
        )

    def handle(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        try:
            payload = self._search(args)
        except Exception as exc:
            log.exception("memory_archive failed")
            payload = {"success": False, "error": f"Archive search failed: {exc}"}
        return json.dumps(payload, ensure_ascii=False)

    def _search(self, args: Any) -> dict[str, Any]:
        if not isinstance(args, Mapping):
            return {"success": False, "error": "Arguments must be a JSON object."}
        query = args.get("query")
        if query is not None and not isinstance(query, str):
            return {"success": False, "error": "'query' must be a string."}
        target = args.get("target")
        if target not in (None, "", "memory", "user"):
            return {
                "success": False,
                "error": f"Invalid target '{target}'. Use 'memory' or 'user'.",
            }
        limit = args.get("limit", 10)
        if isinstance(limit, bool) or not isinstance(limit, int):
            return {"success": False, "error": "'limit' must be an integer between 1 and 50."}
        rows = self.archive.list(
            target=target or None, query=query or None, limit=max(1, min(limit, 50))
        )
        return {
            "success": True,
            "count": len(rows),
            "results": [
                {
                    "id": row.id,
                    "target": row.target,
                    "content": sanitize_entry(row.content, "archive"),
                    "archived_at": row.archived_at,
                    "reason": row.reason,
                }
                for row in rows
            ],
        }


__all__ = ["MemoryArchiveTool"]
