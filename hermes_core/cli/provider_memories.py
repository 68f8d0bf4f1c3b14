"""``hermes-memory memory provider-list`` and ``provider-expire``: one user's provider memories.

Parses and prints only: listing, filtering and expiry are
:mod:`hermes_core.inspector.provider_memories`'. A provider that cannot list its memories,
or keep expiry dates, is named with the reason (exit status 1 for ``provider-expire``).
"""

from __future__ import annotations

import time

import click

from hermes_core.cli.output import Table, console, print_json, shown
from hermes_core.errors import HermesError


def _when(at: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if at else "—"


def list_cmd(user_id: str | None, query: str, as_json: bool) -> None:
    from hermes_core.host import MemoryHost
    from hermes_core.inspector.provider_memories import list_memories
    from hermes_core.providers.inspect import is_expired

    try:
        with MemoryHost.open() as host:
            listing = list_memories(host, user_id, query)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        print_json(listing.to_dict())
        return
    now = time.time()
    table = Table(title=f"{listing.provider or 'no provider'} memories of {listing.user_id or '—'}")
    for column in ("id", "memory", "type", "created", "state"):
        table.add_column(column, overflow="fold")
    for m in listing.memories:
        if not m.active:
            state = f"replaced by {m.superseded_by} {_when(m.replaced_at)}"
        elif is_expired(m, now):
            state = f"expired {_when(m.expires_at)} (left recall)"
        elif m.expires_at is not None:
            state = f"expires {_when(m.expires_at)}"
        else:
            state = "current"
        table.add_row(shown(m.id), shown(m.text), shown(m.kind), _when(m.created_at), shown(state))
    console().print(table)
    if listing.note:
        console().print(shown(listing.note))


def expire_cmd(memory_id: str, date: str | None, clear: bool, user_id: str | None) -> None:
    from hermes_core.host import MemoryHost
    from hermes_core.inspector.provider_memories import set_expiry

    if clear == bool(date):
        raise click.UsageError("give a DATE (YYYY-MM-DD) or --clear — one of them")
    try:
        with MemoryHost.open() as host:
            moment = set_expiry(host, user_id, memory_id, date or "")
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    if moment is None:
        console().print(shown(f"✓ {memory_id}: expiry cleared"))
    elif moment <= time.time():
        console().print(shown(f"✓ {memory_id}: expired, it leaves recall"))
    else:
        console().print(shown(f"✓ {memory_id}: expires {_when(moment)}"))


def register_provider_memory_commands(group: click.Group) -> None:
    """Add ``provider-list`` and ``provider-expire`` to the ``hermes-memory memory`` group."""
    user_option = click.option(
        "--user",
        "user_id",
        default=None,
        metavar="ID",
        help="Whose memories (default: the provider's configured user).",
    )

    @group.command("provider-list")
    @user_option
    @click.option("--query", "-q", default="", help="Only memories containing this text.")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def provider_list(user_id: str | None, query: str, as_json: bool) -> None:
        """The active provider's memories of one user, superseded and expired ones included."""
        list_cmd(user_id, query, as_json)

    @group.command("provider-expire")
    @click.argument("memory_id")
    @click.argument("date", required=False)
    @click.option("--clear", is_flag=True, help="Remove the memory's expiry date.")
    @user_option
    def provider_expire(memory_id: str, date: str | None, clear: bool, user_id: str | None) -> None:
        """Give a provider memory an expiry DATE (YYYY-MM-DD, start of that day, local time);
        once passed, it leaves recall. IDs come from `provider-list`."""
        expire_cmd(memory_id, date, clear, user_id)


__all__ = ["register_provider_memory_commands"]
