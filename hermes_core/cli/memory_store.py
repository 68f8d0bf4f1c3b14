"""``hermes memory show|edit|pending|approve|reject|restore|archive`` (the memory layer's CLI).

Added to the lead's ``hermes memory`` group by :func:`register_memory_commands`. Every listing
command has ``--json``; every error says what happened and how to fix it.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import click
from rich.markup import escape
from rich.table import Table

from hermes_core.cli.output import console, print_json
from hermes_core.errors import HermesError
from hermes_core.layers.memory.approval import PendingStore, approve_pending, reject_pending
from hermes_core.layers.memory.archive import MemoryArchive
from hermes_core.layers.memory.edit import EditRefused, begin_edit, save_edit
from hermes_core.layers.memory.engine import MemoryEngine, Outcome, limit_for
from hermes_core.layers.memory.store import FILENAMES, MemoryStore, char_count, percent
from hermes_core.settings.base import load_settings, resolve_home
from hermes_core.settings.models import MemorySettings
from hermes_core.types import MemoryTarget, MemoryWrite

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


def _store_info(home: Path, settings: MemorySettings, target: MemoryTarget) -> dict[str, Any]:
    store = MemoryStore(home, target, limit_for(settings, target))
    state = store.read()
    current = char_count(state.entries)
    return {
        "target": target,
        "file": str(store.path),
        "exists": state.raw is not None,
        "error": state.error,
        "entries": state.entries,
        "chars": current,
        "limit": store.limit,
        "percent": percent(current, store.limit),
        "over_budget": current > store.limit,
        "enabled": settings.memory_enabled if target == "memory" else settings.user_profile_enabled,
    }


def show(target: str | None, as_json: bool) -> None:
    """Entries of MEMORY.md / USER.md, numbered, with a usage bar."""
    home = _home()
    settings = _settings(home)
    infos = [_store_info(home, settings, t) for t in _targets(target)]
    if as_json:
        print_json({info["target"]: info for info in infos})
        return
    out = console()
    for info in infos:
        title = f"{FILENAMES[info['target']]} ({info['target']})"
        if not info["enabled"]:
            title += " [dim]— disabled in config[/dim]"
        out.print(f"[bold]{title}[/bold]  {escape(info['file'])}")
        if info["error"]:
            out.print(
                f"[red]✗ could not be read: {escape(info['error'])}[/red] — fix the file "
                "(it must be UTF-8) or move it aside"
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
        return path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise click.ClickException(
            f"could not read {path}: {exc.strerror or exc} — give the path of a recovery file"
        ) from exc
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"{path} is not valid UTF-8 ({exc.reason})") from exc


def _refusal(exc: EditRefused, target: str) -> click.ClickException:
    path = exc.recovery
    if exc.kind == "not_utf8":
        return click.ClickException(f"{exc}; nothing was saved. Your text is in {path}")
    resume = f"`hermes memory edit --target {target} --from {path}`"
    if exc.kind == "conflict":
        return click.ClickException(
            f"{exc}; nothing was saved. Your text is kept in {path} — check `hermes memory "
            f"show --target {target}`, then {resume}"
        )
    return click.ClickException(
        f"not saved: {exc}. Your text is kept in {path} — continue from it with {resume}"
    )


def edit(target: str, seed: Path | None = None) -> None:
    """Open a copy of the file (or of ``seed``, e.g. a recovery file) in $EDITOR; save it
    through :func:`~hermes_core.layers.memory.edit.save_edit` (validated, scanned, locked
    compare-and-write)."""
    home = _home()
    settings = _settings(home)
    mem_target = cast(MemoryTarget, target)
    store = MemoryStore(home, mem_target, limit_for(settings, mem_target))
    try:
        base = begin_edit(store)
    except OSError as exc:
        raise click.ClickException(
            f"{store.path} could not be read ({exc}) — fix its permissions or move it aside"
        ) from exc
    if base.not_utf8 is not None:
        console().print(
            f"[yellow]⚠ {escape(store.path.name)} is not valid UTF-8 ({escape(base.not_utf8)}): "
            "undecodable bytes show as �. Saving replaces the file; the original bytes are "
            "kept in a .bak copy next to it.[/]"
        )
    start_text = _seed(seed) if seed is not None else base.text
    with tempfile.TemporaryDirectory(prefix="hermes-memory-edit-") as tmp:
        copy = Path(tmp) / FILENAMES[mem_target]
        copy.write_text(start_text, encoding="utf-8")
        copy.chmod(0o600)
        _run_editor(copy)
        edited = copy.read_bytes()
    try:
        result = save_edit(base, edited)
    except EditRefused as exc:
        raise _refusal(exc, target) from exc
    if not result.changed:
        console().print("No changes.")
        return
    if result.backup is not None:
        console().print(f"original bytes kept in {escape(str(result.backup))}")
    console().print(
        f"✓ Saved {store.path} — {len(result.entries)} entries, "
        + usage_bar(char_count(result.entries), store.limit)
    )


# ----------------------------------------------------------------------------- pending


def _age(ts: float) -> str:
    seconds = max(0, int(time.time() - ts))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def pending_cmd(as_json: bool) -> None:
    """Staged memory writes waiting for approval ([auto] = from a background review)."""
    records = PendingStore(_home()).list()
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
        origin = escape("[auto] background review") if record.auto else record.origin
        table.add_row(
            record.id, _age(record.created_at), record.target, origin, escape(record.summary())
        )
    out.print(table)
    out.print(
        "Approve with `hermes memory approve ID|all`, discard with `hermes memory reject ID|all`."
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
def _provider_mirror(home: Path) -> Iterator[Callable[[MemoryWrite], None] | None]:
    """The route of writes committed here (approve, restore) to the active provider: the
    host's :meth:`~hermes_core.host.MemoryHost.notify_memory_write`, as a tool call's would
    take. Without a configured provider nothing is opened (``None``); the host is flushed and
    closed on exit."""
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
        console().print(f"[yellow]⚠ the memory provider was not told about this change: {exc}[/]")
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
            host.notify_memory_write(write, source="cli")

        yield notify
        host.flush(host.flush_timeout)


def approve_cmd(ids: tuple[str, ...]) -> None:
    """Apply staged writes (stale ones are refused and kept)."""
    home = _home()
    engine = MemoryEngine(home, _settings(home))
    with _provider_mirror(home) as notify:
        approvals = approve_pending(engine, PendingStore(home), ids, notify=notify)
    if not approvals:
        console().print("No pending memory writes.")
        return
    for approval in approvals:
        _print_outcome(approval.pending_id, approval.outcome)
    failed = sum(not approval.success for approval in approvals)
    if failed:
        raise click.ClickException(
            f"{failed} of {len(approvals)} write(s) not applied — see above; "
            "`hermes memory reject ID` discards a stale one"
        )


def reject_cmd(ids: tuple[str, ...]) -> None:
    """Discard staged writes."""
    results = reject_pending(PendingStore(_home()), ids)
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
            "`hermes memory pending`"
        )


# ----------------------------------------------------------------------------- archive


def archive_cmd(as_json: bool, query: str | None, target: str | None, show_all: bool) -> None:
    """Entries moved out by `memory.overflow: archive` (restorable)."""
    rows = MemoryArchive(_home()).list(
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
    out.print("Restore one with `hermes memory restore ID`.")


def restore_cmd(entry_id: int) -> None:
    """Put an archived entry back into its file (must fit the budget and scan clean)."""
    home = _home()
    try:
        outcome = MemoryEngine(home, _settings(home)).restore_archived(entry_id)
    except (OSError, RuntimeError, sqlite3.Error) as exc:
        raise click.ClickException(
            f"could not restore entry {entry_id}: {exc} — nothing was changed and the entry "
            "stays in the archive; fix that and retry"
        ) from exc
    if not outcome.success:
        error = str(outcome.payload.get("error", "failed"))
        if "No archived entry" in error:
            hint = "list them with `hermes memory archive`"
        elif "already restored" in error or "blocked pattern" in error:
            hint = "nothing to do"
        else:
            hint = "free room with `hermes memory edit` and retry"
        raise click.ClickException(f"could not restore entry {entry_id}: {error} — {hint}")
    with _provider_mirror(home) as notify:
        for write in outcome.writes:
            if notify is not None:
                notify(write)
    target = cast(MemoryTarget, outcome.payload.get("target", "memory"))
    console().print(
        f"✓ Restored archived entry {entry_id} to {FILENAMES[target]} "
        f"({outcome.payload.get('usage')})"
    )


# ----------------------------------------------------------------------------- wiring


def register_memory_commands(group: click.Group) -> None:
    """Add the memory layer's commands to the ``hermes memory`` group (fresh command objects
    per call, so several groups can carry them)."""

    @group.command("show")
    @click.option("--target", type=click.Choice(TARGETS), default=None, help="Default: both.")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def show_command(target: str | None, as_json: bool) -> None:
        """Entries of MEMORY.md / USER.md, numbered, with a usage bar."""
        show(target, as_json)

    @group.command("edit")
    @click.option("--target", type=click.Choice(TARGETS), default="memory", show_default=True)
    @click.option(
        "--from",
        "seed",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="Start from this text instead of the file (the recovery file a refused edit names).",
    )
    def edit_command(target: str, seed: Path | None) -> None:
        """Edit a memory file in $EDITOR (validated, scanned, written atomically)."""
        edit(target, seed)

    @group.command("pending")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def pending_command(as_json: bool) -> None:
        """Staged memory writes waiting for approval ([auto] = background review)."""
        pending_cmd(as_json)

    @group.command("approve")
    @click.argument("ids", nargs=-1, required=True)
    def approve_command(ids: tuple[str, ...]) -> None:
        """Apply staged writes: IDs or `all` (stale ones are refused and kept)."""
        approve_cmd(ids)

    @group.command("reject")
    @click.argument("ids", nargs=-1, required=True)
    def reject_command(ids: tuple[str, ...]) -> None:
        """Discard staged writes: IDs or `all`."""
        reject_cmd(ids)

    @group.command("restore")
    @click.argument("entry_id", type=int)
    def restore_command(entry_id: int) -> None:
        """Put an archived entry back into its file."""
        restore_cmd(entry_id)

    @group.command("archive")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    @click.option("--query", default=None, help="Words that must all occur.")
    @click.option("--target", type=click.Choice(TARGETS), default=None)
    @click.option("--all", "show_all", is_flag=True, help="Include restored entries.")
    def archive_command(
        as_json: bool, query: str | None, target: str | None, show_all: bool
    ) -> None:
        """Entries moved out by `memory.overflow: archive` (restorable)."""
        archive_cmd(as_json, query, target, show_all)


__all__ = ["register_memory_commands", "usage_bar"]
