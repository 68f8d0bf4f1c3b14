"""``hermes-memory memory forget``: forget a subject (a phrase) or a whole user, for scripts too.

Parses and prints only: the search, deletion and proof are
:mod:`hermes_core.inspector.forget`'s. Without ``--yes`` the matches are shown and a
confirmation is asked (refused when stdin is not a terminal); ``--json`` prints the preview
or the report as JSON. The exit status is 1 when the proof is not clean.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from hermes_core.cli.output import Table, console, mark, print_json, shown
from hermes_core.errors import HermesError

WIDTH = 160
"""Characters of one value shown in the preview and the report."""


def _preview_table(matches: Any) -> Table:
    table = Table(show_header=True, header_style="bold")
    for column in ("store", "where", "text"):
        table.add_column(column)
    for hit in matches.memory:
        table.add_row("memory", shown(f"{hit.store} {hit.ref}", WIDTH), shown(hit.text, WIDTH))
    for hit in matches.archive:
        table.add_row(
            "sessions", shown(f"{hit.kind} {hit.session_id}", WIDTH), shown(hit.text, WIDTH)
        )
    for hit in matches.skills:
        table.add_row("skills", shown(f"{hit.path}:{hit.line}", WIDTH), shown(hit.text, WIDTH))
    for memory in matches.provider:
        table.add_row("provider", shown(memory.id, WIDTH), shown(memory.text, WIDTH))
    for turn in matches.trace:
        table.add_row(
            "recall trace",
            shown(f"{turn.session_id} #{turn.turn}", WIDTH),
            shown(turn.query, WIDTH),
        )
    return table


def _print_proof(proof: Any) -> None:
    out = console()
    out.print("[bold]Proof[/bold] (every store searched again after deleting):")
    for store, count in proof.searched.counts.items():
        out.print(f"  {mark(count == 0)} {store}: {count} match(es)")
    if proof.searched.provider_note:
        out.print(f"  · provider: {shown(proof.searched.provider_note, WIDTH)}")
    out.print(
        f"  {mark(not proof.raw.found)} raw byte search of {proof.raw.scanned} file(s): "
        f"{len(proof.raw.found)} still contain the phrase"
    )
    for path in proof.raw.found + proof.raw.skipped:
        out.print(f"    {shown(path, WIDTH)}")
    for problem in proof.problems:
        out.print(f"  [red]✗ {shown(problem, WIDTH)}[/red]")
    out.print(f"  compacted: {shown(', '.join(proof.compacted) or 'no SQLite file', WIDTH)}")


def forget_cmd(
    phrase: str | None, user_id: str | None, everything: bool, yes: bool, as_json: bool
) -> None:
    from hermes_core.host import MemoryHost
    from hermes_core.inspector import forget

    if everything == bool(phrase):
        raise click.UsageError("give a PHRASE to forget, or --everything (with --user) — not both")
    try:
        host = MemoryHost.open()
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    with host:
        try:
            if everything:
                if not user_id:
                    raise click.UsageError("--everything needs --user ID (whose data to delete)")
                _confirm(yes, f"Delete everything hermes keeps about user {user_id!r}?")
                user_report = forget.forget_user(host, user_id)
                if as_json:
                    print_json(user_report.to_dict())
                else:
                    for store, count in user_report.removed.items():
                        console().print(f"{mark(True)} {store}: {count} removed")
                if user_report.problems:
                    raise click.ClickException("; ".join(user_report.problems))
                return
            assert phrase is not None
            matches = forget.find_subject(host, user_id, phrase)
            if not yes:
                if as_json:
                    print_json({"preview": matches.to_dict()})
                    return
                console().print(_preview_table(matches))
                if matches.provider_note:
                    console().print(f"provider: {shown(matches.provider_note, WIDTH)}")
                if not matches.total:
                    console().print("Nothing matches; nothing to forget.")
                    return
                _confirm(False, f"Delete these {matches.total} match(es)?")
            report = forget.forget_subject(host, user_id, phrase)
        except HermesError as exc:
            raise click.ClickException(str(exc)) from exc
    if as_json:
        print_json(report.to_dict())
    else:
        console().print(f"{mark(True)} removed {report.removed.total} match(es)")
        _print_proof(report.proof)
    if not report.proof.clean:
        sys.exit(1)


def _confirm(yes: bool, question: str) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        raise click.ClickException("not a terminal: add --yes to delete without a question")
    click.confirm(question, abort=True)


def register_forget_command(group: click.Group) -> None:
    """Add ``forget`` to the ``hermes-memory memory`` group."""

    @group.command("forget")
    @click.argument("phrase", required=False)
    @click.option(
        "--user",
        "user_id",
        default=None,
        metavar="ID",
        help="Whose data (default: the no-user scope).",
    )
    @click.option("--everything", is_flag=True, help="Forget the user entirely (needs --user).")
    @click.option("--yes", is_flag=True, help="Delete without asking (scripts).")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable preview or report.")
    def forget_command(
        phrase: str | None, user_id: str | None, everything: bool, yes: bool, as_json: bool
    ) -> None:
        """Forget a subject everywhere (memory, archive, skills' notes, provider, recall
        trace) and prove it; or a user entirely with --everything."""
        forget_cmd(phrase, user_id, everything, yes, as_json)


__all__ = ["register_forget_command", "shown"]
