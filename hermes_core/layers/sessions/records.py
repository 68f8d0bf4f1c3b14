"""Rows of the session archive as typed records, and the pure helpers that shape them.

Nothing here touches SQLite: :class:`SessionRecord` and :class:`StoredMessage` are what the
database class returns, the ``*_COLUMNS`` strings are the column lists they are selected
with, and :func:`session_from_row` / :func:`message_from_row` build them from a row.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.layers.sessions.sanitize import as_text, clean_text
from hermes_core.scope import ALL_USERS, AllUsers, UserScope, normalize_user_id
from hermes_core.text import IMAGE_PART_TYPES
from hermes_core.text import content_text as shared_content_text

TITLE_MAX = 100


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One row of ``sessions`` (token/billing columns summarised)."""

    id: str
    source: str
    user_id: str | None
    model: str | None
    parent_session_id: str | None
    started_at: float
    ended_at: float | None
    end_reason: str | None
    title: str | None
    message_count: int
    tool_call_count: int
    input_tokens: int
    output_tokens: int
    system_prompt: str | None = None
    last_active: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping (``system_prompt`` omitted; use ``show`` for it)."""
        return {
            "id": self.id,
            "source": self.source,
            "user_id": self.user_id,
            "model": self.model,
            "parent_session_id": self.parent_session_id,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "end_reason": self.end_reason,
            "title": self.title,
            "message_count": self.message_count,
            "tool_call_count": self.tool_call_count,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "last_active": self.last_active,
        }


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One row of ``messages``."""

    id: int
    session_id: str
    role: str
    content: str
    timestamp: float
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_name: str | None = None
    token_count: int | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    active: bool = True
    compacted: bool = False

    def to_chat(self) -> dict[str, Any]:
        """The OpenAI-style message this row came from."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name:
            out["name"] = self.name
        if self.tool_calls:
            out["tool_calls"] = self.tool_calls
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        if self.role == "tool" and self.tool_name:
            out["name"] = self.tool_name
        return out

    def to_dict(self) -> dict[str, Any]:
        """Every stored field, JSON-ready (used by export)."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "role": self.role,
            "content": self.content,
            "timestamp": self.timestamp,
            "name": self.name,
            "tool_call_id": self.tool_call_id,
            "tool_calls": self.tool_calls,
            "tool_name": self.tool_name,
            "token_count": self.token_count,
            "finish_reason": self.finish_reason,
            "reasoning": self.reasoning,
            "active": self.active,
            "compacted": self.compacted,
        }


# --------------------------------------------------------------------------- helpers

_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def sanitize_title(title: object) -> str | None:
    """Strip control/invisible characters, collapse whitespace, cap at 100 chars.
    Returns ``None`` when nothing printable is left."""
    if title is None:
        return None
    text = _INVISIBLE.sub("", str(title))
    text = "".join(" " if unicodedata.category(ch).startswith("C") else ch for ch in text)
    text = " ".join(text.split())
    return text[:TITLE_MAX].rstrip() or None


def _known_part(part: Any) -> bool:
    if isinstance(part, str):
        return True
    if not isinstance(part, Mapping):
        return False
    return isinstance(part.get("text"), str) or part.get("type") in IMAGE_PART_TYPES


def content_text(content: Any) -> str:
    """Plain, storable text of an OpenAI ``content``: text parts joined, image parts become
    ``[image]``; bytes are decoded (bad bytes → U+FFFD); a dict, or a list holding anything
    but text/image parts, is kept whole as JSON text. Lone surrogates become U+FFFD."""
    if content is None or isinstance(content, str):
        return clean_text(content or "")
    if isinstance(content, list) and all(_known_part(part) for part in content):
        return clean_text(shared_content_text(content, image_placeholder="[image]"))
    return as_text(content)


def _readable_json(raw: str) -> str:
    """Arguments as the model wrote them, but with ``\\uXXXX`` escapes decoded so Chinese
    (or any non-ASCII) argument text is searchable; invalid JSON is kept as is."""
    try:
        return json.dumps(json.loads(raw), ensure_ascii=False)
    except (ValueError, RecursionError):
        return raw


def tool_call_parts(tool_calls: Any) -> tuple[list[str], list[str]]:
    """``(names, argument strings)`` of an OpenAI ``tool_calls`` list (tolerant of junk)."""
    names: list[str] = []
    args: list[str] = []
    if not isinstance(tool_calls, list):
        return names, args
    for call in tool_calls:
        if not isinstance(call, Mapping):
            continue
        fn = call.get("function")
        if isinstance(fn, Mapping):
            if isinstance(fn.get("name"), str):
                names.append(fn["name"])
            raw = fn.get("arguments")
            if isinstance(raw, str):
                args.append(_readable_json(raw))
            elif raw is not None:
                args.append(json.dumps(raw, ensure_ascii=False, default=str))
    return names, args


# --------------------------------------------------------------------------- user scope


def stored_user_id(user_id: object) -> str | None:
    """The ``sessions.user_id`` of a scope: ``NULL`` for no user (``None`` or ``""``, as
    :func:`hermes_core.scope.normalize_user_id` decides), else the id. An id with lone
    surrogates (SQLite cannot store them) becomes its U+FFFD form plus a digest of the exact
    id, so two such ids never share a scope."""
    if isinstance(user_id, AllUsers):
        return None
    uid = normalize_user_id(user_id)
    if uid is None:
        return None
    clean = clean_text(uid)
    if clean == uid:
        return uid
    digest = hashlib.sha256(uid.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{clean}#{digest}"


def scope_sql(scope: UserScope, column: str = "user_id") -> tuple[str, list[Any]]:
    """``(SQL condition, params)`` restricting ``column`` to ``scope``."""
    if isinstance(scope, AllUsers):
        return "1=1", []
    uid = stored_user_id(scope)
    if uid is None:
        return f"{column} IS NULL", []
    return f"{column} = ?", [uid]


# --------------------------------------------------------------------------- rows

SESSION_COLUMNS = (
    "id, source, user_id, model, parent_session_id, started_at, ended_at, end_reason, title, "
    "message_count, tool_call_count, input_tokens, output_tokens"
)
MESSAGE_COLUMNS = (
    "id, session_id, role, content, timestamp, name, tool_call_id, tool_calls, tool_name, "
    "token_count, finish_reason, reasoning, active, compacted"
)


def session_from_row(row: Sequence[Any], *, system_prompt: str | None = None) -> SessionRecord:
    """Build a :class:`SessionRecord` from a row selected with :data:`SESSION_COLUMNS`
    (optionally followed by ``last_active``)."""
    return SessionRecord(
        id=row[0],
        source=row[1],
        user_id=row[2],
        model=row[3],
        parent_session_id=row[4],
        started_at=row[5],
        ended_at=row[6],
        end_reason=row[7],
        title=row[8],
        message_count=row[9] or 0,
        tool_call_count=row[10] or 0,
        input_tokens=row[11] or 0,
        output_tokens=row[12] or 0,
        system_prompt=system_prompt,
        last_active=row[13] if len(row) > 13 else None,
    )


def message_from_row(row: Sequence[Any]) -> StoredMessage:
    """Build a :class:`StoredMessage` from a row selected with the message columns."""
    calls = None
    if row[7]:
        try:
            loaded = json.loads(row[7])
            calls = loaded if isinstance(loaded, list) else None
        except ValueError:
            calls = None
    return StoredMessage(
        id=row[0],
        session_id=row[1],
        role=row[2],
        content=row[3] or "",
        timestamp=row[4],
        name=row[5],
        tool_call_id=row[6],
        tool_calls=calls,
        tool_name=row[8],
        token_count=row[9],
        finish_reason=row[10],
        reasoning=row[11],
        active=bool(row[12]),
        compacted=bool(row[13]),
    )


__all__ = [
    "ALL_USERS",
    "MESSAGE_COLUMNS",
    "SESSION_COLUMNS",
    "TITLE_MAX",
    "AllUsers",
    "SessionRecord",
    "StoredMessage",
    "UserScope",
    "content_text",
    "message_from_row",
    "sanitize_title",
    "scope_sql",
    "session_from_row",
    "stored_user_id",
    "tool_call_parts",
]
