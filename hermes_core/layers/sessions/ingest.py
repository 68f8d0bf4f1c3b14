"""A batch of OpenAI-style messages turned into rows ready to insert: sanitised, redacted,
indexed. Pure (no SQLite): :func:`prepare_messages` is what ``SessionDB.append_messages``
writes.

* Every value is sanitised (:mod:`.sanitize`), never refused; an item that is not a message
  at all raises :class:`SessionStoreError` (and then nothing of the batch is written).
* With ``redact_secrets`` the text, tool-call arguments and reasoning of the whole batch pass
  through :func:`hermes_core.security.redaction.redact_payload` as one hand-off (a secret seen
  in one message is masked in all of them) before they are indexed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.layers.sessions.errors import SessionStoreError
from hermes_core.layers.sessions.fts import index_fields
from hermes_core.layers.sessions.records import content_text, tool_call_parts
from hermes_core.layers.sessions.sanitize import (
    as_text,
    clamp_int,
    clean_timestamp,
    clean_value,
    json_text,
    optional_text,
)
from hermes_core.llm.tokens import estimate_message_tokens
from hermes_core.security.redaction import redact_payload

INSERT_COLUMNS = (
    "session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, "
    "finish_reason, reasoning, active, compacted, name"
)
"""The ``messages`` columns of :attr:`MessageRow.values`, in order."""
_CONTENT, _CALLS, _TOOL, _REASONING, _NAME = 2, 4, 5, 9, 12


@dataclass(slots=True)
class MessageRow:
    """One message to insert: ``values`` in :data:`INSERT_COLUMNS` order and its full-text
    ``body``/``meta``."""

    values: list[Any]
    body: str = ""
    meta: str = ""


@dataclass(slots=True)
class PreparedBatch:
    """The rows of one ``append_messages`` call and how many tool calls they hold."""

    rows: list[MessageRow]
    tool_calls: int


def as_message(msg: Any, index: int) -> Mapping[str, Any]:
    """An OpenAI-style message mapping from a dict or an SDK message object."""
    if isinstance(msg, Mapping):
        return msg
    dump = getattr(msg, "model_dump", None)
    if callable(dump):
        data = dump()
        if isinstance(data, Mapping):
            return data
    raise SessionStoreError(
        f"message {index} is a {type(msg).__name__}, not an OpenAI-style message dict "
        '({"role": ..., "content": ...}); nothing of this call was stored'
    )


def estimate_tokens(msg: Mapping[str, Any], content: str) -> int:
    try:
        return int(estimate_message_tokens(dict(msg)))
    except Exception:  # odd shapes still get a count: ~4 characters per token
        return max(1, len(content) // 4)


def indexed_text(row: tuple[object, ...], cap: int) -> tuple[int, str, str]:
    """``(rowid, body, meta)`` that ``messages_fts`` holds for one stored message, given as
    ``(id, content, name, tool_name, tool_calls)``. :func:`prepare_messages` indexes exactly
    this, so the text of a row can be recomputed to remove it from the contentless index
    (deterministic for a given ``cap``)."""
    rowid, content, name, tool_name, tool_calls = row
    calls: Any
    try:
        calls = json.loads(str(tool_calls)) if tool_calls else None
    except (ValueError, RecursionError):
        calls = None
    names, args = tool_call_parts(calls)
    tool = " ".join(filter(None, [str(tool_name) if tool_name else None, *names]))
    body, meta = index_fields(
        str(content or ""),
        name=str(name) if name else None,
        tool_name=tool or None,
        tool_args=args,
        cap=cap,
    )
    return int(str(rowid)), body, meta


def prepare_messages(
    session_id: str,
    messages: Sequence[Any],
    *,
    base_ts: float,
    redact_secrets: bool,
    index_char_cap: int,
) -> PreparedBatch:
    """Rows for ``messages`` (see the module docstring). A message without a usable
    timestamp gets ``base_ts`` plus a microsecond per position, keeping the batch's order."""
    items = [as_message(msg, index) for index, msg in enumerate(messages)]
    rows: list[MessageRow] = []
    tool_names: list[tuple[str | None, list[str]]] = []
    for offset, msg in enumerate(items):
        role = as_text(msg.get("role")) or "user"
        content = content_text(msg.get("content"))
        calls = msg.get("tool_calls")
        clean_calls = clean_value(calls) if calls else None
        names, _ = tool_call_parts(clean_calls)
        tool_name = optional_text(
            msg.get("tool_name") or (msg.get("name") if role == "tool" else None)
        )
        tokens = clamp_int(msg.get("token_count"))
        values: list[Any] = [
            session_id,
            role,
            content,
            optional_text(msg.get("tool_call_id")),
            json_text(clean_calls) if clean_calls else None,
            tool_name,
            clean_timestamp(msg.get("timestamp"), base_ts + offset * 1e-6),
            estimate_tokens(msg, content) if tokens is None else tokens,
            optional_text(msg.get("finish_reason")),
            optional_text(msg.get("reasoning")),
            1 if msg.get("_active", True) else 0,
            1 if msg.get("_compacted", False) else 0,
            optional_text(msg.get("name")) if role != "tool" else None,
        ]
        rows.append(MessageRow(values))
        tool_names.append((tool_name, names))
    if redact_secrets and rows:
        texts = [[r.values[_CONTENT], r.values[_CALLS], r.values[_REASONING]] for r in rows]
        (masked,) = redact_payload(texts)
        for row, (content, calls_json, reasoning) in zip(rows, masked, strict=True):
            row.values[_CONTENT], row.values[_CALLS], row.values[_REASONING] = (
                content,
                calls_json,
                reasoning,
            )
    for row in rows:  # indexed from the stored values, so removal can recompute it
        stored = (0, row.values[_CONTENT], row.values[_NAME], row.values[_TOOL], row.values[_CALLS])
        _, row.body, row.meta = indexed_text(stored, index_char_cap)
    return PreparedBatch(rows, sum(len(names) for _, names in tool_names))


__all__ = [
    "INSERT_COLUMNS",
    "MessageRow",
    "PreparedBatch",
    "as_message",
    "estimate_tokens",
    "indexed_text",
    "prepare_messages",
]
