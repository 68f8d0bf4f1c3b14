"""``hermes-memory chroma ...``: forget a user, show stats, re-embed after an embedder change.

Added to the root group by the active provider's ``register_commands`` hook.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click
from hermes_core.cli.output import Table
from rich.console import Console

if TYPE_CHECKING:
    from hermes_memory_chroma.provider import ChromaProvider


def register(cli: click.Group, provider: ChromaProvider) -> None:
    """Add the ``chroma`` group to ``cli`` (once)."""
    if "chroma" in cli.commands:
        return
    cli.add_command(build_group(provider))


def build_group(provider: ChromaProvider) -> click.Group:
    """The ``chroma`` command group bound to ``provider``."""

    @click.group(name="chroma")
    def chroma() -> None:
        """The chroma memory provider: stats, forget a user, re-embed."""

    @chroma.command("forget")
    @click.option("--user", "user_id", required=True, help="User id whose memories to delete.")
    @click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
    def forget(user_id: str, yes: bool) -> None:
        """Delete every memory of a user (chroma collection and keyword index)."""
        if not user_id.strip():
            raise click.ClickException("--user is empty — pass the user id to forget")
        if not yes:
            click.confirm(f"Delete all chroma memories of user {user_id!r}?", abort=True)
        try:
            removed = provider.clear_user_memory(user_id)
        except Exception as exc:
            raise click.ClickException(
                f"could not clear {user_id!r} at {provider.location}: {exc} — run `hermes-memory "
                f"doctor`"
            ) from exc
        Console().print(f"Removed {removed} memories of user [bold]{user_id}[/bold].")

    @chroma.command("stats")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
    def stats(as_json: bool) -> None:
        """Memories per user, the embedder, and pending re-embeds."""
        data = _stats(provider)
        if as_json:
            click.echo(json.dumps(data, ensure_ascii=False, indent=2))
            return
        table = Table(
            title=f"chroma memories ({data['mode']}) — {data['path']} ({data['embedder']})"
        )
        for col in ("user", "active", "total", "indexed", "re-embed needed"):
            table.add_column(col, justify="left" if col == "user" else "right")
        for row in data["users"]:
            table.add_row(
                row["user_id"],
                str(row["active"]),
                str(row["total"]),
                str(row["indexed"]),
                "yes" if row["needs_reembed"] else "no",
            )
        Console().print(table)
        if data.get("outbox"):
            Console().print(f"{data['outbox']} memories wait in the outbox for the chroma server.")

    @chroma.command("reembed")
    @click.option("--user", "user_id", default=None, help="Only this user (default: all).")
    @click.option("--force", is_flag=True, help="Re-embed even when the embedder is unchanged.")
    def reembed(user_id: str | None, force: bool) -> None:
        """Recompute embeddings with the configured embedder (with a progress bar)."""
        from hermes_memory_chroma.progress import reembed_bar

        store = provider.store
        users = [user_id] if user_id else store.users()
        total = 0
        for user in users:
            if not (force or store.needs_reembed(user)):
                continue
            count = store.size(user)
            bar = reembed_bar(f"re-embedding {user}", count, Console(stderr=True))
            total += store.reembed(user, bar, force=force)
            if force:  # also rebuild the keyword index from chroma
                store.rebuild_keyword_index(user)
        Console().print(f"Re-embedded {total} memories with {store.embedder.name}.")

    return chroma


def _stats(provider: ChromaProvider) -> dict[str, Any]:
    """The store's stats with the mode (``path`` is the directory, or the server)."""
    try:
        return {"mode": provider.settings.mode, **provider.store.stats()}
    except Exception as exc:
        waiting = sum(provider.outbox_waiting().values())
        kept = f" ({waiting} memories wait in the outbox for it)" if waiting else ""
        raise click.ClickException(
            f"could not read the chroma store at {provider.location}{kept}: {exc} — run "
            "`hermes-memory doctor`"
        ) from exc


__all__ = ["build_group", "register"]
