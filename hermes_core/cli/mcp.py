"""``hermes-memory mcp``: serve the memory layers over MCP, and manage the HTTP bearer tokens.

    hermes-memory mcp serve [--transport stdio|http] [--host 127.0.0.1] [--port N] [--user ID]
    hermes-memory mcp token add --user alice [--label laptop]
    hermes-memory mcp token list [--json]
    hermes-memory mcp token revoke ID | --user alice

The rules live in :mod:`hermes_core.mcp`; this module parses and prints.
"""

from __future__ import annotations

import time

import click
from rich.markup import escape

from hermes_core.cli.output import Table, console, print_json, shown
from hermes_core.errors import HermesError
from hermes_core.mcp.tokens import TokenStore
from hermes_core.settings.base import resolve_home

MISSING_EXTRA = (
    "the MCP server needs the 'mcp' extra: pip install 'hermes-memory-core[mcp]' (from a "
    "checkout: pip install -e '.[mcp]'); it installs the official mcp SDK"
)


def _store() -> TokenStore:
    return TokenStore(resolve_home())


@click.group()
def mcp() -> None:
    """Serve hermes-core memory to MCP clients (Claude Desktop, Cursor, Codex CLI, ...)."""


@mcp.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio: one client that starts this process; http: many clients with tokens.",
)
@click.option("--host", default=None, help="HTTP bind address [default: mcp.host, 127.0.0.1].")
@click.option("--port", type=int, default=None, help="HTTP port [default: mcp.port, 8765].")
@click.option("--user", default=None, help="stdio: the user id served [default: mcp.user].")
@click.option(
    "--skill-manage/--no-skill-manage",
    default=None,
    help="Offer skill_manage (skills are shared by all users) [default: mcp.skill_manage].",
)
def serve(
    transport: str, host: str | None, port: int | None, user: str | None, skill_manage: bool | None
) -> None:
    """Run the MCP server (stdio by default). See docs/mcp.md for client configurations."""
    try:
        import anyio

        from hermes_core.mcp import serve as runner
    except ImportError as exc:
        raise click.ClickException(f"{MISSING_EXTRA} ({exc})") from exc
    from hermes_core.host import MemoryHost

    err = console(stderr=True)
    try:
        memory_host = MemoryHost.open()
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    settings = memory_host.settings.mcp
    status = memory_host.provider_status
    if status is not None and not status.active:
        err.print(
            f"[yellow]provider {escape(status.name)} is not serving:[/] {escape(status.reason)} "
            "— built-in memory only (`hermes-memory memory status` shows the fix)"
        )
    try:
        if transport == "stdio":
            if host is not None or port is not None:
                err.print("[yellow]--host/--port apply to --transport http only; ignored[/]")
            served = user if user is not None else settings.user
            anyio.run(lambda: runner.run_stdio(memory_host, user=served, skill_manage=skill_manage))
            return
        if user is not None:
            raise click.UsageError(
                "--user applies to stdio; over HTTP each bearer token names its user "
                "(hermes-memory mcp token add --user ID)"
            )
        bind = host if host is not None else settings.host
        bind_port = port if port is not None else settings.port
        if not runner.is_loopback(bind):
            err.print(
                f"[bold red]WARNING:[/] serving on {escape(bind)}, reachable from other "
                "machines. Every request still needs a bearer token, but the traffic is plain "
                "HTTP: put TLS (a reverse proxy) in front and keep tokens secret."
            )
        try:
            tokens_on_file = bool(TokenStore(memory_host.home).list())
        except HermesError as exc:  # served anyway: fixing the file is picked up live
            err.print(f"[yellow]{shown(exc)}[/]")
            tokens_on_file = True
        if not tokens_on_file:
            err.print(
                "[yellow]no tokens yet:[/] every request will be refused (401). Issue one with "
                "`hermes-memory mcp token add --user <id>`."
            )

        def announce(url: str) -> None:
            err.print(f"hermes-memory mcp: serving {escape(url)} (Ctrl-C stops)")

        try:
            anyio.run(
                lambda: runner.run_http(
                    memory_host,
                    bind=bind,
                    port=bind_port,
                    skill_manage=skill_manage,
                    announce=announce,
                )
            )
        except OSError as exc:
            raise click.ClickException(
                f"cannot listen on {bind}:{bind_port}: {exc} — pick another --port (0 = any "
                "free port) or stop the program using it"
            ) from exc
    except KeyboardInterrupt:
        pass
    finally:
        memory_host.close()


@mcp.group()
def token() -> None:
    """Bearer tokens of the HTTP transport (each names one user)."""


@token.command("add")
@click.option("--user", required=True, help="The user id this token acts for.")
@click.option("--label", default="", help="A note to tell tokens apart (e.g. 'laptop').")
def token_add(user: str, label: str) -> None:
    """Issue a token for USER; it is printed once and stored only hashed."""
    try:
        issued = _store().add(user, label)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    out = console()
    out.print(f"token {issued.record.id} for user {escape(user)!r} (shown once, store it now):")
    click.echo(issued.token)


@token.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def token_list(as_json: bool) -> None:
    """Tokens (id, user, label, created); never the secrets."""
    try:
        records = _store().list()
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        print_json([record.public() for record in records])
        return
    out = console()
    if not records:
        out.print("no tokens; issue one with `hermes-memory mcp token add --user <id>`")
        return
    table = Table("id", "user", "label", "created")
    for record in records:
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(record.created_at))
        table.add_row(shown(record.id), shown(record.user), shown(record.label), created)
    out.print(table)


@token.command("revoke")
@click.argument("token_id", required=False)
@click.option("--user", default=None, help="Revoke every token of this user.")
def token_revoke(token_id: str | None, user: str | None) -> None:
    """Revoke token TOKEN_ID (or every token of --user); effective on the next request."""
    if (token_id is None) == (user is None):
        raise click.UsageError(
            "give a token id (see `hermes-memory mcp token list`) or --user, not both"
        )
    try:
        gone = _store().revoke(token_id, user=user)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    if not gone:
        raise click.ClickException(
            "no such token; `hermes-memory mcp token list` shows the ids of the tokens there are"
        )
    out = console()
    for record in gone:
        out.print(f"revoked {record.id} (user {escape(record.user)!r})")


__all__ = ["mcp"]
