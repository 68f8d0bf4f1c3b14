"""``hermes-memory ui``: the memory inspector in a local web page (parses and prints only)."""

from __future__ import annotations

import click

from hermes_core.cli.output import console


@click.command("ui")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; any non-loopback address requires the printed access token.",
)
@click.option(
    "--port", default=0, type=click.IntRange(0, 65535), help="Port (default: a free one)."
)
@click.option("--no-browser", is_flag=True, help="Do not open a browser.")
@click.option("--read-only", is_flag=True, help="Refuse every change (403).")
def ui(host: str, port: int, no_browser: bool, read_only: bool) -> None:
    """The memory inspector in a local web page: what each user's memory holds, why it was
    recalled; fix it, forget it."""
    try:
        from hermes_core.ui.serve import Served, serve
    except ImportError as exc:  # starlette/uvicorn come with the ui extra
        raise click.ClickException(
            f"hermes-memory ui needs the ui extra ({exc.name} is missing): "
            "pip install 'hermes-memory-core[ui]'"
        ) from exc
    from hermes_core.settings.base import resolve_home

    def announce(served: Served) -> None:
        mode = " (read-only)" if read_only else ""
        console().print(f"hermes-memory ui{mode} at {served.url}", markup=False, soft_wrap=True)
        console().print("Press Ctrl-C to stop.", markup=False)

    serve(
        resolve_home(),
        host=host,
        port=port,
        read_only=read_only,
        open_browser=not no_browser,
        announce=announce,
    )


def register(cli: click.Group) -> None:
    cli.add_command(ui)


__all__ = ["register", "ui"]
