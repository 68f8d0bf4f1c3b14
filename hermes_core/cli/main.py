"""The ``hermes-memory`` command (``python -m hermes_core``; ``hermes`` only through the
``hermes-memory-cli`` distribution).

Built-in commands are imported lazily: ``hermes-memory --help`` and ``hermes-memory --version``
load no
layer, no settings model and no HTTP client (the command list is printed from
:data:`BUILTIN_HELP`; a test checks it against each command's own help). A name that is
not built in is looked up among the *active* provider's commands, so ``hermes-memory chroma ...``
exists only while chroma is ``memory.provider`` — inactive providers are never imported.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

import click

from hermes_core import __version__

COMMAND = "hermes-memory"
"""The console script of the ``hermes-memory-core`` distribution (also ``python -m
hermes_core``). It never collides with Hermes Agent's ``hermes``: the short name ``hermes``
comes only from the separate ``hermes-memory-cli`` distribution, for environments without
Hermes Agent (docs/install.md)."""

# command name -> "module:attribute" (a click.Command) or "module" (exposes register(cli))
BUILTIN_COMMANDS: dict[str, str] = {
    "memory": "hermes_core.cli.memory:memory",
    "plugins": "hermes_core.cli.plugins:plugins",
    "install": "hermes_core.cli.plugins:install",
    "uninstall": "hermes_core.cli.plugins:uninstall",
    "doctor": "hermes_core.cli.doctor:doctor",
    "bench": "hermes_core.cli.bench:bench",
    "sessions": "hermes_core.cli.sessions",
    "skills": "hermes_core.cli.skills",
    "chat": "hermes_core.cli.chat",
    "mcp": "hermes_core.cli.mcp:mcp",
    "ui": "hermes_core.cli.ui:ui",
}


BUILTIN_HELP: dict[str, str] = {
    "memory": "Built-in memory and the one external memory provider.",
    "plugins": "Registered plugins and installed providers, as JSON (name, version, hooks, "
    "active).",
    "install": "Install provider packages into the Python environment hermes runs in.",
    "uninstall": "Uninstall packages from the Python environment hermes runs in.",
    "doctor": "Check the Hermes home, config, SQLite, every memory layer and the provider.",
    "bench": "Benchmarks: figures go to docs/benchmarks.md with the command that produced them.",
    "sessions": "The session archive ($HERMES_HOME/state.db or PostgreSQL): browse, search, "
    "export, import, prune, migrate.",
    "skills": "Skills (SKILL.md procedural memory) in $HERMES_HOME/skills and "
    "skills.external_dirs.",
    "chat": "Chat with the reference agent: memory, session search, skills, compression and "
    "background review, with slash commands (/help).",
    "mcp": "Serve hermes-core memory to MCP clients (Claude Desktop, Cursor, Codex CLI, ...).",
    "ui": "The memory inspector in a local web page: what each user's memory holds, why it was "
    "recalled; fix it, forget it.",
}
"""The short help of every built-in command, shown by ``hermes-memory --help`` without importing
the command's module (it equals the command's own ``get_short_help_str``)."""


class HermesGroup(click.Group):
    """A group whose built-in commands load on demand and whose unknown names are asked of
    the active provider's ``register_commands``."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; every error message it raises passes the one redaction (and a
        :class:`~hermes_core.errors.HermesError` nobody caught is shown as an error, not a
        traceback)."""
        from hermes_core.cli.output import clean
        from hermes_core.errors import HermesError

        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            shown = clean(exc.message)
            if shown != exc.message:
                vars(exc)["message"] = shown  # ClickException.message is Final in its stubs
            raise
        except HermesError as exc:
            raise click.ClickException(clean(str(exc))) from exc

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = set(BUILTIN_COMMANDS) | set(self.commands)
        return sorted(names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        target = BUILTIN_COMMANDS.get(cmd_name)
        if target is not None:
            return _load_builtin(self, cmd_name, target)
        return _provider_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``hermes-memory --help``: built-in commands from
        :data:`BUILTIN_HELP` (no import), commands added to the group from their help."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows: list[tuple[str, str]] = []
        for name in names:
            if name in self.commands:
                command = self.commands[name]
                if command.hidden:
                    continue
                rows.append((name, command.get_short_help_str(limit)))
            else:
                stand_in = click.Command(name, help=BUILTIN_HELP.get(name, ""))
                rows.append((name, stand_in.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _load_builtin(group: click.Group, name: str, target: str) -> click.Command | None:
    module_name, _, attribute = target.partition(":")
    module = importlib.import_module(module_name)
    if attribute:
        command = getattr(module, attribute)
        assert isinstance(command, click.Command)
        return command
    scratch = click.Group(name="scratch")
    module.register(scratch)
    return scratch.commands.get(name)


def _provider_command(ctx: click.Context, name: str) -> click.Command | None:
    """The active provider's command ``name``, importing only that provider.

    The command's callback may use the provider instance, so the host opened here stays open
    while the command runs and is closed (worker drained, provider shut down) when the
    ``hermes`` context closes; a host whose provider offers no such command is closed at
    once."""
    from hermes_core.errors import HermesError
    from hermes_core.settings.base import load_settings

    try:
        settings = load_settings()
    except HermesError:
        return None
    if settings.memory.provider != name:
        return None
    from hermes_core.host import MemoryHost

    host = MemoryHost.open(settings=settings)
    scratch = click.Group(name="scratch")
    host.facade.register_commands(scratch)
    command = scratch.commands.get(name)
    if command is None:
        host.close()
    else:
        ctx.call_on_close(host.close)
    return command


@click.group(cls=HermesGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name=COMMAND)
@click.option("-v", "--verbose", count=True, help="Log more (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """hermes-memory — memory for agents: curated notes, a searchable session archive, skills,
    compression, and one pluggable external memory provider.

    Start with `hermes-memory memory status`, then `hermes-memory memory setup`.
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    from hermes_core.cli.output import install_log_filter

    install_log_filter()


def main(argv: list[str] | None = None) -> Any:
    """Entry point for ``python -m hermes_core``."""
    return cli.main(args=argv, prog_name=COMMAND)


__all__ = ["BUILTIN_COMMANDS", "HermesGroup", "cli", "main"]
