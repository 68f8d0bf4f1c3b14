"""``hermes-memory chat`` — the reference agent in a terminal (rich output, prompt_toolkit input).

``hermes-memory chat`` opens an interactive conversation; ``hermes-memory chat -q "…"`` runs one
turn,
prints the reply and exits 0. The endpoint comes from ``--base-url/--model/--api-key`` or the
settings (``llm.*`` in config.yaml, ``HERMES_LLM__*``); with none configured or reachable a
first-run message says how to point at Ollama, vLLM, LM Studio or a hosted API.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from pydantic import SecretStr
from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.text import Text

from hermes_core import activity
from hermes_core.errors import HermesError
from hermes_core.llm.probe import probe_endpoint
from hermes_core.settings.base import load_settings, resolve_home
from hermes_core.settings.models import HermesSettings

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

    from hermes_core.agent.loop import Agent, AgentEvent

log = logging.getLogger(__name__)


SETUP_HELP = """hermes-memory chat talks to any OpenAI-compatible endpoint. Point it at one:
  Ollama     hermes-memory chat --base-url http://127.0.0.1:11434/v1 --model llama3.1
  vLLM       hermes-memory chat --base-url http://127.0.0.1:8000/v1 --model <served model>
  LM Studio  hermes-memory chat --base-url http://127.0.0.1:1234/v1 --model <loaded model>
  hosted     hermes-memory chat --base-url https://api.openai.com/v1 --model gpt-4o-mini --api-key …
or set it once: HERMES_LLM__BASE_URL, HERMES_LLM__MODEL (and HERMES_LLM__API_KEY), or in
{config}:
  llm:
    base_url: http://127.0.0.1:11434/v1
    model: llama3.1"""


def setup_help(home: Path) -> str:
    return SETUP_HELP.format(config=home / "config.yaml")


# --------------------------------------------------------------------------- settings, probe


def apply_overrides(
    settings: HermesSettings,
    *,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
) -> HermesSettings:
    """``settings`` with the command-line endpoint applied to ``llm`` (so compression
    summaries and reviews use it too)."""
    update: dict[str, Any] = {}
    if base_url:
        update["base_url"] = base_url
    if model:
        update["model"] = model
    if api_key:
        update["api_key"] = SecretStr(api_key)
    if not update:
        return settings
    return settings.model_copy(update={"llm": settings.llm.model_copy(update=update)})


def resolve_endpoint(settings: HermesSettings, home: Path) -> tuple[HermesSettings, str]:
    """Check the endpoint is configured and reachable; fill ``llm.model`` from the server
    when unset. Returns (settings, note for the user). Raises ClickException with the
    first-run help otherwise."""
    llm = settings.llm
    if not llm.base_url:
        raise click.ClickException("no model endpoint is configured.\n" + setup_help(home))
    probe = probe_endpoint(llm.base_url, llm.api_key)
    if not probe.reachable:
        raise click.ClickException(
            f"the model endpoint {llm.base_url} is not reachable ({probe.error}).\n"
            + setup_help(home)
        )
    if probe.status in (401, 403):
        raise click.ClickException(
            f"{llm.base_url} refused the API key ({probe.status}) — pass --api-key or set "
            "HERMES_LLM__API_KEY / llm.api_key"
        )
    note = ""
    if not llm.model:
        if not probe.models:
            raise click.ClickException(
                f"no model chosen and {llm.base_url} lists none — pass --model or set "
                "llm.model (HERMES_LLM__MODEL)"
            )
        chosen = probe.models[0]
        settings = apply_overrides(settings, model=chosen)
        note = f"using model {chosen} (the first the server lists; choose with --model)"
    elif probe.models and llm.model not in probe.models:
        note = f"note: {llm.base_url} does not list model '{llm.model}'"
    return settings, note


# --------------------------------------------------------------------------- rendering


class EventPrinter:
    """Prints agent events: streamed text as it comes, tool and recall lines dimmed.

    While a model call has produced nothing yet, a spinner says so (with the retry count
    when the endpoint fails); it disappears at the first event that prints. Without a
    terminal the spinner is off and each retry is one dimmed line instead.
    """

    def __init__(
        self, console: Console, *, show_usage: bool = True, spinner: bool | None = None
    ) -> None:
        self.console = console
        self.show_usage = show_usage
        self.mid_line = False
        self.spinner = console.is_terminal if spinner is None else spinner
        self._status: Status | None = None
        self.retries = 0
        self.loaded_skills: list[str] = []
        """Skills the model loaded with skill_view (SKILL.md, not a support file)."""

    def _line(self, markup: str) -> None:
        if self.mid_line:
            self.console.print()
            self.mid_line = False
        self.console.print(markup)

    def _wait(self, text: str) -> None:
        if not self.spinner:
            return
        waiting = _Waiting(text)
        if self._status is None:
            self._status = self.console.status(waiting, spinner="dots")
            self._status.start()
        else:
            self._status.update(waiting)

    def start_waiting(self, text: str) -> None:
        """Show the spinner with ``text`` (a slow step outside a model call: closing the
        session runs a bounded memory flush)."""
        self._wait(text + " …")

    def stop_waiting(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __call__(self, event: AgentEvent) -> None:
        if event.kind == "waiting":
            self.retries = 0
            self._wait(event.text + " …")
            return
        if event.kind == "retry":
            self.retries += 1
            if self.spinner:
                self._wait(f"{event.text} …")
            else:
                self._line(f"[dim]↻ {escape(event.text)}[/dim]")
            return
        self.stop_waiting()
        if event.kind == "text":
            self.console.print(event.text, end="", markup=False, highlight=False)
            self.console.file.flush()
            self.mid_line = not event.text.endswith("\n")
        elif event.kind == "recall":
            self._line(f"[dim]{escape(event.text)}[/dim]")
        elif event.kind == "tool_call":
            self._line(f"[cyan]⚙ {escape(event.text)}[/cyan]")
            if event.data.get("name") == "skill_view":
                self._note_skill(event.data.get("arguments"))
        elif event.kind == "tool_result":
            mark = "[green]✓[/green]" if event.data.get("ok") else "[red]✗[/red]"
            self._line(f"  {mark} [dim]{escape(event.text)}[/dim]")
        elif event.kind == "usage" and self.show_usage:
            self._line(f"[dim]↳ {escape(event.text)}[/dim]")
        elif event.kind == "compressed":
            self._line(f"[yellow]🗜 {escape(event.text)}[/yellow]")
        elif event.kind == "notice":
            self._line(f"[magenta]{escape(event.text)}[/magenta]")

    def _note_skill(self, raw: Any) -> None:
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            return
        if (
            isinstance(args, dict)
            and isinstance(args.get("name"), str)
            and not args.get("file_path")
        ):
            self.loaded_skills.append(args["name"])

    def end_turn(self) -> None:
        self.stop_waiting()
        if self.mid_line:
            self.console.print()
            self.mid_line = False


class _Waiting:
    """The spinner's text: what we wait for, then what the memory provider is doing right
    now (``waiting for qwen2.5 … — mem0: saving the last turn (3 s)``), re-read on every
    refresh so a slow provider is never a silent pause."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __rich__(self) -> Text:
        doing = activity.describe()
        return Text(f"{self.text} — {doing}" if doing else self.text)


def print_shutdown_notes(console: Console, notes: Sequence[str]) -> None:
    """One yellow line per provider that did not finish at exit (who, what, the setting)."""
    for note in notes:
        console.print(f"[yellow]⚠ {escape(note)}[/yellow]")


def close_host(agent: Agent, printer: EventPrinter, console: Console) -> None:
    """Stop the memory provider on the way out, the spinner saying what it waits for, then
    print what did not finish (:func:`print_shutdown_notes`)."""
    printer.start_waiting("stopping the memory provider")
    try:
        agent.host.close()
    finally:
        printer.stop_waiting()
    print_shutdown_notes(console, agent.host.shutdown_notes)


_SLOW_COMMANDS = {
    "/new": "closing the session, saving what to keep",
    "/reset": "closing the session, saving what to keep",
    "/compress": "saving what to keep, then compacting",
}
"""Commands that may run a bounded memory flush (and a summary call): a spinner shows it."""


class ChatUI:
    """The interactive loop. ``input``/``output`` are prompt_toolkit objects (tests pass a
    pipe input and a dummy output); ``console`` receives everything the UI prints."""

    def __init__(
        self,
        agent: Agent,
        console: Console,
        printer: EventPrinter,
        *,
        input: Input | None = None,
        output: Output | None = None,
        banner: str = "",
    ) -> None:
        from prompt_toolkit import PromptSession

        self.agent = agent
        self.console = console
        self.printer = printer
        self.banner = banner
        self._notices: list[str] = []
        self._input = input
        self._output = output
        self._offered: set[str] = set()
        self._skill_names: dict[str, str] = {}
        self.prompt: PromptSession[str] = PromptSession(
            input=input,
            output=output,
            bottom_toolbar=self._toolbar,
            refresh_interval=1.0,
            completer=SlashCompleter(lambda: self._skill_names),
            complete_while_typing=True,
        )

    def _collect(self) -> None:
        self._notices.extend(self.agent.drain_notifications())

    def _toolbar(self) -> str:
        self._collect()
        last = self._notices[-1] if self._notices else ""
        return f" {last}  ·  /help for commands " if last else " /help for commands "

    def _print_notices(self) -> None:
        self._collect()
        for line in self._notices:
            self.console.print(f"[magenta]{escape(line)}[/magenta]")
        self._notices.clear()

    def _refresh_skills(self) -> None:
        from hermes_core.agent.commands import skill_commands

        try:
            self._skill_names = skill_commands(self.agent)
        except Exception:  # completion is a convenience; never fail the chat for it
            log.debug("could not list skill commands", exc_info=True)

    def _ask_secret(self, label: str) -> str:
        from prompt_toolkit import PromptSession

        session: PromptSession[str] = PromptSession(input=self._input, output=self._output)
        try:
            return session.prompt(label, is_password=True).strip()
        except (KeyboardInterrupt, EOFError):
            return ""

    def offer_keys(self, names: list[str]) -> None:
        """For each loaded skill with unset required keys, offer once to set them (input
        hidden, stored in $HERMES_HOME/.env)."""
        from hermes_core.agent.commands import missing_skill_keys, store_skill_keys

        for name in dict.fromkeys(names):
            if name in self._offered:
                continue
            self._offered.add(name)
            missing = missing_skill_keys(self.agent, name)
            if not missing:
                continue
            listed = ", ".join(spec.name for spec in missing)
            self.console.print(
                f"[yellow]Skill {escape(name)} needs {escape(listed)}, which "
                f"{'is' if len(missing) == 1 else 'are'} not set.[/yellow]"
            )
            answer = self._ask_secret(f"Set {listed} now? [y/N] ")
            if answer.lower() not in ("y", "yes", "是", "好"):
                self.console.print(
                    escape(f"Skipped. Set later with `hermes-memory skills env {name}`."),
                    style="dim",
                )
                continue
            values: dict[str, str] = {}
            for spec in missing:
                if spec.help:
                    self.console.print(escape(f"{spec.name}: {spec.help}"), style="dim")
                label = spec.prompt or spec.name
                value = self._ask_secret(f"{label} (hidden, empty to skip): ")
                if value:
                    values[spec.name] = value
            try:
                written = store_skill_keys(self.agent, values)
            except HermesError as exc:
                self.console.print(f"[red]✗ {escape(str(exc))}[/red]")
                continue
            if written:
                self.console.print(
                    f"[green]✓[/green] {escape('stored ' + ', '.join(written) + ' in .env')}"
                )

    def run(self) -> None:
        """Read lines until /exit or EOF; the session is closed on the way out."""
        from hermes_core.agent.commands import is_command, run_command, skill_command_clashes
        from hermes_core.llm.errors import LLMError

        if self.banner:
            self.console.print(self.banner)
        for notice in skill_command_clashes(self.agent):
            self.console.print(f"[yellow]{escape(notice)}[/yellow]")
        try:
            while True:
                self._print_notices()
                self._refresh_skills()
                try:
                    text = self.prompt.prompt("› ")
                except KeyboardInterrupt:
                    continue
                except EOFError:
                    break
                if not text.strip():
                    continue
                if is_command(text):
                    try:
                        slow = _SLOW_COMMANDS.get(text.split()[0])
                        if slow:  # may flush memory first (bounded)
                            self.printer.start_waiting(slow)
                        result = run_command(self.agent, text)
                    except Exception as exc:  # a failing command must not end the chat
                        log.debug("command %s failed", text.split()[0], exc_info=True)
                        self.console.print(
                            f"[red]✗ {escape(text.split()[0])} failed: "
                            f"{escape(f'{type(exc).__name__}: {exc}')}[/red]"
                        )
                        continue
                    finally:
                        self.printer.stop_waiting()
                    for line in result.lines:
                        self.console.print(escape(line))
                    if result.exit:
                        break
                    if not result.turn:
                        continue
                    self.offer_keys(result.skills)
                    text = result.turn
                self.printer.loaded_skills.clear()
                try:
                    outcome = self.agent.run_turn(text)
                except (LLMError, HermesError) as exc:  # e.g. the archive could not store it
                    self.printer.end_turn()
                    self.console.print(f"[red]✗ {escape(str(exc))}[/red]")
                    continue
                self.printer.end_turn()
                if outcome.interrupted:
                    self.console.print("[yellow](interrupted)[/yellow]")
                self.offer_keys(self.printer.loaded_skills)
        finally:
            self.printer.start_waiting("closing the session, saving what to keep")
            try:
                self.agent.close()  # a bounded memory flush first (review.flush_timeout)
            finally:
                self.printer.stop_waiting()
            self._print_notices()  # what the flush on exit saved


class SlashCompleter(Completer):
    """prompt_toolkit completer for ``/`` commands: the built-ins and every enabled skill
    (``skills()`` returns name → description; called on each completion)."""

    def __init__(self, skills: Callable[[], dict[str, str]]) -> None:
        self.skills = skills

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        from hermes_core.agent.commands import COMMANDS

        text = document.text_before_cursor
        if not text.startswith("/") or " " in text:
            return
        word = text[1:]
        names = {name: "built-in" for name in COMMANDS}
        for name, description in self.skills().items():
            names.setdefault(name, " ".join(description.split())[:60])
        for name in sorted(names):
            if name.startswith(word):
                yield Completion("/" + name, start_position=-len(text), display_meta=names[name])


# --------------------------------------------------------------------------- the command


def open_agent(
    settings: HermesSettings,
    home: Path,
    on_event: Callable[[AgentEvent], None],
    user_id: str | None = None,
) -> Agent:
    from hermes_core.agent.loop import Agent
    from hermes_core.host import MemoryHost

    host = MemoryHost.open(home, settings=settings)
    if host.provider_status is not None and not host.provider_status.active:
        Console(file=sys.stderr).print(
            f"[yellow]memory provider {escape(host.provider_status.name)} is not active: "
            f"{escape(host.provider_status.reason)} — built-in memory only[/yellow]"
        )
    return Agent(host, on_event=on_event, user_id=user_id or None)


def memory_label(agent: Agent) -> str:
    """ "built-in + chroma" when a provider is active, "built-in" otherwise."""
    provider = agent.host.provider
    return f"built-in + {provider.name}" if provider is not None else "built-in"


def one_shot(
    agent: Agent, query: str, console: Console, printer: EventPrinter | None = None
) -> None:
    """Run one turn; the reply goes to stdout, everything else to stderr (``printer``'s
    spinner says what closing the session waits for)."""
    from hermes_core.llm.errors import LLMError

    try:
        result = agent.run_turn(query)
    except (LLMError, HermesError) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if printer is not None:
            printer.end_turn()
            printer.start_waiting("closing the session, saving what to keep")
        try:
            agent.close()
        finally:
            if printer is not None:
                printer.stop_waiting()
        for line in agent.drain_notifications():
            Console(file=sys.stderr).print(f"[magenta]{escape(line)}[/magenta]")
    if not result.completed and not result.reply:
        raise click.ClickException("the turn did not complete; see the lines above")
    console.print()


def route_logs_to_file(home: Path) -> Path | None:
    """In the interactive UI, library warnings would land between streamed lines; send them
    to ``$HERMES_HOME/logs/chat.log`` instead (unless ``-v`` asked for them on screen).
    Returns the log file, or None when logging stays on the terminal."""
    root = logging.getLogger()
    if root.getEffectiveLevel() < logging.WARNING:
        return None
    from hermes_core.fsutil import ensure_private_dir

    path = ensure_private_dir(home / "logs") / "chat.log"
    for handler in list(root.handlers):
        if isinstance(handler, logging.StreamHandler) and not isinstance(
            handler, logging.FileHandler
        ):
            root.removeHandler(handler)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    return path


def register(cli: click.Group) -> None:
    """Add ``hermes-memory chat`` to the root group."""

    @cli.command("chat")
    @click.option("-q", "--query", default=None, help="Run one turn, print the reply, exit.")
    @click.option("--model", default=None, help="Model name (default: llm.model).")
    @click.option("--base-url", default=None, help="OpenAI-compatible base URL, e.g. …/v1.")
    @click.option("--api-key", default=None, help="API key (default: llm.api_key).")
    @click.option("--no-usage", is_flag=True, help="Hide the token usage line after replies.")
    @click.option(
        "--user",
        "user_id",
        default=None,
        metavar="ID",
        help="Chat as this user_id: their own MEMORY.md/USER.md and staged writes.",
    )
    def chat(
        query: str | None,
        model: str | None,
        base_url: str | None,
        api_key: str | None,
        no_usage: bool,
        user_id: str | None,
    ) -> None:
        """Chat with the reference agent: memory, session search, skills, compression and
        background review, with slash commands (/help)."""
        home = resolve_home()
        try:
            settings = load_settings(home)
        except HermesError as exc:
            raise click.ClickException(f"{exc} — fix {home / 'config.yaml'} and retry") from exc
        settings = apply_overrides(settings, base_url=base_url, model=model, api_key=api_key)
        settings, note = resolve_endpoint(settings, home)
        err = Console(file=sys.stderr, highlight=False)
        if note:
            err.print(f"[dim]{escape(note)}[/dim]")
        if query is not None:
            out = Console(file=sys.stdout, highlight=False, soft_wrap=True)
            side = EventPrinter(err, show_usage=False)
            route_logs_to_file(home)  # library warnings must not land between reply lines

            def route(event: AgentEvent) -> None:
                if event.kind == "text":
                    out.print(event.text, end="", markup=False, highlight=False)
                    out.file.flush()
                else:
                    side(event)

            agent = open_agent(settings, home, route, user_id)
            try:
                one_shot(agent, query, out, side)
            finally:
                close_host(agent, side, err)
            return
        console = Console(highlight=False, soft_wrap=True)
        printer = EventPrinter(console, show_usage=not no_usage)
        log_file = route_logs_to_file(home)
        agent = open_agent(settings, home, printer, user_id)
        banner = (
            f"[bold]hermes-memory chat[/bold] — model {escape(agent.model or '?')} at "
            f"{escape(settings.llm.base_url or '?')} · memory: {escape(memory_label(agent))} · "
            f"session {agent.session.id} · "
            "/help for commands, /exit to leave"
            + (f" · warnings: {escape(str(log_file))}" if log_file else "")
        )
        try:
            ChatUI(agent, console, printer, banner=banner).run()
        finally:
            close_host(agent, printer, console)


__all__ = [
    "ChatUI",
    "EventPrinter",
    "SlashCompleter",
    "apply_overrides",
    "close_host",
    "print_shutdown_notes",
    "register",
    "resolve_endpoint",
    "setup_help",
]
