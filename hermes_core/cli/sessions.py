"""``hermes-memory sessions``: list, show, search, export, import, prune, stats, title, users,
reindex.

Every listing command takes ``--json`` (machine-readable, UTF-8). The export and import
formats and their rules live in :mod:`hermes_core.layers.sessions.transfer`; this module only
parses arguments and prints.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from hermes_core.cli.output import Table, console, print_json, progress_bar
from hermes_core.settings.base import resolve_home
from hermes_core.text import plural


def _note(text: str) -> None:
    """An operator note, to stderr (``--json`` output stays clean)."""
    console(stderr=True).print(text, markup=False)


@contextmanager
def _open_db(index: bool = True) -> Iterator[Any]:
    """The configured archive (:func:`hermes_core.layers.sessions.open_archive`); its errors,
    and those of the command's block, become ClickExceptions carrying the layer's message."""
    from hermes_core.layers.sessions import SessionStoreError, open_archive

    try:
        with open_archive(resolve_home(), index=index, note=_note) as db:
            yield db
    except SessionStoreError as exc:
        raise click.ClickException(str(exc)) from exc


def _user_option(fn: Any) -> Any:
    """``--user``: the user scope a command sees (default: sessions stored without a user)."""
    return click.option(
        "--user",
        "user_id",
        default=None,
        metavar="USER_ID",
        help="Only this user's sessions (default: sessions recorded without a user id).",
    )(fn)


def _all_users_option(fn: Any) -> Any:
    return click.option(
        "--all-users", is_flag=True, help="Every user's sessions (operators; overrides --user)."
    )(fn)


def _scope(user_id: str | None, all_users: bool = False) -> Any:
    from hermes_core.scope import ALL_USERS

    return ALL_USERS if all_users else (user_id or None)


def _when(ts: float | None) -> str:
    if not ts:
        return "-"
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _resolve(db: Any, ref: str, user_id: str | None) -> str:
    from hermes_core.layers.sessions import resolve_ref

    return resolve_ref(db, ref, user_id)  # SessionNotFound: a ClickException via _open_db


def parse_age(text: str) -> float:
    """Seconds in ``90d`` / ``12h`` / ``2w`` / ``6m`` / ``1y``
    (:func:`hermes_core.layers.sessions.parse_age`). Raises ClickException."""
    from hermes_core.layers.sessions import AgeError
    from hermes_core.layers.sessions import parse_age as parse

    try:
        return parse(text)
    except AgeError as exc:
        raise click.ClickException(str(exc)) from exc


@click.group(name="sessions")
def sessions() -> None:
    """The session archive ($HERMES_HOME/state.db or PostgreSQL): browse, search, export,
    import, prune, migrate."""


@sessions.command(name="list")
@click.option("--limit", default=20, show_default=True, help="Sessions to show.")
@click.option("--source", default=None, help="Only this source (cli, telegram, cron…).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_user_option
@_all_users_option
def list_cmd(
    limit: int, source: str | None, as_json: bool, user_id: str | None, all_users: bool
) -> None:
    """Recent sessions, newest first."""
    with _open_db() as db:
        records = db.list_sessions(limit=limit, source=source, user_id=_scope(user_id, all_users))
    if as_json:
        print_json([r.to_dict() for r in records])
        return
    if not records:
        hint = "" if user_id or all_users else " (without a user id; try --user ID or --all-users)"
        console().print(f"No sessions recorded yet{hint}.", markup=False)
        return
    table = Table(title="Sessions (newest first)")
    columns = ["id", "started", "source", "title", "msgs", "ended"]
    for col in [*columns, "user"] if all_users else columns:
        table.add_column(col, overflow="fold")
    for r in records:
        row = [
            escape(r.id),
            _when(r.started_at),
            escape(r.source),
            escape(r.title or ""),
            str(r.message_count),
            escape(r.end_reason or ("open" if r.ended_at is None else "ended")),
        ]
        table.add_row(*row, *([escape(r.user_id or "-")] if all_users else []))
    console().print(table)


@sessions.command(name="users")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def users_cmd(as_json: bool) -> None:
    """User scopes in the archive (operators): user id, sessions, last activity."""
    with _open_db() as db:
        rows = db.user_scopes()
    if as_json:
        print_json(rows)
        return
    table = Table(title="User scopes of the session archive")
    for col, justify in (("user", "left"), ("sessions", "right"), ("last active", "left")):
        table.add_column(col, justify=justify, overflow="fold")
    for row in rows:
        table.add_row(
            escape(row["user_id"] if row["user_id"] is not None else "(no user)"),
            str(row["sessions"]),
            _when(row["last_active"]),
        )
    console().print(table)


@sessions.command(name="show")
@click.argument("session")
@click.option("--all", "include_inactive", is_flag=True, help="Include compacted/rewound rows.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_user_option
def show_cmd(session: str, include_inactive: bool, as_json: bool, user_id: str | None) -> None:
    """One session (id, id prefix or title) with its messages."""
    with _open_db() as db:
        sid = _resolve(db, session, user_id)
        record = db.get_session(sid, user_id=_scope(user_id))
        messages = db.get_messages(sid, include_inactive=include_inactive)
        lineage = db.lineage(sid, user_id=user_id or None)
    assert record is not None
    if as_json:
        print_json(
            {
                "session": {**record.to_dict(), "system_prompt": record.system_prompt},
                "lineage": lineage,
                "messages": [m.to_dict() for m in messages],
            }
        )
        return
    out = console()
    # Stored text is data, never rich markup: "[/INST]" would raise, "[bold]" would vanish.
    out.print(f"[bold]{escape(record.id)}[/bold]  {escape(record.title or '')}")
    out.print(
        f"source {record.source} · model {record.model or '-'} · started "
        f"{_when(record.started_at)} · {plural(record.message_count, 'message')}"
        + (f" · ended ({record.end_reason})" if record.ended_at else ""),
        markup=False,
    )
    if len(lineage) > 1:
        out.print("lineage: " + " → ".join(lineage), markup=False)
    table = Table(show_header=True)
    for col in ("id", "when", "role", "content"):
        table.add_column(col, overflow="fold")
    for m in messages:
        text = m.content if len(m.content) <= 400 else m.content[:400] + "…"
        if m.tool_calls:
            names = [c.get("function", {}).get("name", "?") for c in m.tool_calls]
            text = (text + " " if text else "") + f"[called: {', '.join(names)}]"
        role = m.role + (f" ({m.tool_name})" if m.tool_name else "")
        role += " [compacted]" if m.compacted else ""
        table.add_row(str(m.id), _when(m.timestamp), escape(role), escape(text))
    out.print(table)


@sessions.command(name="search")
@click.argument("query")
@click.option("--limit", default=5, show_default=True, help="Sessions to return (max 10).")
@click.option("--after", default=None, help="ISO date or age like 7d.")
@click.option("--before", default=None, help="ISO date or age like 30d.")
@click.option("--tool", default=None, help="Only messages that used this tool.")
@click.option("--role", "role_filter", default=None, help="Comma list, e.g. user,assistant.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_user_option
def search_cmd(
    query: str,
    limit: int,
    after: str | None,
    before: str | None,
    tool: str | None,
    role_filter: str | None,
    as_json: bool,
    user_id: str | None,
) -> None:
    """Full-text search across every session (the session_search discover mode)."""
    from hermes_core.layers.sessions import search_archive

    with _open_db() as db:
        result = search_archive(
            db,
            query,
            limit=limit,
            after=after,
            before=before,
            tool=tool,
            role_filter=role_filter,
            user_id=user_id,
        )
    if as_json:
        print_json(result)
        if not result.get("success"):
            raise SystemExit(1)  # scripts see the failure in the exit code too
        return
    if not result.get("success"):
        raise click.ClickException(str(result.get("error")))
    if not result["results"]:
        console().print(result.get("hint", "No matching sessions found."), markup=False)
        return
    table = Table(title=escape(f"Sessions matching {query!r}"))
    for col in ("session", "when", "source", "title", "match"):
        table.add_column(col, overflow="fold")
    for item in result["results"]:
        table.add_row(
            escape(item["session_id"]),
            str(item.get("when") or "")[:16].replace("T", " "),
            escape(item.get("source") or ""),
            escape(item.get("title") or ""),
            escape(item.get("snippet", "")).replace(">>>", "[bold]").replace("<<<", "[/bold]"),
        )
    console().print(table)


@sessions.command(name="export")
@click.argument("session", required=False)
@click.option(
    "--format", "fmt", type=click.Choice(["jsonl", "md"]), default="jsonl", show_default=True
)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None)
@click.option("--all", "export_all", is_flag=True, help="Every session of the --user scope.")
@click.option("--source", default=None, help="With --all: only sessions of this source.")
@_user_option
def export_cmd(
    session: str | None,
    fmt: str,
    output: Path | None,
    export_all: bool,
    source: str | None,
    user_id: str | None,
) -> None:
    """Export one session, or --all of them, (all rows, compacted included) as JSONL or
    Markdown. A JSONL export of many sessions imports back with `hermes-memory sessions import`."""
    from hermes_core.layers.sessions import export_session, export_sessions, scope_session_ids

    if export_all == bool(session):
        raise click.UsageError("name one SESSION, or pass --all (not both)")
    with _open_db() as db:
        if export_all:
            ids = scope_session_ids(db, user_id, source)
            if not ids:
                hint = "" if user_id else " (without a user id; try --user ID)"
                console(stderr=True).print(
                    f"no sessions to export in this scope{hint}", markup=False
                )
            text, count = export_sessions(db, ids, fmt, user_id=_scope(user_id))
            what = f"{plural(len(ids), 'session')}, {plural(count, 'message')}"
        else:
            assert session is not None
            text, count = export_session(
                db, _resolve(db, session, user_id), fmt, user_id=_scope(user_id)
            )
            what = plural(count, "message")
    if output is None:
        click.echo(text, nl=False)
    else:
        from hermes_core.fsutil import atomic_write_text

        atomic_write_text(output, text)
        console(stderr=True).print(f"wrote {what} to {output}", markup=False)


@sessions.command(name="import")
@click.argument("file", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--from",
    "from_format",
    type=click.Choice(["file", "hermes-agent"]),
    default="file",
    show_default=True,
    help="file: our JSONL export or OpenAI messages; hermes-agent: a Hermes Agent home "
    "(~/.hermes) or its state.db, copied with titles, lineage and tool calls.",
)
@click.option("--source", default="import", show_default=True, help="Source for new sessions.")
@click.option("--title", default=None, help="Title for an imported OpenAI message list.")
@click.option(
    "--keep-users",
    is_flag=True,
    help="hermes-agent: keep each session's own user_id instead of the --user scope.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary.")
@_user_option
def import_cmd(
    file: Path,
    from_format: str,
    source: str,
    title: str | None,
    keep_users: bool,
    as_json: bool,
    user_id: str | None,
) -> None:
    """Bring history in: our JSONL export, an OpenAI-style messages list, or (with
    ``--from hermes-agent``) every session of a Hermes Agent home.

    The file is checked first (every invalid value is listed with its line and field) and
    written in one transaction, into the --user scope; running it again imports nothing.
    A Hermes Agent state.db is only read (never written)."""
    from hermes_core.layers.sessions import TransferError, import_groups, read_import

    if from_format == "hermes-agent":
        _import_hermes_agent(file, keep_users, as_json, user_id)
        return
    if file.is_dir():
        raise click.ClickException(
            f"{file} is a directory; pass a file, or `--from hermes-agent {file}` for a "
            "Hermes Agent home"
        )
    try:
        groups = read_import(file)
    except TransferError as exc:
        raise click.ClickException(str(exc)) from exc
    total = sum(len(group.messages) for group in groups)
    with _open_db() as db, progress_bar() as progress:
        task = progress.add_task("importing", total=total)
        done = import_groups(
            db,
            groups,
            source=source,
            title=title,
            user_id=user_id or None,
            progress=lambda n: progress.advance(task, n),
        )
    report = [row.to_dict() for row in done]
    if as_json:
        print_json(report)
        return
    for row in report:
        if row["status"] != "imported":
            console().print(
                f"{row['session_id']}: already imported ({plural(row['messages'], 'message')}) — "
                "nothing written",
                markup=False,
            )
            continue
        note = (
            f" (id {row['renamed_from']} existed; stored as new id)" if row["renamed_from"] else ""
        )
        console().print(
            f"imported {plural(row['messages'], 'message')} into {row['session_id']}{note}",
            markup=False,
        )


def _import_hermes_agent(path: Path, keep_users: bool, as_json: bool, user_id: str | None) -> None:
    from hermes_core.layers.sessions import (
        SessionStoreError,
        count_hermes_agent_sessions,
        import_from_hermes_agent,
    )

    try:
        total = count_hermes_agent_sessions(path)
    except SessionStoreError as exc:
        raise click.ClickException(str(exc)) from exc
    with _open_db(index=False) as db, progress_bar() as progress:
        task = progress.add_task("importing Hermes Agent sessions", total=None)
        done = import_from_hermes_agent(
            db,
            path,
            total=total,
            user_id=user_id,
            keep_users=keep_users,
            progress=lambda n: progress.advance(task, n),
        )
    if as_json:
        print_json(done.rows)
        return
    console().print(
        f"imported {done.imported} of {done.total} Hermes Agent session(s), "
        f"{done.imported_messages} message(s); "
        f"{done.continued} continued ({done.added_messages} new message(s)); "
        f"{done.unchanged} already imported",
        markup=False,
    )
    for row in done.rows:
        if row["renamed_from"]:
            console().print(
                f"  {row['renamed_from']} existed; stored as {row['session_id']}", markup=False
            )


@sessions.command(name="prune")
@click.option("--older-than", "older_than", required=True, help="Age like 90d, 6m, 1y.")
@click.option("--dry-run", is_flag=True, help="Only show what would be deleted.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary.")
@click.option("--source", default=None, help="Only sessions of this source (cli, telegram…).")
@_user_option
@_all_users_option
def prune_cmd(
    older_than: str,
    dry_run: bool,
    yes: bool,
    as_json: bool,
    source: str | None,
    user_id: str | None,
    all_users: bool,
) -> None:
    """Delete sessions (of the --user scope, of --source when given) whose last activity is
    older than the age."""
    from hermes_core.layers.sessions import prune_sessions

    cutoff = time.time() - parse_age(older_than)
    with _open_db() as db:
        ids = db.sessions_older_than(cutoff, user_id=_scope(user_id, all_users), source=source)
        removed = 0
        if ids and not dry_run:
            if not yes and as_json:
                raise click.ClickException(
                    f"{len(ids)} session(s) would be deleted and --json cannot ask for "
                    "confirmation — add --yes to delete them, or --dry-run to only list them"
                )
            if not yes:
                click.confirm(
                    f"Delete {len(ids)} session(s) last active before {_when(cutoff)}?",
                    abort=True,
                )
            with progress_bar() as progress:
                task = progress.add_task("pruning", total=len(ids))
                removed = prune_sessions(db, ids, lambda n: progress.advance(task, n))
    summary = {
        "cutoff": cutoff,
        "sessions": len(ids),
        "messages_deleted": removed,
        "dry_run": dry_run,
        "session_ids": ids,
    }
    if as_json:
        print_json(summary)
        return
    verb = "would delete" if dry_run else "deleted"
    console().print(
        f"{verb} {len(ids)} session(s)"
        + ("" if dry_run else f" and {removed} message(s)")
        + f" last active before {_when(cutoff)}"
    )


@sessions.command(name="stats")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@_user_option
@_all_users_option
def stats_cmd(as_json: bool, user_id: str | None, all_users: bool) -> None:
    """Counts (of the --user scope), sizes, token totals and compression figures."""
    with _open_db() as db:
        stats = db.stats(user_id=_scope(user_id, all_users))
    if as_json:
        print_json(stats)
        return
    table = Table(title="Session archive", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("file", stats["path"])
    table.add_row("schema version", str(stats["schema_version"]))
    table.add_row("full-text search", "yes" if stats["fts"] else "NO")
    table.add_row("sessions", str(stats["sessions"]))
    table.add_row("messages", str(stats["messages"]))
    table.add_row("compacted messages", str(stats["compacted_messages"]))
    table.add_row("tool calls", str(stats["tool_calls"]))
    table.add_row("input / output tokens", f"{stats['input_tokens']} / {stats['output_tokens']}")
    table.add_row("size", f"{stats['size_bytes'] / 1e6:.2f} MB")
    for src, n in sorted(stats["by_source"].items()):
        table.add_row(f"  source {src}", str(n))
    comp = stats.get("compression")
    if comp and "events" in comp:
        table.add_row("compressions", str(comp["events"]))
        table.add_row(
            "  tokens before → after", f"{comp['tokens_before']} → {comp['tokens_after']}"
        )
        table.add_row("  fallback summaries used", str(comp["fallback_used"]))
        table.add_row("  aborted", str(comp["aborted"]))
    console().print(table)


@sessions.command(name="title")
@click.argument("session")
@click.argument("title")
@_user_option
def title_cmd(session: str, title: str, user_id: str | None) -> None:
    """Set a session's title (sanitised; a clash gets " #2", " #3"…)."""
    with _open_db() as db:
        sid = _resolve(db, session, user_id)
        stored = db.set_title(sid, title)
    if stored is None:
        raise click.ClickException("the title has no printable characters — pick another")
    console().print(f"{sid}: {stored}", markup=False)


@sessions.command(name="reindex")
def reindex_cmd() -> None:
    """Rebuild the full-text index from the stored messages."""
    with _open_db() as db:
        count = db.reindex()
    console().print(f"indexed {plural(count, 'message')}")


@sessions.command(name="migrate")
@click.option(
    "--to",
    "target_url",
    required=True,
    help="Where to copy the archive: postgresql://user:password@host/db or "
    "sqlite:///path/to/state.db.",
)
@click.option(
    "--from",
    "source_url",
    default=None,
    help="Copy from this archive URL instead of the configured one (sessions.backend).",
)
@click.option(
    "--batch",
    default=50,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Sessions per transaction.",
)
@click.option(
    "--merge",
    is_flag=True,
    help="Add to a target that already holds other archives (e.g. a second home joining a "
    "shared PostgreSQL): message ids are renumbered, a session id held there by another "
    "session is stored as ID~HASH (reported).",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary.")
def migrate_cmd(
    target_url: str, source_url: str | None, batch: int, merge: bool, as_json: bool
) -> None:
    """Copy the whole archive (every user) to another backend, keeping every id; verifies
    the counts per user. Safe to re-run: an interrupted copy resumes, a finished one copies
    nothing more. Switch afterwards: sessions.backend: postgresql in config.yaml and
    HERMES_SESSIONS__URL in $HERMES_HOME/.env."""
    from hermes_core.layers.sessions import (
        SessionStoreError,
        migrate_archive,
        migration_total,
        open_migration_source,
        open_url,
    )

    try:
        target = open_url(target_url)
    except SessionStoreError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        with open_migration_source(resolve_home(), source_url, note=_note) as source:
            total = migration_total(source, target)
            with progress_bar() as progress:
                task = progress.add_task(
                    "merging sessions" if merge else "copying sessions", total=total
                )
                report = migrate_archive(
                    source,
                    target,
                    merge=merge,
                    batch=batch,
                    progress=lambda n: progress.advance(task, n),
                )
    except SessionStoreError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        target.close()
    if as_json:
        print_json(report.to_dict())
    else:
        table = Table(title=f"{report.source} → {report.target}")
        for col in ("user", "sessions (source/target)", "messages (source/target)", "ok"):
            table.add_column(col)
        for u in report.users:
            table.add_row(
                u.user_id if u.user_id is not None else "(no user)",
                f"{u.source_sessions}/{u.target_sessions}",
                f"{u.source_messages}/{u.target_messages}",
                "yes" if u.ok else "NO",
            )
        console().print(table)
        console().print(
            f"copied {report.sessions_copied} new session(s) and {report.messages_copied} new "
            f"message(s) of {report.sessions_seen} session(s) read",
            markup=False,
        )
        for old, new in sorted(report.renamed.items()):
            console().print(
                f"  session {old} existed there as another session; stored as {new}",
                markup=False,
            )
    if not report.verified:
        raise click.ClickException(
            "the counts differ (see above): the target held other sessions before, or rows "
            "changed during the copy — add to an archive holding others with --merge, or "
            "re-run"
        )


def register(cli: click.Group) -> None:
    """Add ``hermes-memory sessions`` to the root group."""
    cli.add_command(sessions)


__all__ = ["parse_age", "register", "sessions"]
