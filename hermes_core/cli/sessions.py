"""``hermes-memory sessions``: list, show, search, export, import, prune, stats, title, users,
reindex.

Every listing command takes ``--json`` (machine-readable, UTF-8). The export and import
formats and their rules live in :mod:`hermes_core.layers.sessions.transfer`; this module only
parses arguments and prints.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
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

_AGE = re.compile(r"^\s*(\d+)\s*([dhwmy])\s*$", re.IGNORECASE)
_AGE_SECONDS = {"h": 3600, "d": 86400, "w": 7 * 86400, "m": 30 * 86400, "y": 365 * 86400}


def _index_hermes_agent(db: Any, home: Path) -> None:
    """Say plainly when ``home`` is a Hermes Agent home, and index its sessions (read-only on
    its file) so listings and search include them. Notes go to stderr (``--json`` stays
    clean)."""
    from hermes_core.homefiles import inspect_state_db
    from hermes_core.layers.sessions import refresh_hermes_agent

    found = inspect_state_db(home)
    if not found.is_hermes_agent:
        return
    console(stderr=True).print(
        f"{found.describe()}: hermes-core reads it and never writes to it; its own "
        f"tables are in {db.path.name}",
        markup=False,
    )
    refresh_hermes_agent(db, home)


@contextmanager
def _open_db(index: bool = True) -> Iterator[Any]:
    from hermes_core.homefiles import own_db_path
    from hermes_core.layers.sessions import (
        SessionDB,
        SessionStoreError,
        SessionStoreUnusable,
        open_store,
    )
    from hermes_core.settings.base import load_settings

    home = resolve_home()
    sessions_settings = None
    try:
        sessions_settings = load_settings(home).sessions
    except Exception:
        sessions_settings = None
    try:
        db = open_store(home, sessions_settings)
    except SessionStoreUnusable as exc:
        raise click.ClickException(str(exc)) from exc
    except (OSError, SessionStoreError) as exc:
        raise click.ClickException(
            f"cannot open {own_db_path(home)}: {exc} — check the path and its permissions "
            "(HERMES_HOME)"
        ) from exc
    except sqlite3.DatabaseError as exc:
        path = own_db_path(home)
        raise click.ClickException(
            f"{path} is not a readable SQLite database ({exc}) — move it aside "
            f"(mv {path} {path}.bad) and rerun; a fresh archive is created, the old file kept"
        ) from exc
    if index and isinstance(db, SessionDB):
        _index_hermes_agent(db, home)
    try:
        yield db
    except SessionStoreError as exc:
        raise click.ClickException(str(exc)) from exc
    except sqlite3.Error as exc:
        raise click.ClickException(
            f"state.db failed: {exc} — the command's changes were rolled back; check the "
            "disk (space, permissions) and `hermes-memory doctor`, then rerun"
        ) from exc
    finally:
        db.close()


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
    sid = db.resolve_session(ref, user_id=user_id or None)
    if sid is None:
        raise click.ClickException(
            f"no session matches '{ref}' — list ids with `hermes-memory sessions list`"
            + (" (add --user USER_ID for a user's sessions)" if not user_id else "")
        )
    return str(sid)


MAX_AGE_S = 200 * 365 * 86400
"""The largest ``--older-than`` age (200 years): anything older predates every archive."""


def parse_age(text: str) -> float:
    """Seconds in ``90d`` / ``12h`` / ``2w`` / ``6m`` / ``1y``. Raises ClickException."""
    match = _AGE.match(text)
    if not match:
        raise click.ClickException(
            f"cannot read age '{text}' — use a number and a unit, e.g. 90d, 12h, 2w, 6m, 1y"
        )
    digits = match.group(1)
    seconds = int(digits) * _AGE_SECONDS[match.group(2).lower()] if len(digits) <= 12 else None
    if seconds is None or seconds > MAX_AGE_S:
        raise click.ClickException(
            f"age '{text[:40]}' is more than 200 years — use a smaller number, e.g. 10y"
        )
    return seconds


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
    from hermes_core.layers.sessions import SessionSearch

    args: dict[str, Any] = {"query": query, "limit": limit, "detail": "full"}
    for key, value in (
        ("after", after),
        ("before", before),
        ("tool", tool),
        ("role_filter", role_filter),
    ):
        if value:
            args[key] = value
    with _open_db() as db:
        result = SessionSearch(db, hidden_sources=()).run(args, user_id=user_id or None)
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
    from hermes_core.layers.sessions import export_session, export_sessions

    if export_all == bool(session):
        raise click.UsageError("name one SESSION, or pass --all (not both)")
    with _open_db() as db:
        if export_all:
            ids = db.sessions_older_than(
                float("inf"), user_id=_scope(user_id, False), source=source
            )
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
        HermesAgentHomeError,
        import_hermes_agent,
        locate_state_db,
        session_stamps,
    )

    try:
        total = len(session_stamps(locate_state_db(path)))
    except (HermesAgentHomeError, sqlite3.Error) as exc:
        raise click.ClickException(str(exc)) from exc
    with _open_db(index=False) as db, progress_bar() as progress:
        task = progress.add_task("importing Hermes Agent sessions", total=None)
        done = import_hermes_agent(
            db,
            path,
            user_id=user_id or None,
            keep_users=keep_users,
            progress=lambda n: progress.advance(task, n),
        )
    report = [row.to_dict() for row in done]
    if as_json:
        print_json(report)
        return
    fresh = [r for r in report if r["status"] == "imported"]
    grown = [r for r in report if r["status"] == "continued"]
    messages = sum(int(r["messages"]) for r in fresh)
    added = sum(int(r["messages"]) for r in grown)
    console().print(
        f"imported {len(fresh)} of {total} Hermes Agent session(s), {messages} message(s); "
        f"{len(grown)} continued ({added} new message(s)); "
        f"{len(report) - len(fresh) - len(grown)} already imported",
        markup=False,
    )
    for row in report:
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
                for start in range(0, len(ids), 50):
                    chunk = ids[start : start + 50]
                    removed += db.delete_sessions(chunk)
                    progress.advance(task, len(chunk))
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
    from hermes_core.layers.sessions import SessionStoreError

    with _open_db() as db:
        try:
            count = db.reindex()
        except SessionStoreError as exc:
            raise click.ClickException(str(exc)) from exc
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
        copy_archive,
        merge_archive,
        open_url,
    )

    try:
        target = open_url(target_url)
    except SessionStoreError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        if source_url is not None:
            try:
                source_cm: Any = contextlib.closing(open_url(source_url))
            except SessionStoreError as exc:
                raise click.ClickException(str(exc)) from exc
        else:
            source_cm = _open_db()
        with source_cm as source:
            if source.location == target.location:
                raise click.ClickException(
                    f"--to names the archive being copied ({target.location}); pass another one"
                )
            total = source.count_sessions(user_id=_scope(None, all_users=True))
            try:
                with progress_bar() as progress:
                    task = progress.add_task(
                        "merging sessions" if merge else "copying sessions", total=total
                    )
                    report = (merge_archive if merge else copy_archive)(
                        source,
                        target,
                        batch=batch,
                        progress=lambda n: progress.advance(task, n),
                    )
            except SessionStoreError as exc:
                raise click.ClickException(
                    f"{exc} (rows copied so far are kept; re-run to resume)"
                ) from exc
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
