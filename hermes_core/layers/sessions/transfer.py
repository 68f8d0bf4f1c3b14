"""Session import and export formats (the rules behind ``hermes sessions import/export``).

Export formats:

* ``jsonl`` — one ``{"type": "session", ...}`` line, then one ``{"type": "message", ...}``
  line per message (every stored row, compacted and rewound ones included); lossless and
  re-importable.
* ``md`` — a readable transcript (live and compacted rows).

Import accepts our JSONL export (one or many sessions), an OpenAI-style messages list (a JSON
array, or an object with ``"messages"``), or JSONL with one OpenAI message per line. The
whole file is read and validated before anything is written; a problem raises
:class:`TransferError` naming the line (or message) and field.

This module alone turns exported ``active``/``compacted`` fields into the archive's private
``_active``/``_compacted`` append flags.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.errors import SessionStoreError
from hermes_core.layers.sessions.records import SessionRecord, StoredMessage

EXPORT_FORMATS = ("jsonl", "md")
ROLES = ("system", "developer", "user", "assistant", "tool", "function")
"""OpenAI chat roles accepted on import; anything else is refused before a row is written."""
CHUNK = 200


class TransferError(SessionStoreError):
    """An import file cannot be read or holds invalid values; the message names the file,
    the line or message and the field, and says what was expected."""


@dataclass(slots=True)
class ImportGroup:
    """One session to import: its ``session`` fields (empty for a bare message list) and
    its messages as found in the file."""

    fields: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ImportedSession:
    """What happened to one :class:`ImportGroup`."""

    session_id: str
    messages: int
    renamed_from: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping (the ``--json`` report row)."""
        return {
            "session_id": self.session_id,
            "messages": self.messages,
            "renamed_from": self.renamed_from,
        }


# --------------------------------------------------------------------------- export


def _when(ts: float | None) -> str:
    if not ts:
        return "-"
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def export_jsonl(record: SessionRecord, messages: list[StoredMessage]) -> str:
    """The lossless JSONL export of one session (``messages`` should include inactive rows)."""
    head = {"type": "session", **record.to_dict(), "system_prompt": record.system_prompt}
    rows = [json.dumps(head, ensure_ascii=False)]
    rows += [json.dumps({"type": "message", **m.to_dict()}, ensure_ascii=False) for m in messages]
    return "\n".join(rows) + "\n"


def export_markdown(record: SessionRecord, messages: list[StoredMessage]) -> str:
    """A readable Markdown transcript of the live and compacted rows."""
    lines = [f"# {record.title or record.id}", ""]
    lines.append(f"- id: `{record.id}`")
    lines.append(f"- source: {record.source}")
    lines.append(f"- started: {_when(record.started_at)}")
    if record.model:
        lines.append(f"- model: {record.model}")
    if record.parent_session_id:
        lines.append(f"- parent: `{record.parent_session_id}`")
    lines.append("")
    for m in messages:
        if not (m.active or m.compacted):
            continue
        who = m.role + (f" ({m.tool_name})" if m.tool_name else "")
        who += f" — {m.name}" if m.name else ""
        lines.append(f"## {who} · {_when(m.timestamp)}")
        lines.append("")
        if m.content:
            lines.append(m.content)
        if m.tool_calls:
            for call in m.tool_calls:
                fn = call.get("function", {})
                lines.append(f"\n> called `{fn.get('name')}` with `{fn.get('arguments')}`")
        lines.append("")
    return "\n".join(lines)


def export_session(db: SessionDB, session_id: str, fmt: str) -> tuple[str, int]:
    """``(text, message count)`` of one session in ``fmt`` (``jsonl`` or ``md``)."""
    if fmt not in EXPORT_FORMATS:
        raise TransferError(
            f"unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}"
        )
    record = db.get_session(session_id)
    if record is None:
        raise TransferError(f"no session {session_id!r}; list ids with `hermes sessions list`")
    messages = db.get_messages(session_id, include_inactive=True)
    text = export_markdown(record, messages) if fmt == "md" else export_jsonl(record, messages)
    return text, len(messages)


# --------------------------------------------------------------------------- import: read


def read_import(path: Path) -> list[ImportGroup]:
    """Every session in ``path`` (any accepted format), validated. Raises
    :class:`TransferError`; nothing is written."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise TransferError(f"cannot read {path}: {exc}") from exc
    stripped = text.strip()
    if not stripped:
        raise TransferError(f"{path} is empty — nothing to import")
    data: Any
    try:
        data = json.loads(stripped)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return [ImportGroup({}, check_messages(data["messages"], path))]
    if isinstance(data, list):
        return [ImportGroup({}, check_messages(data, path))]
    groups: list[ImportGroup] = []
    loose: list[dict[str, Any]] = []
    for lineno, line in enumerate(stripped.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise TransferError(
                f"{path}:{lineno} is not valid JSON ({exc}) — expected our JSONL export, "
                "a JSON list of OpenAI messages, or one message per line"
            ) from exc
        if not isinstance(row, dict):
            raise TransferError(f"{path}:{lineno}: expected a JSON object")
        kind = row.get("type")
        if kind == "session":
            groups.append(ImportGroup(row))
        elif kind == "message":
            if not groups:
                raise TransferError(
                    f"{path}:{lineno}: message before any session line — was the file cut?"
                )
            check_messages([row], path)
            groups[-1].messages.append(row)
        else:
            loose.append(row)
    if loose:
        groups.append(ImportGroup({}, check_messages(loose, path)))
    return groups


def check_messages(items: list[Any], path: Path) -> list[dict[str, Any]]:
    """``items`` as OpenAI messages, or :class:`TransferError` naming the bad one."""
    if not items:
        raise TransferError(
            f"{path} holds an empty message list — nothing to import (expected at least one "
            '{"role": "user", "content": "..."} message)'
        )
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("role"), str):
            raise TransferError(
                f"{path}: message {i} has no 'role' — each item must be an OpenAI message "
                '({"role": "user", "content": "..."})'
            )
        if item["role"] not in ROLES:
            raise TransferError(
                f"{path}: message {i} has role {item['role']!r} — use one of "
                f"{', '.join(ROLES)}; nothing was imported"
            )
        out.append(item)
    return out


def _to_append(msg: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in msg.items() if k not in ("type", "id", "session_id")}
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        # Ollama-style exports carry arguments as an object; OpenAI wants a JSON string.
        out["tool_calls"] = [_string_arguments(c) for c in calls]
    if "active" in msg:
        out["_active"] = bool(msg["active"])
    if "compacted" in msg:
        out["_compacted"] = bool(msg["compacted"])
    return out


def _string_arguments(call: Any) -> Any:
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict) or "arguments" not in fn or isinstance(fn["arguments"], str):
        return call
    args = fn["arguments"]
    text = "" if args is None else json.dumps(args, ensure_ascii=False)
    return {**call, "function": {**fn, "arguments": text}}


# --------------------------------------------------------------------------- import: write


def import_groups(
    db: SessionDB,
    groups: list[ImportGroup],
    *,
    source: str = "import",
    title: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[ImportedSession]:
    """Write validated groups into the archive. A session id already present gets a new
    id (reported as ``renamed_from``). ``progress(n)`` is called as messages are written."""
    report: list[ImportedSession] = []
    for group in groups:
        fields, messages = group.fields, group.messages
        sid = str(fields.get("id") or f"import-{uuid.uuid4().hex[:12]}")
        renamed = None
        if db.get_session(sid) is not None:
            renamed, sid = sid, f"{sid}-import-{uuid.uuid4().hex[:6]}"
        started = fields.get("started_at")
        if not isinstance(started, int | float):
            stamps = [m.get("timestamp") for m in messages]
            numeric = [s for s in stamps if isinstance(s, int | float)]
            started = min(numeric) if numeric else time.time()
        db.create_session(
            sid,
            source=str(fields.get("source") or source),
            user_id=fields.get("user_id"),
            model=fields.get("model"),
            parent_session_id=fields.get("parent_session_id"),
            started_at=float(started),
            title=fields.get("title") or title,
            system_prompt=fields.get("system_prompt"),
        )
        for start in range(0, len(messages), CHUNK):
            chunk = [_to_append(m) for m in messages[start : start + CHUNK]]
            db.append_messages(sid, chunk, timestamp=float(started))
            if progress is not None:
                progress(len(chunk))
        if fields.get("ended_at"):
            db.end_session(sid, str(fields.get("end_reason") or "imported"))
        report.append(ImportedSession(sid, len(messages), renamed))
    return report


__all__ = [
    "EXPORT_FORMATS",
    "ROLES",
    "ImportGroup",
    "ImportedSession",
    "TransferError",
    "check_messages",
    "export_jsonl",
    "export_markdown",
    "export_session",
    "import_groups",
    "read_import",
]
