"""Session import and export formats (the rules behind ``hermes-memory sessions import/export``).

Export formats:

* ``jsonl`` — one ``{"type": "session", ...}`` line, then one ``{"type": "message", ...}``
  line per message (every stored row, compacted and rewound ones included); lossless and
  re-importable.
* ``md`` — a readable transcript (live and compacted rows).

Import accepts our JSONL export (one or many sessions), an OpenAI-style messages list (a JSON
array, or an object with ``"messages"``), or JSONL with one OpenAI message per line. The
whole file is read and validated before anything is written; invalid values raise
:class:`TransferError` naming each line and field. A file is written in one transaction (a
process killed mid-way leaves nothing), into one user scope; a re-run of the same file is
recognised and writes nothing.

This module alone turns exported ``active``/``compacted`` fields into the archive's private
``_active``/``_compacted`` append flags.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_core.fsutil import read_regular_text
from hermes_core.layers.sessions.archive import SessionStore
from hermes_core.layers.sessions.errors import SessionStoreError
from hermes_core.layers.sessions.records import (
    ALL_USERS,
    SessionRecord,
    StoredMessage,
    UserScope,
    content_text,
    scope_sql,
)
from hermes_core.layers.sessions.sanitize import INT_MAX, TIMESTAMP_MAX, clean_value
from hermes_core.security.redaction import redact

EXPORT_FORMATS = ("jsonl", "md")
ROLES = ("system", "developer", "user", "assistant", "tool", "function")
"""OpenAI chat roles accepted on import; anything else is refused before a row is written."""
CHUNK = 200
MAX_IMPORT_BYTES = 1024 * 1024 * 1024
"""An import file larger than this is refused unread (split it)."""


class TransferError(SessionStoreError):
    """An import file cannot be read or holds invalid values; the message names the file,
    the line or message and the field, and says what was expected."""


@dataclass(slots=True)
class ImportGroup:
    """One session to import: its ``session`` fields (empty for a bare message list), its
    messages as found in the file, and where they were (line numbers, when known)."""

    fields: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    line: int | None = None
    lines: list[int | None] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ImportedSession:
    """What happened to one :class:`ImportGroup`: ``status`` is ``imported``, ``already
    imported`` (a re-run: nothing written) or ``continued`` (a Hermes Agent session imported
    before and continued there since: ``messages`` new ones were appended)."""

    session_id: str
    messages: int
    renamed_from: str | None = None
    status: str = "imported"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping (the ``--json`` report row)."""
        return {
            "session_id": self.session_id,
            "messages": self.messages,
            "renamed_from": self.renamed_from,
            "status": self.status,
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


def export_session(
    db: SessionStore, session_id: str, fmt: str, *, user_id: UserScope
) -> tuple[str, int]:
    """``(text, message count)`` of one session of ``user_id``'s scope in ``fmt`` (``jsonl``
    or ``md``); a session outside the scope is reported missing."""
    if fmt not in EXPORT_FORMATS:
        raise TransferError(
            f"unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}"
        )
    record = db.get_session(session_id, user_id=user_id)
    if record is None:
        raise TransferError(
            f"no session {session_id!r}; list ids with `hermes-memory sessions list`"
        )
    messages = db.get_messages(session_id, include_inactive=True)
    text = export_markdown(record, messages) if fmt == "md" else export_jsonl(record, messages)
    return text, len(messages)


def export_sessions(
    db: SessionStore, session_ids: Sequence[str], fmt: str, *, user_id: UserScope
) -> tuple[str, int]:
    """Several sessions in one text, oldest first as given: JSONL records simply follow
    each other (``hermes-memory sessions import`` reads them back as separate sessions); Markdown
    sessions are separated by a rule. Returns ``(text, message count)``."""
    parts: list[str] = []
    total = 0
    for session_id in session_ids:
        text, count = export_session(db, session_id, fmt, user_id=user_id)
        parts.append(text if fmt == "jsonl" else text.rstrip("\n") + "\n")
        total += count
    separator = "" if fmt == "jsonl" else "\n---\n\n"
    return separator.join(parts), total


# --------------------------------------------------------------------------- import: read

MAX_REPORTED = 20
"""Invalid values listed in one :class:`TransferError` (the rest are counted)."""
_TEXT_FIELDS = ("tool_call_id", "name", "tool_name", "finish_reason", "reasoning")
_SESSION_TEXT_FIELDS = (
    "title",
    "source",
    "model",
    "parent_session_id",
    "system_prompt",
    "end_reason",
)


def read_import(path: Path) -> list[ImportGroup]:
    """Every session in ``path`` (any accepted format), validated: a file that cannot be
    read, or any invalid value, raises :class:`TransferError` naming the line and field (up
    to :data:`MAX_REPORTED` of them). Nothing is written."""
    try:
        text = read_regular_text(path, max_bytes=MAX_IMPORT_BYTES, what="import file")
    except (OSError, UnicodeDecodeError) as exc:
        raise TransferError(f"cannot read {path}: {exc} — save it as UTF-8 JSON/JSONL") from exc
    stripped = text.strip()
    if not stripped:
        raise TransferError(f"{path} is empty — nothing to import")
    data: Any
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        data = None
    groups: list[ImportGroup]
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        match = re.search(r'"messages"\s*:\s*\[', text)
        lines = _array_lines(text, match.end() - 1) if match else None
        groups = [_loose_group(data["messages"], path, lines)]
    elif isinstance(data, list):
        groups = [_loose_group(data, path, _array_lines(text, text.index("[")))]
    else:
        groups = _read_jsonl(text, path)
    problems = [p for group in groups for p in _problems(group, path)]
    if problems:
        more = len(problems) - MAX_REPORTED
        listed = "\n".join(f"  {p}" for p in problems[:MAX_REPORTED])
        raise TransferError(
            f"{path}: {len(problems)} invalid value(s); nothing was imported — fix them and "
            f"rerun:\n{listed}" + (f"\n  … and {more} more" if more > 0 else "")
        )
    return groups


def _read_jsonl(text: str, path: Path) -> list[ImportGroup]:
    groups: list[ImportGroup] = []
    loose: list[dict[str, Any]] = []
    loose_lines: list[int | None] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise TransferError(
                f"{path}:{lineno} is not valid JSON ({exc}) — expected our JSONL export, "
                "a JSON list of OpenAI messages, or one message per line; nothing was imported"
            ) from exc
        if not isinstance(row, dict):
            raise TransferError(
                f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}; "
                "nothing was imported"
            )
        kind = row.get("type")
        if kind == "session":
            groups.append(ImportGroup(row, line=lineno))
        elif kind == "message":
            if not groups:
                raise TransferError(
                    f"{path}:{lineno}: message before any session line — was the file cut?"
                )
            groups[-1].messages.append(row)
            groups[-1].lines.append(lineno)
        else:
            loose.append(row)
            loose_lines.append(lineno)
    if loose:
        groups.append(_loose_group(loose, path, loose_lines))
    for group in groups:
        if not group.messages:
            raise TransferError(
                f"{path}:{group.line}: session {group.fields.get('id')!r} has no message "
                "lines — was the file cut? nothing was imported"
            )
    return groups


def _loose_group(items: list[Any], path: Path, lines: list[int | None] | None) -> ImportGroup:
    if not items:
        raise TransferError(
            f"{path} holds an empty message list — nothing to import (expected at least one "
            '{"role": "user", "content": "..."} message)'
        )
    if lines is None or len(lines) != len(items):
        lines = [None] * len(items)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            where = f"{path}:{lines[i]}" if lines[i] else f"{path}: message {i}"
            raise TransferError(
                f"{where}: expected an OpenAI message object "
                '({"role": "user", "content": "..."}), got '
                f"{type(item).__name__}; nothing was imported"
            )
    return ImportGroup({}, list(items), lines=list(lines))


def _array_lines(text: str, start: int) -> list[int | None] | None:
    """Line numbers of the items of the JSON array whose ``[`` is at ``start``."""
    decoder = json.JSONDecoder()
    out: list[int | None] = []
    pos, line, last = start + 1, 1 + text.count("\n", 0, start + 1), start + 1
    try:
        while True:
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(text) or text[pos] == "]":
                return out
            line += text.count("\n", last, pos)
            last = pos
            out.append(line)
            _, pos = decoder.raw_decode(text, pos)
    except (ValueError, RecursionError):
        return None


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _number_problem(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "must be a number (epoch seconds) or null"
    if not math.isfinite(value) or not 0 <= value <= TIMESTAMP_MAX:
        return "must be a finite epoch time between 1970 and 3000"
    return None


def _message_problems(msg: dict[str, Any]) -> list[tuple[str, str, Any]]:
    out: list[tuple[str, str, Any]] = []
    role = msg.get("role")
    if not isinstance(role, str) or role not in ROLES:
        out.append(("role", f"must be one of {', '.join(ROLES)}", role))
    content = msg.get("content")
    if content is not None and not isinstance(content, str | list):
        out.append(("content", "must be a string, a list of content parts or null", content))
    if isinstance(content, list) and not all(isinstance(p, str | dict) for p in content):
        out.append(("content", "parts must be strings or objects", content))
    problem = _number_problem(msg.get("timestamp"))
    if problem:
        out.append(("timestamp", problem, msg.get("timestamp")))
    tokens = msg.get("token_count")
    if tokens is not None and (
        isinstance(tokens, bool) or not isinstance(tokens, int) or not 0 <= tokens <= INT_MAX
    ):
        out.append(("token_count", "must be a non-negative integer or null", tokens))
    calls = msg.get("tool_calls")
    if calls is not None and (
        not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls)
    ):
        out.append(("tool_calls", "must be a list of tool-call objects or null", calls))
    for name in _TEXT_FIELDS:
        value = msg.get(name)
        if value is not None and not isinstance(value, str):
            out.append((name, "must be a string or null", value))
    for name in ("active", "compacted"):
        value = msg.get(name)
        if value is not None and value not in (True, False, 0, 1):
            out.append((name, "must be true, false, 0 or 1", value))
    return out


def _session_problems(fields: dict[str, Any]) -> list[tuple[str, str, Any]]:
    out: list[tuple[str, str, Any]] = []
    sid = fields.get("id")
    if sid is not None and (not isinstance(sid, str) or not sid.strip() or len(sid) > 200):
        out.append(("id", "must be a non-empty string of at most 200 characters", sid))
    for name in ("started_at", "ended_at"):
        problem = _number_problem(fields.get(name))
        if problem:
            out.append((name, problem, fields.get(name)))
    for name in _SESSION_TEXT_FIELDS:
        value = fields.get(name)
        if value is not None and not isinstance(value, str):
            out.append((name, "must be a string or null", value))
    return out


def _problems(group: ImportGroup, path: Path) -> list[str]:
    out: list[str] = []
    if group.fields:
        where = f"{path}:{group.line}" if group.line else str(path)
        out += [
            f"{where}: field '{name}' {why} (got {_show(value)})"
            for name, why, value in _session_problems(group.fields)
        ]
    for i, msg in enumerate(group.messages):
        line = group.lines[i] if i < len(group.lines) else None
        where = f"{path}:{line}" if line else f"{path}: message {i}"
        out += [
            f"{where}: field '{name}' {why} (got {_show(value)})"
            for name, why, value in _message_problems(msg)
        ]
    return out


def check_messages(items: list[Any], path: Path) -> list[dict[str, Any]]:
    """``items`` as validated OpenAI messages, or :class:`TransferError` naming the bad
    ones (message index and field)."""
    group = _loose_group(items, path, None)
    problems = _problems(group, path)
    if problems:
        raise TransferError(
            f"{path}: {len(problems)} invalid value(s); nothing was imported:\n  "
            + "\n  ".join(problems[:MAX_REPORTED])
        )
    return group.messages


def _to_append(msg: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in msg.items() if k not in ("type", "id", "session_id", "turn_key")}
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        # Ollama-style exports carry arguments as an object; OpenAI wants a JSON string.
        out["tool_calls"] = [_string_arguments(c) for c in calls]
    out.pop("active", None)
    out.pop("compacted", None)
    if msg.get("active") is not None:
        out["_active"] = bool(msg["active"])
    if msg.get("compacted") is not None:
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


def group_digest(group: ImportGroup) -> str:
    """Identity of an imported session: its id (when the file has one) and its messages."""
    body = json.dumps(
        clean_value([group.fields.get("id"), group.messages]),
        ensure_ascii=False,
        sort_keys=True,
        allow_nan=False,
    )
    return hashlib.sha256(body.encode("utf-8", "replace")).hexdigest()


def stored_prefix(db: SessionStore, session_id: str, messages: list[dict[str, Any]]) -> int | None:
    """How many of ``messages`` session ``session_id`` already holds, when its stored
    transcript (role and text, redacted as stored) is a prefix of them; ``None`` when it
    differs or is longer."""
    stored = db.get_messages(session_id, include_inactive=True)
    if len(stored) > len(messages):
        return None
    for row, msg in zip(stored, messages, strict=False):
        text = content_text(msg.get("content"))
        if db.redact_secrets:
            text = redact(text)
        if row.role != msg.get("role") or row.content != text:
            return None
    return len(stored)


def _same_transcript(db: SessionStore, session_id: str, messages: list[dict[str, Any]]) -> bool:
    return stored_prefix(db, session_id, messages) == len(messages)


def append_imported(
    db: SessionStore,
    session_id: str,
    messages: list[dict[str, Any]],
    *,
    started: float,
    user_id: str | None,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Append imported ``messages`` to ``session_id`` in chunks (``progress(n)`` per chunk)."""
    for start in range(0, len(messages), CHUNK):
        chunk = [_to_append(m) for m in messages[start : start + CHUNK]]
        db.append_messages(session_id, chunk, timestamp=started, user_id=user_id)
        if progress is not None:
            progress(len(chunk))


def import_groups(
    db: SessionStore,
    groups: list[ImportGroup],
    *,
    source: str = "import",
    title: str | None = None,
    user_id: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[ImportedSession]:
    """Write validated groups into ``user_id``'s scope in ONE transaction: all of them or,
    on any error (or if the process dies), none.

    A group imported before (same digest in this scope), or whose id already holds the same
    transcript in this scope, is skipped (``status: "already imported"``); a group whose id
    is taken by a different session gets a new id (``renamed_from``). ``progress(n)`` is
    called as messages are written."""
    report: list[ImportedSession] = []
    with db.transaction():
        for group in groups:
            report.append(_import_one(db, group, source, title, user_id, progress))
    return report


def _import_one(
    db: SessionStore,
    group: ImportGroup,
    source: str,
    title: str | None,
    user_id: str | None,
    progress: Callable[[int], None] | None,
) -> ImportedSession:
    fields, messages = group.fields, group.messages
    digest = group_digest(group)
    scope, params = scope_sql(user_id)
    seen = db.read(
        f"SELECT id FROM sessions WHERE import_digest=? AND {scope} LIMIT 1", (digest, *params)
    )
    wanted = str(fields.get("id") or f"import-{digest[:12]}")
    if seen:
        if progress is not None:
            progress(len(messages))
        return ImportedSession(str(seen[0][0]), len(messages), None, "already imported")
    sid, renamed = wanted, None
    if db.get_session(sid, user_id=ALL_USERS) is not None:  # ids are never shared
        if db.get_session(sid, user_id=user_id) is not None and _same_transcript(db, sid, messages):
            if progress is not None:
                progress(len(messages))
            return ImportedSession(sid, len(messages), None, "already imported")
        renamed, sid = sid, f"{sid}-import-{uuid.uuid4().hex[:6]}"
    started = fields.get("started_at")
    if not isinstance(started, int | float) or isinstance(started, bool):
        numeric = [
            m["timestamp"]
            for m in messages
            if isinstance(m.get("timestamp"), int | float) and not isinstance(m["timestamp"], bool)
        ]
        started = min(numeric) if numeric else time.time()
    db.create_session(
        sid,
        source=str(fields.get("source") or source),
        user_id=user_id,
        model=fields.get("model"),
        parent_session_id=fields.get("parent_session_id"),
        started_at=float(started),
        title=fields.get("title") or title,
        system_prompt=fields.get("system_prompt"),
    )
    db.write(lambda c: c.execute("UPDATE sessions SET import_digest=? WHERE id=?", (digest, sid)))
    append_imported(db, sid, messages, started=float(started), user_id=user_id, progress=progress)
    if fields.get("ended_at"):
        db.end_session(sid, str(fields.get("end_reason") or "imported"))
    return ImportedSession(sid, len(messages), renamed)


def import_file(
    db: SessionStore,
    path: Path,
    *,
    source: str = "import",
    title: str | None = None,
    user_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[ImportedSession]:
    """:func:`read_import` then :func:`import_groups` (one transaction for the file).
    ``progress(done, total)`` reports messages written."""
    groups = read_import(path)
    total = sum(len(group.messages) for group in groups)
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, total)

    return import_groups(db, groups, source=source, title=title, user_id=user_id, progress=advance)


__all__ = [
    "EXPORT_FORMATS",
    "ROLES",
    "ImportGroup",
    "ImportedSession",
    "TransferError",
    "append_imported",
    "check_messages",
    "export_jsonl",
    "export_markdown",
    "export_session",
    "export_sessions",
    "group_digest",
    "import_file",
    "import_groups",
    "read_import",
    "stored_prefix",
]
