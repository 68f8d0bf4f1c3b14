"""The pages of ``hermes-memory ui``: each reads or changes one user's data through the host, the
layers' public functions and :mod:`hermes_core.inspector`, and returns HTML built with
:mod:`.html` (all text escaped). Handlers are plain functions of a :class:`Ctx`; the app
(:mod:`.app`) turns requests into contexts and enforces :mod:`.guard`'s rules first.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_core import recall_trace
from hermes_core.errors import HermesError
from hermes_core.host import new_session_id
from hermes_core.inspector import forget
from hermes_core.inspector.people import list_people
from hermes_core.inspector.provider_memories import forget_memories, list_memories, set_expiry
from hermes_core.layers.memory.approval import approve_pending, reject_pending
from hermes_core.layers.memory.archive import MemoryArchive
from hermes_core.layers.memory.backends import open_pending
from hermes_core.layers.memory.engine import MemoryEngine, limit_for
from hermes_core.layers.memory.plugin import enabled_targets
from hermes_core.layers.memory.store import FILENAMES, char_count
from hermes_core.layers.memory.tool import MemoryTool
from hermes_core.layers.sessions.search import SessionSearch
from hermes_core.layers.sessions.transfer import export_session
from hermes_core.layers.skills.find import SkillStatsStore
from hermes_core.layers.skills.history import HistoryError, list_versions, revert
from hermes_core.layers.skills.library import local_root, read_text_file
from hermes_core.layers.skills.tools import SkillsService
from hermes_core.providers import recall_skips
from hermes_core.providers.expiry import parse_date
from hermes_core.providers.inspect import inspectable, is_expired
from hermes_core.types import MemoryTarget, SessionInfo, ToolContext

from .html import bar_chart, esc, form, hidden, link, table, usage_bar, user_label, when

if TYPE_CHECKING:
    from hermes_core.host import MemoryHost

MAX_FORM_CHARS = 20_000


class NotFound(HermesError):
    """The thing asked for does not exist in this user's view (404)."""


@dataclass
class Ctx:
    """One request as a page sees it: the host, the user (``None``: no-user scope), the
    query or form values, the CSRF token and whether changes are offered."""

    host: MemoryHost
    user: str | None
    params: Mapping[str, str]
    csrf: str
    read_only: bool

    def get(self, name: str, default: str = "") -> str:
        value = self.params.get(name, default)
        return value[:MAX_FORM_CHARS] if isinstance(value, str) else default

    def form(self, action: str, fields: str, button: str, **kw: Any) -> str:
        if self.read_only:
            return ""
        return form(action, fields, button, csrf=self.csrf, user=self.user, **kw)


@dataclass
class Done:
    """The outcome of a change: where to go back to and what to say."""

    path: str
    message: str
    ok: bool = True


# ---------------------------------------------------------------------------------- people


def people_ids(host: MemoryHost) -> list[str | None]:
    try:
        return [p.user_id for p in list_people(host)]
    except HermesError:
        return []


def people_page(ctx: Ctx) -> str:
    people = list_people(ctx.host)
    rows = [
        (
            link("/memory", user_label(p.user_id), u=p.user_id),
            str(p.memory_entries),
            str(p.user_entries),
            str(p.pending),
            str(p.archived),
            str(p.sessions),
            "—" if p.provider_memories is None else str(p.provider_memories),
            str(p.traced_turns),
            esc(when(p.last_active)),
        )
        for p in people
    ]
    headers = (
        "user",
        "MEMORY.md",
        "USER.md",
        "staged",
        "archived",
        "sessions",
        "provider",
        "traced turns",
        "last active",
    )
    settings = ctx.host.settings.memory
    usage = []
    for p in people:
        engine = MemoryEngine(ctx.host.home, settings, p.user_id)
        usage.append((user_label(p.user_id), float(char_count(engine.store("user").entries()))))
    chart = bar_chart(
        f"USER.md usage per user (chars, limit {limit_for(settings, 'user'):,})", usage
    )
    return table(headers, rows, cls="people") + chart


# ---------------------------------------------------------------------------------- memory


def _engine(ctx: Ctx) -> MemoryEngine:
    return MemoryEngine(ctx.host.home, ctx.host.settings.memory, ctx.user)


def memory_page(ctx: Ctx) -> str:
    engine = _engine(ctx)
    settings = ctx.host.settings.memory
    parts: list[str] = []
    for target in enabled_targets(settings):
        store = engine.store(target)
        state = store.read()
        limit = limit_for(settings, target)
        parts.append(f"<h2>{esc(FILENAMES[target])}</h2>")
        if not state.readable:
            parts.append(f'<p class="dirty">could not be read: {esc(state.error)}</p>')
            continue
        parts.append(f"<p>{usage_bar(char_count(state.entries), limit)}</p>")
        expiries = engine.archive.expiries(target)
        rows = []
        for number, entry in enumerate(state.entries, start=1):
            edit = ctx.form(
                "/memory/replace",
                hidden("target", target)
                + hidden("old", entry)
                + f'<textarea name="new" aria-label="new text of entry {number}">'
                + f"{esc(entry)}</textarea>",
                "Save",
                cls="block",
            )
            remove = ctx.form(
                "/memory/remove",
                hidden("target", target) + hidden("old", entry),
                "Remove",
                confirm="Remove this entry?",
            )
            at = expiries.get(entry)
            tag = ""
            if at is not None:
                tag = (
                    '<span class="tag expired">expired — not in the prompt</span>'
                    if at <= time.time()
                    else f'<span class="tag">expires {esc(when(at)[:10])}</span>'
                )
            expire = ctx.form(
                "/memory/expire",
                hidden("target", target)
                + hidden("old", entry)
                + f'<input type="date" name="date" aria-label="expiry of entry {number}" '
                + f'value="{esc(when(at)[:10]) if at else ""}">',
                "Set expiry",
            )
            rows.append(
                (str(number), f'<div class="entry">{esc(entry)}</div>{tag}{edit}', remove + expire)
            )
        parts.append(table(("#", "entry", ""), rows, cls=f"entries-{target}"))
        parts.append(
            ctx.form(
                "/memory/add",
                hidden("target", target)
                + f'<textarea name="content" aria-label="new {esc(target)} entry" '
                + 'placeholder="A new entry"></textarea>',
                f"Add to {FILENAMES[target]}",
                cls="block",
            )
        )
    pending = open_pending(ctx.host.home, settings, ctx.user).list()
    parts.append("<h2>Staged writes waiting for approval</h2>")
    parts.append(
        table(
            ("id", "file", "origin", "staged", "operations", ""),
            [
                (
                    esc(r.id),
                    esc(FILENAMES[r.target]),
                    esc(r.origin),
                    esc(when(r.created_at)),
                    f'<div class="entry">{esc(r.summary())}</div>',
                    ctx.form("/memory/approve", hidden("id", r.id), "Approve")
                    + ctx.form("/memory/reject", hidden("id", r.id), "Reject"),
                )
                for r in pending
            ],
            cls="pending",
        )
    )
    archived = MemoryArchive(ctx.host.home, engine.scope).list(include_restored=True, limit=200)
    parts.append("<h2>Evicted entries (archive)</h2>")
    parts.append(
        table(
            ("id", "file", "archived", "reason", "entry", "provenance"),
            [
                (
                    esc(a.id),
                    esc(a.target),
                    esc(when(a.archived_at)),
                    esc(a.reason),
                    f'<div class="entry">{esc(a.content)}</div>'
                    + (' <span class="tag">restored</span>' if a.restored_at else ""),
                    esc(f"session {a.session_id}" if a.session_id else "—"),
                )
                for a in archived
            ],
            cls="archive",
        )
    )
    return "".join(parts)


def _target(ctx: Ctx) -> MemoryTarget:
    target = ctx.get("target")
    if target not in ("memory", "user"):
        raise HermesError("target must be memory or user")
    return "memory" if target == "memory" else "user"


def _memory_call(ctx: Ctx, args: dict[str, Any]) -> Done:
    """One memory tool call for the user, exactly as the agent's (scanner, limits,
    approval); the provider is told about committed writes."""
    engine = _engine(ctx)
    settings = ctx.host.settings.memory
    tool = MemoryTool(
        engine=engine,
        pending=open_pending(ctx.host.home, settings, ctx.user),
        targets=enabled_targets(settings),
    )
    info = SessionInfo(
        id=new_session_id(),
        home=ctx.host.home,
        settings=ctx.host.settings,
        source="ui",
        user_id=ctx.user,
    )

    def notify(write: Any) -> None:
        ctx.host.notify_memory_write(write, session=info)

    payload = json.loads(tool.handle(args, ToolContext(session=info, notify_memory_write=notify)))
    ok = payload.get("success") is True
    message = str(payload.get("message") or payload.get("error") or ("done" if ok else "refused"))
    if ok and payload.get("pending_id"):
        message = f"staged for approval ({payload['pending_id']}): {message}"
    return Done("/memory", message if ok else f"refused: {message}", ok)


def memory_add(ctx: Ctx) -> Done:
    return _memory_call(
        ctx, {"action": "add", "target": _target(ctx), "content": ctx.get("content")}
    )


def memory_replace(ctx: Ctx) -> Done:
    return _memory_call(
        ctx,
        {
            "action": "replace",
            "target": _target(ctx),
            "old_text": ctx.get("old"),
            "content": ctx.get("new"),
        },
    )


def memory_remove(ctx: Ctx) -> Done:
    return _memory_call(
        ctx, {"action": "remove", "target": _target(ctx), "old_text": ctx.get("old")}
    )


def memory_expire(ctx: Ctx) -> Done:
    """Give an entry an expiry date (``YYYY-MM-DD``, the start of that day, local time), or
    clear it (empty date). An expired entry stays in its file and leaves the prompt."""
    target = _target(ctx)
    engine = _engine(ctx)
    entry = ctx.get("old")
    if entry not in engine.store(target).entries():
        return Done("/memory", "refused: that entry is no longer in the file", False)
    try:
        moment = parse_date(ctx.get("date"))
    except HermesError as exc:
        return Done("/memory", f"refused: {exc}", False)
    engine.archive.set_expiry(target, entry, moment)
    if moment is None:
        return Done("/memory", "expiry cleared")
    if moment <= time.time():
        return Done("/memory", "expired: it leaves the prompt")
    return Done("/memory", f"expires {ctx.get('date').strip()}")


def memory_approve(ctx: Ctx) -> Done:
    engine = _engine(ctx)
    pending = open_pending(ctx.host.home, ctx.host.settings.memory, ctx.user)

    def notify(write: Any) -> None:
        ctx.host.notify_memory_write(write, user_id=ctx.user, source="ui")

    results = approve_pending(engine, pending, [ctx.get("id")], notify=notify)
    if not results:
        return Done("/memory", "no such staged write", False)
    lines = [
        f"{a.pending_id}: "
        + str(a.outcome.payload.get("message") or a.outcome.payload.get("error") or "")
        for a in results
    ]
    return Done("/memory", "; ".join(lines), all(a.success for a in results))


def memory_reject(ctx: Ctx) -> Done:
    pending = open_pending(ctx.host.home, ctx.host.settings.memory, ctx.user)
    results = reject_pending(pending, [ctx.get("id")])
    ok = bool(results) and all(done for _, done in results)
    return Done("/memory", "rejected" if ok else "no such staged write", ok)


# -------------------------------------------------------------------------------- sessions


def _archive(ctx: Ctx) -> Any:
    store = forget.open_archive(ctx.host)
    if store is None:
        raise NotFound("the session archive is off (sessions.enabled: false)")
    return store


def sessions_page(ctx: Ctx) -> str:
    query = ctx.get("q").strip()
    search = (
        '<form method="get" class="block">'
        + (hidden("u", ctx.user) if ctx.user is not None else "")
        + f'<input type="search" name="q" value="{esc(query)}" '
        + 'placeholder="search (English or 中文)">'
        "<button>Search</button></form>"
    )
    store = _archive(ctx)
    try:
        if query:
            result = SessionSearch(store, hidden_sources=()).run(
                {"query": query, "limit": 10, "detail": "full"}, user_id=ctx.user
            )
            if not result.get("success"):
                return search + f'<p class="dirty">{esc(result.get("error"))}</p>'
            found = [
                (
                    link("/session", item["session_id"], u=ctx.user, id=item["session_id"]),
                    esc(str(item.get("when") or "")[:16].replace("T", " ")),
                    esc(item.get("title") or ""),
                    esc(item.get("snippet", ""))
                    .replace("&gt;&gt;&gt;", "<mark>")
                    .replace("&lt;&lt;&lt;", "</mark>"),
                )
                for item in result.get("results", [])
            ]
            return search + table(("session", "when", "title", "match"), found, cls="results")
        records = store.list_sessions(limit=200, user_id=ctx.user)
        per_day = Counter(time.strftime("%Y-%m-%d", time.localtime(r.started_at)) for r in records)
        rows = [
            (
                link("/session", r.id, u=ctx.user, id=r.id),
                esc(when(r.started_at)),
                esc(r.source),
                esc(r.title or ""),
                str(r.message_count),
            )
            for r in records
        ]
        chart = bar_chart(
            "Archive growth (sessions started per day)", sorted(per_day.items())[-14:]
        )
        return (
            search
            + table(("session", "started", "source", "title", "messages"), rows, cls="sessions")
            + chart
        )
    finally:
        store.close()


def _record(ctx: Ctx, store: Any) -> Any:
    record = store.get_session(ctx.get("id"), user_id=ctx.user)
    if record is None:  # another user's session answers like one that does not exist
        raise NotFound("no such session for this user")
    return record


def session_page(ctx: Ctx) -> str:
    store = _archive(ctx)
    try:
        record = _record(ctx, store)
        messages = store.get_messages(record.id, include_inactive=True)
    finally:
        store.close()
    rows = [
        (
            esc(m.role),
            esc(when(m.timestamp)),
            f"<pre>{esc(m.content)}</pre>"
            + (
                f'<pre class="tag">tools: {esc(json.dumps(m.tool_calls, ensure_ascii=False))}</pre>'
                if m.tool_calls
                else ""
            ),
        )
        for m in messages
    ]
    actions = (
        link("/session/export", "Export JSONL", u=ctx.user, id=record.id, fmt="jsonl")
        + " · "
        + link("/session/export", "Export Markdown", u=ctx.user, id=record.id, fmt="md")
        + " "
        + ctx.form(
            "/session/delete",
            hidden("id", record.id),
            "Delete session",
            confirm="Delete this session for good?",
        )
    )
    head = (
        f"<p>{esc(record.source)} · started {esc(when(record.started_at))} · "
        f"{esc(record.title or '')}</p>"
    )
    return head + f"<p>{actions}</p>" + table(("role", "when", "text"), rows, cls="messages")


def session_export(ctx: Ctx) -> tuple[str, str, str]:
    """``(body, media type, filename)`` of one session of the user."""
    fmt = "md" if ctx.get("fmt") == "md" else "jsonl"
    store = _archive(ctx)
    try:
        record = _record(ctx, store)
        body, _count = export_session(store, record.id, fmt, user_id=ctx.user)
    finally:
        store.close()
    media = "text/markdown" if fmt == "md" else "application/x-ndjson"
    return body, media, f"session-{record.id}.{fmt}"


def session_delete(ctx: Ctx) -> Done:
    store = _archive(ctx)
    try:
        record = _record(ctx, store)
        store.delete_sessions([record.id])
    finally:
        store.close()
    return Done("/sessions", f"deleted session {record.id}")


# ---------------------------------------------------------------------------------- skills


def _skills(ctx: Ctx) -> SkillsService:
    return SkillsService.from_settings(ctx.host.home, ctx.host.settings.skills)


def skills_page(ctx: Ctx) -> str:
    service = _skills(ctx)
    library = service.library()
    stats = SkillStatsStore(service.home).stats_or_empty()
    rows = []
    for skill in sorted(library.skills.values(), key=lambda s: (s.category, s.name)):
        record = stats.get(skill.name)
        views = record.views if record else 0
        good = record.successes if record else 0
        bad = record.failures if record else 0
        rate = f"{100 * good / (good + bad):.0f}%" if good + bad else "—"
        rows.append(
            (
                link("/skill", skill.name, u=ctx.user, name=skill.name),
                esc(skill.category),
                esc(skill.root.label),
                esc(skill.meta.description),
                str(views),
                esc(rate),
            )
        )
    problems = "".join(
        f'<p class="dirty">{esc(p.path)}: {esc(p.error)}</p>' for p in library.problems
    )
    return (
        table(
            ("skill", "category", "tier", "description", "uses", "success rate"), rows, cls="skills"
        )
        + problems
    )


def skill_page(ctx: Ctx) -> str:
    service = _skills(ctx)
    skill = service.library().get(ctx.get("name"))
    if skill is None:
        raise NotFound("no such skill")
    text = read_text_file(skill.skill_md, max_chars=200_000)
    try:
        versions = list_versions(local_root(service.home), skill.name)
    except HistoryError:
        versions = []
    rows = [
        (
            str(v.number),
            esc(v.action),
            esc(when(v.created_at)),
            esc(v.origin),
            ctx.form(
                "/skill/revert",
                hidden("name", skill.name) + hidden("version", v.number),
                "Revert to this",
                confirm="Revert the skill to this version?",
            ),
        )
        for v in versions
    ]
    return (
        f"<p>{esc(skill.category)} · {esc(skill.root.label)} · {esc(skill.directory)}</p>"
        f'<h2>SKILL.md</h2><pre class="skill">{esc(text)}</pre><h2>History</h2>'
        + table(("version", "kept before", "when", "origin", ""), rows, cls="history")
    )


def skill_revert(ctx: Ctx) -> Done:
    service = _skills(ctx)
    name = ctx.get("name")
    try:
        number = int(ctx.get("version"))
        done = revert(
            service.home,
            local_root(service.home),
            name,
            number,
            keep=service.settings.history_versions,
        )
    except (ValueError, HistoryError) as exc:
        return Done("/skills", f"refused: {exc}", False)
    return Done("/skills", f"restored {name} version {done.restored.number}")


# -------------------------------------------------------------------------------- provider


def provider_page(ctx: Ctx) -> str:
    host = ctx.host
    status = host.provider_status
    active = host.provider
    parts = [
        "<p>Active provider: <strong>"
        + esc(
            active.name
            if active
            else (host.settings.memory.provider or "none (built-in memory only)")
        )
        + "</strong>"
        + (
            f" — {esc(status.reason)}"
            if status is not None and not status.active and status.reason
            else ""
        )
        + "</p>"
    ]
    checks = host.facade.health_check()
    parts.append("<h2>Health</h2>")
    parts.append(
        table(
            ("check", "ok", "detail", "fix"),
            [(esc(c.name), "✓" if c.ok else "✗", esc(c.detail), esc(c.fix or "")) for c in checks],
            cls="health",
        )
    )
    skips = recall_skips.load(host.home)
    parts.append("<h2>Recall skips</h2>")
    parts.append(
        table(
            ("provider", "skips"),
            [(esc(name), esc(recall_skips.describe(entry))) for name, entry in skips.items()],
            cls="skips",
        )
    )
    parts.append(_recall_charts(ctx))
    listing = list_memories(host, ctx.user, ctx.get("q"))
    if inspectable(active) is None:  # none active, or one that cannot list its memories
        parts.append(f'<p class="note">{esc(listing.note)}</p>')
        return "".join(parts)
    now = time.time()
    rows = []
    for m in listing.memories:
        text = f'<div class="entry{"" if m.active else " replaced"}">{esc(m.text)}</div>'
        if not m.active:
            text += (
                f'<span class="tag">replaced by {esc(m.superseded_by)} '
                f"{esc(when(m.replaced_at))}</span>"
            )
        if m.expires_at is not None:
            text += (
                '<span class="tag expired">expired — left recall</span>'
                if is_expired(m, now)
                else f'<span class="tag">expires {esc(when(m.expires_at)[:10])}</span>'
            )
        actions = ctx.form(
            "/provider/forget",
            hidden("id", m.id),
            "Forget",
            confirm="Delete this memory from the provider?",
        )
        if listing.can_expire and m.active:
            actions += ctx.form(
                "/provider/expire",
                hidden("id", m.id)
                + f'<input type="date" name="date" aria-label="expiry of memory {esc(m.id)}" '
                + f'value="{esc(when(m.expires_at)[:10]) if m.expires_at else ""}">',
                "Set expiry",
            )
        rows.append(
            (
                esc(m.id),
                text,
                esc(m.kind),
                esc(f"session {m.session_id}" if m.session_id else m.source or "—"),
                esc(when(m.created_at)),
                actions,
            )
        )
    search = (
        '<form method="get" class="block">'
        + (hidden("u", ctx.user) if ctx.user is not None else "")
        + f'<input type="search" name="q" value="{esc(ctx.get("q"))}" '
        + 'placeholder="filter memories"><button>Filter</button></form>'
    )
    parts.append(f"<h2>Memories of {esc(user_label(ctx.user))}</h2>" + search)
    if listing.note:
        parts.append(f'<p class="note">{esc(listing.note)}</p>')
    parts.append(
        table(("id", "memory", "type", "provenance", "created", ""), rows, cls="provider-memories")
    )
    return "".join(parts)


def _recall_charts(ctx: Ctx) -> str:
    """Recall latency per day (median of the user's traced turns) beside the skipped
    recalls per day (every provider, every user: the ledger is per home)."""
    by_day: dict[str, list[float]] = {}
    for turn in recall_trace.load(ctx.host.home, ctx.user):
        day = time.strftime("%Y-%m-%d", time.gmtime(turn.at))
        by_day.setdefault(day, []).append(turn.latency_ms)
    latency = [(day, statistics.median(values)) for day, values in sorted(by_day.items())]
    skips = recall_skips.per_day(ctx.host.home)
    return (
        '<div class="charts">'
        + bar_chart(
            f"Recall latency per day (median ms, {user_label(ctx.user)}'s traced turns)",
            latency[-14:],
            unit=" ms",
        )
        + bar_chart(
            "Recall skips per day (all providers)",
            [(day, float(n)) for day, n in list(skips.items())[-14:]],
        )
        + "</div>"
    )


def provider_forget(ctx: Ctx) -> Done:
    try:
        count = forget_memories(ctx.host, ctx.user, [ctx.get("id")])
    except HermesError as exc:
        return Done("/provider", str(exc), False)
    return Done("/provider", f"deleted {count} memory" if count else "no such memory", bool(count))


def provider_expire(ctx: Ctx) -> Done:
    """Give a provider memory an expiry date (``YYYY-MM-DD``) or clear it (empty)."""
    try:
        moment = set_expiry(ctx.host, ctx.user, ctx.get("id"), ctx.get("date"))
    except HermesError as exc:
        return Done("/provider", f"refused: {exc}", False)
    if moment is None:
        return Done("/provider", "expiry cleared")
    if moment <= time.time():
        return Done("/provider", "expired: it leaves recall")
    return Done("/provider", f"expires {ctx.get('date').strip()}")


# ----------------------------------------------------------------------------------- trace


def _traced_source(source: recall_trace.TraceSource) -> str:
    """One recalled block: who, how many, and each memory with its score when the provider
    reported one per memory (``MemoryContext.scores``, in the order of the block's
    ``- `` lines); otherwise the block as it went in front of the model."""
    head = (
        f'<span class="tag">{esc(source.label or source.layer)}</span> {esc(source.layer)} · '
        f"{source.count} memor{'y' if source.count == 1 else 'ies'}"
    )
    items = [line[2:] for line in source.text.splitlines() if line.startswith("- ")]
    if source.scores and len(items) == len(source.scores):
        rows = [
            (esc(f"{score:.3f}"), f"<pre>{esc(item)}</pre>")
            for item, score in zip(items, source.scores, strict=True)
        ]
        return f"<div>{head}{table(('score', 'memory'), rows, cls='scored')}</div>"
    scores = (
        f" · scores {esc(', '.join(f'{x:.3f}' for x in source.scores))}" if source.scores else ""
    )
    return f"<div>{head}{scores}<pre>{esc(source.text)}</pre></div>"


def trace_page(ctx: Ctx) -> str:
    turns = list(reversed(recall_trace.load(ctx.host.home, ctx.user)))
    if not ctx.host.settings.memory.recall_trace:
        note = "<p>memory.recall_trace is off: no new turns are recorded.</p>"
    else:
        note = f"<p>The last {ctx.host.settings.memory.recall_trace_turns} turns are kept.</p>"
    rows = []
    for t in turns:
        sources = "".join(_traced_source(s) for s in t.sources)
        rows.append(
            (
                esc(when(t.at)),
                link("/session", t.session_id, u=ctx.user, id=t.session_id) + f" #{t.turn}",
                f"<pre>{esc(t.query)}</pre>",
                sources or '<span class="empty">nothing recalled</span>',
                str(t.tokens),
                esc(f"{t.latency_ms:.1f} ms"),
            )
        )
    chart = bar_chart(
        "Recall latency of the last turns (ms)",
        [(f"#{t.turn} {when(t.at)[11:]}", t.latency_ms) for t in reversed(turns[:15])],
        unit=" ms",
    )
    return (
        note
        + table(
            ("when", "session · turn", "query", "recalled", "tokens", "latency"), rows, cls="trace"
        )
        + chart
    )


# ---------------------------------------------------------------------------------- forget


def forget_page(ctx: Ctx) -> str:
    subject = ctx.form(
        "/forget/preview",
        '<label>Phrase <input type="text" name="phrase" required '
        'placeholder="a name, a place, a project / 一个名字"></label>',
        "Find every match",
        cls="block",
    )
    whole = ""
    if ctx.user is not None:
        whole = "<h2>Forget this user entirely</h2>" + ctx.form(
            "/forget/user",
            '<label>Type the user id to confirm <input type="text" name="confirm" required '
            'aria-label="confirm user id"></label>',
            f"Forget {ctx.user} entirely",
            cls="block",
            confirm="Delete everything kept about this user?",
        )
    return (
        f"<p>Searches {esc(user_label(ctx.user))}'s memory files, archive, staged writes, "
        "sessions, the skills' notes, the provider and the recall trace. Nothing is deleted "
        "before you confirm.</p>" + subject + whole
    )


def _matches_table(matches: forget.Matches) -> str:
    rows: list[tuple[str, ...]] = []
    rows += [
        ("memory", esc(f"{h.store} {h.ref}"), f'<div class="entry">{esc(h.text)}</div>')
        for h in matches.memory
    ]
    rows += [
        ("sessions", esc(f"{h.kind} {h.session_id}"), f'<div class="entry">{esc(h.text)}</div>')
        for h in matches.archive
    ]
    rows += [
        ("skills", esc(f"{h.path}:{h.line}"), f'<div class="entry">{esc(h.text)}</div>')
        for h in matches.skills
    ]
    rows += [
        ("provider", esc(m.id), f'<div class="entry">{esc(m.text)}</div>') for m in matches.provider
    ]
    rows += [
        (
            "recall trace",
            esc(f"{t.session_id} #{t.turn}"),
            f'<div class="entry">{esc(t.query)}</div>',
        )
        for t in matches.trace
    ]
    note = f"<p>provider: {esc(matches.provider_note)}</p>" if matches.provider_note else ""
    return table(("store", "where", "text"), rows, cls="matches") + note


def forget_preview(ctx: Ctx) -> str:
    phrase = forget.check_phrase(ctx.get("phrase"))
    matches = forget.find_subject(ctx.host, ctx.user, phrase)
    confirm = (
        ctx.form(
            "/forget/confirm",
            hidden("phrase", phrase),
            f"Delete these {matches.total} matches and prove it",
            cls="block",
            confirm="Delete every match for good?",
        )
        if matches.total
        else "<p>Nothing matches: nothing to forget.</p>"
    )
    return (
        f"<p>{matches.total} match(es) of <q>{esc(phrase)}</q>.</p>"
        + _matches_table(matches)
        + confirm
    )


def forget_confirm(ctx: Ctx) -> str:
    report = forget.forget_subject(ctx.host, ctx.user, ctx.get("phrase"))
    proof = report.proof
    verdict = (
        '<p class="clean" id="verdict">Proof: zero hits in every store and in every file '
        "of the home.</p>"
        if proof.clean
        else '<p class="dirty" id="verdict">Proof: the phrase is still found — see below.</p>'
    )
    rows = [(esc(store), str(count)) for store, count in proof.searched.counts.items()]
    rows.append(("raw byte search", f"{len(proof.raw.found)} of {proof.raw.scanned} files"))
    extra = "".join(
        f"<li>{esc(p)}</li>" for p in proof.raw.found + proof.raw.skipped + proof.problems
    )
    return (
        f"<p>Removed {report.removed.total} match(es) of <q>{esc(report.phrase)}</q>.</p>"
        + verdict
        + table(("searched again", "hits"), rows, cls="proof")
        + (f"<ul>{extra}</ul>" if extra else "")
        + "<p>SQLite files compacted (WAL checkpointed, VACUUM): "
        + f"{esc(', '.join(proof.compacted) or 'none')}</p>"
        + (
            f"<p>provider: {esc(proof.searched.provider_note)}</p>"
            if proof.searched.provider_note
            else ""
        )
    )


def forget_user_action(ctx: Ctx) -> Done:
    if ctx.user is None or ctx.get("confirm") != ctx.user:
        return Done("/forget", "refused: type the user id exactly to confirm", False)
    report = forget.forget_user(ctx.host, ctx.user)
    summary = ", ".join(f"{k}: {v}" for k, v in report.removed.items())
    return Done("/", f"forgot {ctx.user} entirely ({summary})", not report.problems)


__all__ = ["Ctx", "Done", "NotFound", "people_ids"]
