"""``hermes-memory memory show|edit|pending|approve|reject|restore|archive|users|export|import``
(the
memory layer's CLI).

Added to the lead's ``hermes-memory memory`` group by :func:`register_memory_commands`. Every
listing
command has ``--json``; every error says what happened and how to fix it. Every command takes
``--user ID`` (the ``user_id`` a session was opened with) and defaults to the no-user files.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click
from rich.markup import escape

from hermes_core.cli.output import Table, console, print_json
from hermes_core.errors import HermesError
from hermes_core.fsutil import read_regular_bytes, read_regular_text
from hermes_core.layers.memory import FILENAMES, char_count, percent
from hermes_core.scope import user_option
from hermes_core.settings.base import load_settings, resolve_home
from hermes_core.text import plural
from hermes_core.types import MemoryTarget, MemoryWrite

if TYPE_CHECKING:
    # The engine, approvals and edits (and through them the security scanner) load when a
    # command runs, so `hermes-memory memory status` and `hermes-memory --help` never import them.
    from hermes_core.layers.memory import EditRefused, EntryStore, Outcome, PendingStore
    from hermes_core.settings.models import MemorySettings

TARGETS: tuple[MemoryTarget, ...] = ("memory", "user")
BAR_WIDTH = 30


def _home() -> Path:
    return resolve_home()


def _settings(home: Path) -> MemorySettings:
    try:
        return load_settings(home).memory
    except HermesError as exc:
        raise click.ClickException(f"{exc} — fix {home / 'config.yaml'} and retry") from exc


def _targets(target: str | None) -> tuple[MemoryTarget, ...]:
    return TARGETS if target is None else (cast(MemoryTarget, target),)


def usage_bar(current: int, limit: int) -> str:
    """``[███████░░░] 67% — 1,474/2,200 chars`` (rich markup, red when over budget)."""
    pct = percent(current, limit)
    filled = round(BAR_WIDTH * min(pct, 100) / 100)
    colour = "red" if current > limit else "yellow" if pct >= 90 else "green"
    bar = f"[{colour}]{'█' * filled}[/{colour}]{'░' * (BAR_WIDTH - filled)}"
    over = " [red]⚠ OVER BUDGET[/red]" if current > limit else ""
    return f"{bar} {pct}% — {current:,}/{limit:,} chars{over}"


# ----------------------------------------------------------------------------- show


def _store_info(
    home: Path, settings: MemorySettings, target: MemoryTarget, user_id: str | None
) -> dict[str, Any]:
    from hermes_core.layers.memory import MemoryEngine

    store = _open(MemoryEngine(home, settings, user_id), target)
    state = store.read()
    current = char_count(state.entries)
    return {
        "target": target,
        "user_id": store.owner,
        "store": store.kind,
        "file": store.location,
        "exists": state.raw is not None,
        "error": state.error,
        "entries": state.entries,
        "chars": current,
        "limit": store.limit,
        "percent": percent(current, store.limit),
        "over_budget": current > store.limit,
        "enabled": settings.memory_enabled if target == "memory" else settings.user_profile_enabled,
    }


def _open(engine: Any, target: MemoryTarget) -> EntryStore:
    """``engine.store(target)``, or a ClickException naming the fix (e.g. no memory.url)."""
    try:
        store: EntryStore = engine.store(target)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    return store


def _pending(home: Path, settings: MemorySettings, user_id: str | None) -> PendingStore:
    """``user_id``'s staged writes where ``memory.store`` keeps them (ClickException naming
    the fix when the store is misconfigured)."""
    from hermes_core.layers.memory import open_pending

    try:
        return open_pending(home, settings, user_id)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc


def show(target: str | None, as_json: bool, user_id: str | None = None) -> None:
    """Entries of MEMORY.md / USER.md of ``user_id``, numbered, with a usage bar. Exits 1
    (after showing everything) when a file could not be read, e.g. its server is down."""
    home = _home()
    settings = _settings(home)
    infos = [_store_info(home, settings, t, user_id) for t in _targets(target)]
    unreadable = sum(bool(info["error"]) for info in infos)
    if as_json:
        print_json({info["target"]: info for info in infos})
        if unreadable:
            raise SystemExit(1)
        return
    from hermes_core.layers.memory import unreadable_fix

    out = console()
    fix = unreadable_fix(home, settings)
    for info in infos:
        title = f"{FILENAMES[info['target']]} ({info['target']})"
        if not info["enabled"]:
            title += " [dim]— disabled in config[/dim]"
        out.print(f"[bold]{title}[/bold]  {escape(info['file'])}")
        if info["error"]:
            out.print(
                f"[red]✗ could not be read: {escape(info['error'])}[/red]"
                + (f" — {fix}" if fix else "")
            )
            continue
        out.print(usage_bar(info["chars"], info["limit"]))
        if not info["entries"]:
            out.print("[dim](no entries)[/dim]\n")
            continue
        table = Table(show_header=True, header_style="bold", expand=False)
        table.add_column("#", justify="right")
        table.add_column("entry", overflow="fold")
        table.add_column("chars", justify="right")
        for number, entry in enumerate(info["entries"], start=1):
            table.add_row(str(number), escape(entry), f"{len(entry):,}")
        out.print(table)
        out.print()
    if unreadable:
        raise click.ClickException(f"{unreadable} memory file(s) could not be read (see above)")


# ----------------------------------------------------------------------------- edit


def _run_editor(path: Path) -> None:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        completed = subprocess.run([*shlex.split(editor), str(path)], check=False)
    except OSError as exc:
        raise click.ClickException(
            f"could not start the editor '{editor}': {exc} — set $EDITOR to an installed editor"
        ) from exc
    if completed.returncode != 0:
        raise click.ClickException(
            f"the editor exited with status {completed.returncode}; nothing was saved"
        )


def _seed(path: Path) -> str:
    """The text of a ``--from`` file (a recovery file of an earlier refused edit)."""
    try:
        return read_regular_text(path, max_bytes=16 << 20, what="recovery file")
    except OSError as exc:
        raise click.ClickException(
            f"could not read {path}: {exc.strerror or exc} — give the path of a recovery file"
        ) from exc
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"{path} is not valid UTF-8 ({exc.reason})") from exc


def _refusal(exc: EditRefused, target: str, user_id: str | None) -> click.ClickException:
    path = exc.recovery
    if exc.kind == "not_utf8":
        return click.ClickException(f"{exc}; nothing was saved. Your text is in {path}")
    user = user_option(user_id)
    resume = f"`hermes-memory memory edit --target {target}{user} --from {shlex.quote(str(path))}`"
    if exc.kind == "conflict":
        return click.ClickException(
            f"{exc}; nothing was saved. Your text is kept in {path} — check `hermes-memory memory "
            f"show --target {target}{user}`, then {resume}"
        )
    return click.ClickException(
        f"not saved: {exc}. Your text is kept in {path} — continue from it with {resume}"
    )


def edit(target: str, seed: Path | None = None, user_id: str | None = None) -> None:
    """Open a copy of the file (or of ``seed``, e.g. a recovery file) in $EDITOR; save it
    through :func:`~hermes_core.layers.memory.edit.save_edit` (validated, scanned, locked
    compare-and-write)."""
    from hermes_core.layers.memory import EditRefused, MemoryEngine, begin_edit, save_edit

    home = _home()
    settings = _settings(home)
    mem_target = cast(MemoryTarget, target)
    store = _open(MemoryEngine(home, settings, user_id), mem_target)
    try:
        base = begin_edit(store)
    except OSError as exc:
        raise click.ClickException(
            f"{store.location} could not be read ({exc}) — fix its permissions or move it aside"
        ) from exc
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    if base.not_utf8 is not None:
        console().print(
            f"[yellow]⚠ {escape(store.filename)} is not valid UTF-8 ({escape(base.not_utf8)}): "
            "undecodable bytes show as �. Saving replaces the file; the original bytes are "
            "kept in a .bak copy next to it.[/]"
        )
    start_text = _seed(seed) if seed is not None else base.text
    with tempfile.TemporaryDirectory(prefix="hermes-memory-edit-") as tmp:
        copy = Path(tmp) / FILENAMES[mem_target]
        copy.write_text(start_text, encoding="utf-8")
        copy.chmod(0o600)
        _run_editor(copy)
        edited = read_regular_bytes(copy, max_bytes=16 << 20, what="edited copy")
    try:
        result = save_edit(base, edited)
    except EditRefused as exc:
        raise _refusal(exc, target, store.owner) from exc
    except HermesError as exc:  # the server went away while the editor was open
        from hermes_core.layers.memory import save_recovery

        path = save_recovery(store, edited.decode("utf-8", "replace"))
        raise click.ClickException(f"{exc} Your text is kept in {path}") from exc
    if not result.changed:
        console().print("No changes.")
        return
    if result.backup is not None:
        console().print(f"original bytes kept in {escape(str(result.backup))}")
    console().print(
        f"✓ Saved {escape(str(store.location))} — {plural(len(result.entries), 'entry')}, "
        + usage_bar(char_count(result.entries), store.limit)
    )


# ----------------------------------------------------------------------------- pending


def _age(ts: float) -> str:
    seconds = max(0, int(time.time() - ts))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def pending_cmd(as_json: bool, user_id: str | None = None) -> None:
    """Staged memory writes of ``user_id`` waiting for approval ([auto] = from a background
    review)."""
    home = _home()
    try:
        records = _pending(home, _settings(home), user_id).list()
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        print_json([r.to_dict() | {"auto": r.auto} for r in records])
        return
    out = console()
    if not records:
        out.print("No pending memory writes.")
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("id", "age", "target", "origin", "change"):
        table.add_column(column, overflow="fold")
    for record in records:
        origin = escape("[auto] background review") if record.auto else escape(record.origin)
        table.add_row(
            record.id, _age(record.created_at), record.target, origin, escape(record.summary())
        )
    out.print(table)
    user = escape(user_option(user_id))
    out.print(
        f"Approve with `hermes-memory memory approve ID|all{user}`, discard with "
        f"`hermes-memory memory reject ID|all{user}`."
    )


def _print_outcome(record_id: str, outcome: Outcome) -> None:
    out = console()
    payload = outcome.payload
    if not outcome.success:
        out.print(f"[red]✗ {record_id}: {escape(str(payload.get('error', 'failed')))}[/red]")
        return
    out.print(f"[green]✓ {record_id}: {escape(str(payload.get('message', 'applied')))}[/green]")
    for key in ("replaced_entry", "removed_entry"):
        if key in payload:
            out.print(f"  {key.split('_')[0]}: {escape(str(payload[key]))}")
    for key in ("replaced_entries", "removed_entries"):
        for index, text in (payload.get(key) or {}).items():
            out.print(f"  op {index} {key.split('_')[0]}: {escape(str(text))}")


@contextmanager
def _provider_mirror(
    home: Path, user_id: str | None
) -> Iterator[Callable[[MemoryWrite], None] | None]:
    """The route of writes committed here (approve, restore) to the active provider: the
    host's :meth:`~hermes_core.host.MemoryHost.notify_memory_write`, as a tool call's would
    take. Without a configured provider nothing is opened (``None``); the host is flushed and
    closed on exit. Writes are mirrored under ``user_id`` (the user whose files changed)."""
    from hermes_core.host import MemoryHost

    try:
        settings = load_settings(home)
    except HermesError:
        settings = None
    if settings is None or not settings.memory.provider:
        yield None
        return
    try:
        host = MemoryHost.open(home, settings=settings)
    except HermesError as exc:
        console().print(
            f"[yellow]⚠ the memory provider was not told about this change: {escape(str(exc))}[/]"
        )
        yield None
        return
    with host:
        if host.provider is None:
            status = host.provider_status
            reason = status.reason if status is not None else "not active"
            console().print(
                f"[yellow]⚠ provider {escape(settings.memory.provider)} is not active "
                f"({escape(reason)}); it was not told about this change[/]"
            )

        def notify(write: MemoryWrite) -> None:
            host.notify_memory_write(write, user_id=user_id, source="cli")

        yield notify
        host.flush(host.flush_timeout)


def approve_cmd(ids: tuple[str, ...], user_id: str | None = None) -> None:
    """Apply ``user_id``'s staged writes to their files (stale ones are refused and kept);
    the provider is told about each committed write, under that user."""
    from hermes_core.layers.memory import MemoryEngine, approve_pending

    home = _home()
    engine = MemoryEngine(home, _settings(home), user_id)
    pending = _pending(home, engine.settings, engine.user_id)
    with _provider_mirror(home, engine.user_id) as notify:
        approvals = approve_pending(engine, pending, ids, notify=notify)
    if not approvals:
        console().print("No pending memory writes.")
        return
    for approval in approvals:
        _print_outcome(approval.pending_id, approval.outcome)
    failed = sum(not approval.success for approval in approvals)
    if failed:
        raise click.ClickException(
            f"{failed} of {len(approvals)} write(s) not applied — see above; "
            f"`hermes-memory memory reject ID{user_option(user_id)}` discards a stale one"
        )


def reject_cmd(ids: tuple[str, ...], user_id: str | None = None) -> None:
    """Discard ``user_id``'s staged writes."""
    from hermes_core.layers.memory import reject_pending

    home = _home()
    try:
        results = reject_pending(_pending(home, _settings(home), user_id), ids)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    if not results:
        console().print("No pending memory writes.")
        return
    for pending_id, existed in results:
        if existed:
            console().print(f"✓ rejected {pending_id}")
    missing = [pending_id for pending_id, existed in results if not existed]
    if missing:
        raise click.ClickException(
            f"no pending write with id {', '.join(missing)} — list them with "
            f"`hermes-memory memory pending{user_option(user_id)}`"
        )


# ----------------------------------------------------------------------------- archive


def archive_cmd(
    as_json: bool,
    query: str | None,
    target: str | None,
    show_all: bool,
    user_id: str | None = None,
) -> None:
    """``user_id``'s entries moved out by `memory.overflow: archive` (restorable)."""
    from hermes_core.layers.memory import MemoryEngine

    home = _home()
    rows = MemoryEngine(home, _settings(home), user_id).archive.list(
        target=target, query=query, include_restored=show_all, limit=500
    )
    if as_json:
        print_json([row.to_dict() for row in rows])
        return
    out = console()
    if not rows:
        out.print("The memory archive is empty." if not query else "No archived entry matches.")
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("id", "target", "archived", "entry", "status"):
        table.add_column(column, overflow="fold")
    for row in rows:
        status = (
            "restored" if row.restored_at else ("low priority" if row.priority == "low" else "")
        )
        table.add_row(
            str(row.id),
            row.target,
            datetime.fromtimestamp(row.archived_at).strftime("%Y-%m-%d %H:%M"),
            escape(row.content),
            status,
        )
    out.print(table)
    out.print(f"Restore one with `hermes-memory memory restore ID{escape(user_option(user_id))}`.")


def restore_cmd(entry_id: int, user_id: str | None = None) -> None:
    """Put ``user_id``'s archived entry back into its file (must fit the budget and scan
    clean)."""
    from hermes_core.layers.memory import RestoreFailed, restore_entry

    home = _home()
    try:
        engine, outcome = restore_entry(home, _settings(home), user_id, entry_id)
    except RestoreFailed as exc:
        raise click.ClickException(str(exc)) from exc
    with _provider_mirror(home, engine.user_id) as notify:
        for write in outcome.writes:
            if notify is not None:
                notify(write)
    target = cast(MemoryTarget, outcome.payload.get("target", "memory"))
    console().print(
        f"✓ Restored archived entry {escape(str(entry_id))} to {FILENAMES[target]} "
        f"({escape(str(outcome.payload.get('usage')))})"
    )


def users_cmd(as_json: bool) -> None:
    """The user ids that have memory files or staged writes of their own."""
    from hermes_core.layers.memory import memory_users

    home = _home()
    settings = _settings(home)
    try:
        rows = memory_users(home, settings)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        print_json(rows)
        return
    out = console()
    if not rows:
        out.print("No user has memory of their own yet (sessions opened with a user_id do).")
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("user_id", "MEMORY.md", "USER.md", "pending", "directory"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            escape(row["user_id"]),
            str(row["entries"]["memory"]),
            str(row["entries"]["user"]),
            str(row["pending"]),
            escape(row["directory"]),
        )
    out.print(table)
    if settings.shared_agent_memory:
        out.print("memory.shared_agent_memory is on: every user shares the no-user MEMORY.md.")


# ----------------------------------------------------------------------------- export/import


def _print_moved(rows: list[Any], verb: str, as_json: bool) -> None:
    if as_json:
        print_json([row.to_dict() for row in rows])
        return
    out = console()
    if not rows:
        out.print(f"Nothing to {verb}: no memory file in this scope.")
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("user_id", "file", "bytes", "status"):
        table.add_column(column, overflow="fold")
    notes = any(row.error or row.warning for row in rows)
    if notes:
        table.add_column("reason / fix", overflow="fold")
    for row in rows:
        status = row.status + (f" (old bytes kept in {row.backup})" if row.backup else "")
        if row.warning:
            status += " ⚠"
        cells = [
            escape(row.owner or "(no user)"),
            escape(str(row.path)),
            f"{row.size:,}",
            escape(status),
        ]
        if notes:
            cells.append(escape(row.error or row.warning))
        table.add_row(*cells)
    out.print(table)


def export_cmd(dest: Path | None, user_id: str | None, as_json: bool) -> None:
    """Write the stored MEMORY.md / USER.md files (all users, or ``user_id``'s) out as files,
    byte for byte as the file store writes them."""
    from hermes_core.layers.memory import export_files, export_note

    home = _home()
    settings = _settings(home)
    owners = None if user_id is None else [user_id]
    try:
        rows = export_files(home, settings, dest, owners)
    except (HermesError, OSError) as exc:
        raise click.ClickException(f"export failed: {exc}") from exc
    _print_moved(rows, "export", as_json)
    note = export_note(home, settings, dest)
    if not as_json and rows and note:
        console().print(note)


def import_cmd(source: Path | None, user_id: str | None, replace: bool, as_json: bool) -> None:
    """Load MEMORY.md / USER.md files into the PostgreSQL store (safe to re-run)."""
    from hermes_core.layers.memory import import_files

    home = _home()
    settings = _settings(home)
    owners = None if user_id is None else [user_id]
    try:
        rows = import_files(home, settings, source, owners, replace=replace)
    except (HermesError, OSError) as exc:
        raise click.ClickException(f"import failed: {exc}") from exc
    _print_moved(rows, "import", as_json)
    problems: list[str] = []
    conflicts = [row for row in rows if row.status == "conflict"]
    if conflicts:
        problems.append(
            f"{len(conflicts)} file(s) not imported: the database already holds other text "
            "for them — compare with `hermes-memory memory show`, then re-run with --replace to "
            "overwrite"
        )
    refused = [row for row in rows if row.status == "refused"]
    if refused:
        problems.append(
            f"{len(refused)} file(s) refused (threat, credential or not UTF-8; nothing of "
            "them stored) — see the reason for each, fix the file and re-run"
        )
    skipped = [row for row in rows if row.status == "skipped"]
    if skipped:
        problems.append(
            f"{len(skipped)} director(y/ies) under users/ skipped: not in the "
            "users/<slug>-<sha256>/ layout — move them as shown and re-run"
        )
    warned = [row for row in rows if row.warning]
    if warned and not as_json:
        console().print(
            f"[yellow]{len(warned)} file(s) stored over budget[/yellow]: the prompt shows "
            "them marked OVER BUDGET and `hermes-memory doctor` reports them until consolidated."
        )
    if problems:
        raise click.ClickException("; ".join(problems))


# ----------------------------------------------------------------------------- wiring


def _user_option(command: Any) -> Any:
    return click.option(
        "--user",
        "user_id",
        default=None,
        metavar="ID",
        help="The user_id whose memory to use (default: the files of sessions without one).",
    )(command)


def register_memory_commands(group: click.Group) -> None:
    """Add the memory layer's commands to the ``hermes-memory memory`` group (fresh command objects
    per call, so several groups can carry them)."""

    @group.command("show")
    @click.option("--target", type=click.Choice(TARGETS), default=None, help="Default: both.")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    @_user_option
    def show_command(target: str | None, as_json: bool, user_id: str | None) -> None:
        """Entries of MEMORY.md / USER.md, numbered, with a usage bar."""
        show(target, as_json, user_id)

    @group.command("edit")
    @click.option("--target", type=click.Choice(TARGETS), default="memory", show_default=True)
    @click.option(
        "--from",
        "seed",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="Start from this text instead of the file (the recovery file a refused edit names).",
    )
    @_user_option
    def edit_command(target: str, seed: Path | None, user_id: str | None) -> None:
        """Edit a memory file in $EDITOR (validated, scanned, written atomically)."""
        edit(target, seed, user_id)

    @group.command("pending")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    @_user_option
    def pending_command(as_json: bool, user_id: str | None) -> None:
        """Staged memory writes waiting for approval ([auto] = background review)."""
        pending_cmd(as_json, user_id)

    @group.command("approve")
    @click.argument("ids", nargs=-1, required=True)
    @_user_option
    def approve_command(ids: tuple[str, ...], user_id: str | None) -> None:
        """Apply staged writes: IDs or `all` (stale ones are refused and kept)."""
        approve_cmd(ids, user_id)

    @group.command("reject")
    @click.argument("ids", nargs=-1, required=True)
    @_user_option
    def reject_command(ids: tuple[str, ...], user_id: str | None) -> None:
        """Discard staged writes: IDs or `all`."""
        reject_cmd(ids, user_id)

    @group.command("restore")
    @click.argument("entry_id", type=int)
    @_user_option
    def restore_command(entry_id: int, user_id: str | None) -> None:
        """Put an archived entry back into its file."""
        restore_cmd(entry_id, user_id)

    @group.command("archive")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    @click.option("--query", default=None, help="Words that must all occur.")
    @click.option("--target", type=click.Choice(TARGETS), default=None)
    @click.option("--all", "show_all", is_flag=True, help="Include restored entries.")
    @_user_option
    def archive_command(
        as_json: bool, query: str | None, target: str | None, show_all: bool, user_id: str | None
    ) -> None:
        """Entries moved out by `memory.overflow: archive` (restorable)."""
        archive_cmd(as_json, query, target, show_all, user_id)

    @group.command("export")
    @click.option(
        "--to",
        "dest",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="Memories directory to write (default: $HERMES_HOME/memories).",
    )
    @click.option("--user", "user_id", default=None, metavar="ID", help="Only this user's files.")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def export_command(dest: Path | None, user_id: str | None, as_json: bool) -> None:
        """Write MEMORY.md / USER.md out of the store as files (byte for byte)."""
        export_cmd(dest, user_id, as_json)

    @group.command("import")
    @click.option(
        "--from",
        "source",
        type=click.Path(path_type=Path, file_okay=False, exists=True),
        default=None,
        help="Memories directory to read (default: $HERMES_HOME/memories).",
    )
    @click.option("--user", "user_id", default=None, metavar="ID", help="Only this user's files.")
    @click.option("--replace", is_flag=True, help="Overwrite text the database already holds.")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def import_command(
        source: Path | None, user_id: str | None, replace: bool, as_json: bool
    ) -> None:
        """Load MEMORY.md / USER.md files into memory.store: postgresql (safe to re-run)."""
        import_cmd(source, user_id, replace, as_json)

    @group.command("users")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def users_command(as_json: bool) -> None:
        """User ids with memory files or staged writes of their own."""
        users_cmd(as_json)


__all__ = ["register_memory_commands", "usage_bar"]
