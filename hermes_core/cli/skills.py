"""``hermes-memory skills``: list, browse, show, search, install, remove, validate, env, history,
revert, pending, approve, reject.

Thin wrappers over :mod:`hermes_core.layers.skills`; every listing takes ``--json``.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from hermes_core.cli.output import Table, console, mark, print_json
from hermes_core.errors import HermesError
from hermes_core.fsutil import read_regular_text
from hermes_core.layers.skills import (
    HistoryError,
    InstallError,
    ManageError,
    SkillsService,
    approve_pending,
    describe,
    find_rows,
    history_rows,
    install_skill,
    invalidate_index_cache,
    linked_files,
    list_pending,
    list_skills,
    local_root,
    pending_detail,
    pending_ids,
    present_env_names,
    reject_pending,
    revert,
    skill_status,
    store_env_values,
    validate_skills,
)
from hermes_core.layers.skills import browse_skills as browse
from hermes_core.settings.base import load_settings, resolve_home
from hermes_core.text import plural


def _service() -> SkillsService:
    home = resolve_home()
    try:
        settings = load_settings(home)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    return SkillsService.from_settings(home, settings.skills)


@click.group()
def skills() -> None:
    """Skills (SKILL.md procedural memory) in $HERMES_HOME/skills and skills.external_dirs."""


@skills.command("list")
@click.option("--category", default=None, help="Only this category (and its subcategories).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_cmd(category: str | None, as_json: bool) -> None:
    """Every skill with its category, source, index status and usage counts."""
    service = _service()
    listing = list_skills(service, category)
    rows = listing.rows
    if as_json:
        print_json(
            {
                "skills": rows,
                "problems": listing.problems,
            }
        )
        return
    out = console()
    if not rows:
        out.print(
            f"No skills in {service.roots[0].path}. Add one with `hermes-memory skills install "
            f"PATH`.",
            markup=False,
        )
    else:
        table = Table(title=f"Skills ({len(rows)})")
        for column in ("name", "category", "description", "source", "status", "views", "✓/✗"):
            table.add_column(column, overflow="fold")
        for row in rows:
            description = row["description"]
            table.add_row(
                escape(row["name"]),
                escape(row["category"]),
                escape(description if len(description) <= 60 else description[:57] + "..."),
                escape(row["source"]),
                escape(row["status"]),
                str(row["views"]),
                f"{row['successes']}/{row['failures']}",
            )
        out.print(table)
    for problem in listing.problems:
        out.print(f"{mark(False)} {escape(problem['path'] + ': ' + problem['error'])}")


@skills.command("show")
@click.argument("name")
def show_cmd(name: str) -> None:
    """Print a skill's SKILL.md and its support files."""
    service = _service()
    skill = service.library().get(name)
    if skill is None:
        raise click.ClickException(f"no skill named '{name}' — see `hermes-memory skills list`.")
    out = console()
    out.print(
        f"[bold]{escape(skill.name)}[/bold] "
        + escape(f"({skill.category}, {skill.root.label}) — {skill.directory}")
    )
    out.print(f"status: {skill_status(service, skill)}", markup=False)
    out.print(
        read_regular_text(skill.skill_md, max_bytes=4 << 20, what="SKILL.md"),
        markup=False,
    )
    for sub, files in linked_files(skill.directory).items():
        out.print(f"{sub}/: " + ", ".join(files), markup=False)


@skills.command("search")
@click.argument("query")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(1, 20))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def search_cmd(query: str, limit: int, as_json: bool) -> None:
    """Rank visible skills for a task description (what skills_find returns)."""
    service = _service()
    rows, mode = find_rows(service, query, limit)
    if as_json:
        print_json({"query": query, "matching": mode, "results": rows})
        return
    if not rows:
        console().print("No matching skill.")
        return
    table = Table(title=escape(f"Skills for: {query}"), caption=f"matching: {mode}")
    for column in ("#", "name", "category", "score", "success rate", "description"):
        table.add_column(column, overflow="fold")
    for i, row in enumerate(rows, 1):
        table.add_row(
            str(i),
            escape(row["name"]),
            escape(row["category"]),
            f"{row['score']:.3f}",
            f"{row['success_rate']:.2f}",
            escape(row["description"]),
        )
    console().print(table)


@skills.command("install")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--category", default=None, help="Install under this category directory.")
def install_cmd(source: Path, category: str | None) -> None:
    """Install a skill directory or .zip after validating and scanning it."""
    service = _service()
    try:
        installed = install_skill(source, service.home, service.roots, category=category)
    except InstallError as exc:
        raise click.ClickException(f"cannot install {source}: {exc}") from exc
    files = plural(installed.files, "file")
    done = f"installed '{installed.name}' ({files}) at {installed.directory}"
    console().print(f"{mark(True)} " + escape(done))


@skills.command("remove")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def remove_cmd(name: str, yes: bool) -> None:
    """Delete a local skill (kept under skills/.archive for rollback)."""
    service = _service()
    if service.library().get(name) is None:
        raise click.ClickException(f"skill '{name}' not found — see `hermes-memory skills list`.")
    manager = service.manager()
    try:
        plan = manager.plan({"action": "delete", "name": name})
    except ManageError as exc:
        raise click.ClickException(exc.message) from exc
    if not yes:
        click.confirm(f"Remove skill '{name}' ({plan.result['path']})?", abort=True)
    try:
        result = manager.run({"action": "delete", "name": name}, bypass_approval=True)
    except ManageError as exc:
        raise click.ClickException(exc.message) from exc
    console().print(f"{mark(True)} {escape(str(result['message']))}")


@skills.command("validate")
@click.argument("path", required=False, type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def validate_cmd(path: Path | None, as_json: bool) -> None:
    """Validate one skill, a directory of skills, or every root (exit 1 if any is invalid)."""
    service = _service()
    report = validate_skills(service, path)
    if as_json:
        print_json({"valid": report.valid, "invalid": report.problems + report.refused})
    else:
        out = console()
        for skill in report.valid:
            out.print(f"{mark(True)} {escape(skill['name'] + '  ' + skill['path'])}")
        for item in report.problems + report.refused:
            out.print(f"{mark(False)} {escape(item['path'] + ': ' + item['error'])}")
        out.print(
            f"{len(report.valid)} valid, {len(report.problems) + len(report.refused)} invalid"
        )
    if not report.ok:
        raise SystemExit(1)
    if report.empty:
        raise click.ClickException("no SKILL.md found — pass a skill directory or a skills root.")


@skills.command("pending")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def pending_cmd(as_json: bool) -> None:
    """Skill writes staged by skills.write_approval."""
    records = list_pending(_service().home)
    if as_json:
        print_json(records)
        return
    if not records:
        console().print("No pending skill writes.")
        return
    table = Table(title=f"Pending skill writes ({len(records)})")
    for column in ("id", "action", "name", "origin", "detail"):
        table.add_column(column, overflow="fold")
    for record in records:
        args = record["args"]
        detail = pending_detail(record)
        table.add_row(
            escape(str(record["id"])),
            escape(str(args.get("action"))),
            escape(str(args.get("name"))),
            escape(str(record.get("origin", ""))),
            escape(detail[:80]),
        )
    console().print(table)


@skills.command("approve")
@click.argument("target", metavar="ID|all")
def approve_cmd(target: str) -> None:
    """Apply staged writes (re-validated and re-scanned now)."""
    service = _service()
    manager = service.manager()
    failures = 0
    for pending_id in pending_ids(service.home, target):
        try:
            result = approve_pending(manager, pending_id)
        except ManageError as exc:
            failures += 1
            console().print(f"{mark(False)} {escape(f'{pending_id}: {exc.message}')}")
            continue
        message = f"{pending_id}: {result['message']}"
        console().print(f"{mark(True)} {escape(message)}")
    if failures:
        raise click.ClickException(
            f"{failures} pending write(s) could not be applied — "
            "fix them or run `hermes-memory skills reject ID`."
        )


@skills.command("reject")
@click.argument("target", metavar="ID|all")
def reject_cmd(target: str) -> None:
    """Discard staged writes."""
    service = _service()
    for pending_id in pending_ids(service.home, target):
        try:
            reject_pending(service.home, pending_id)
        except ManageError as exc:
            raise click.ClickException(exc.message) from exc
        console().print(f"{mark(True)} {escape(f'rejected {pending_id}')}")


@skills.command("browse")
@click.option("--category", default=None, help="Only this category (and its subcategories).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def browse_cmd(category: str | None, as_json: bool) -> None:
    """Local, installed and external skills: category, source, success rate, required keys."""
    service = _service()
    rows = browse(service, category)
    if as_json:
        print_json({"skills": [row.as_dict() for row in rows]})
        return
    out = console()
    if not rows:
        out.print(
            f"No skills in {service.roots[0].path}. Add one with `hermes-memory skills install "
            f"PATH`.",
            markup=False,
        )
        return
    table = Table(title=f"Skills ({len(rows)})")
    for column in ("name", "category", "source", "success rate", "keys", "shown"):
        table.add_column(column, overflow="fold")
    for row in rows:
        rate = (
            f"{row.success_rate:.0%} ({row.successes}/{row.uses})"
            if row.success_rate is not None
            else "no outcomes"
        )
        keys = row.keys
        table.add_row(
            escape(row.name),
            escape(row.category),
            escape(row.source),
            rate,
            f"[red]{escape(keys)}[/red]" if row.keys_missing else escape(keys),
            "yes" if row.shown else escape(f"no: {row.hidden_reason}"),
        )
    out.print(table)
    missing = [row.name for row in rows if row.keys_missing]
    if missing:
        out.print(
            "Set missing keys with `hermes-memory skills env NAME` (" + ", ".join(missing) + ").",
            markup=False,
        )


@skills.command("env")
@click.argument("name")
@click.option("--all", "ask_all", is_flag=True, help="Also ask for variables already set.")
@click.option("--json", "as_json", is_flag=True, help="Only report which are set (no prompt).")
def env_cmd(name: str, ask_all: bool, as_json: bool) -> None:
    """Ask for a skill's required environment variables (input hidden) and store them in
    $HERMES_HOME/.env (0600). Values are never printed."""
    service = _service()
    skill = service.library().get(name)
    if skill is None:
        raise click.ClickException(f"no skill named '{name}' — see `hermes-memory skills browse`.")
    specs = skill.meta.required_environment_variables
    present = present_env_names(service.home, (s.name for s in specs))
    if as_json:
        print_json(
            {
                "name": name,
                "variables": [{**describe(s), "set": s.name in present} for s in specs],
            }
        )
        return
    out = console()
    if not specs:
        out.print(f"Skill '{name}' needs no environment variables.", markup=False)
        return
    todo = [s for s in specs if ask_all or s.name not in present]
    if not todo:
        out.print(
            f"{mark(True)} "
            + escape(f"every variable of '{name}' is set ({', '.join(s.name for s in specs)}); ")
            + "use --all to change them."
        )
        return
    values: dict[str, str] = {}
    for spec in todo:
        if spec.help:
            out.print(escape(f"{spec.name}: {spec.help}"), style="dim")
        label = spec.prompt or f"{spec.name} for skill '{name}'"
        value = click.prompt(
            f"{label} (input hidden, empty to skip)",
            hide_input=True,
            default="",
            show_default=False,
        )
        if value.strip():
            values[spec.name] = value.strip()
    try:
        written = store_env_values(service.home, values)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    invalidate_index_cache(service.home)
    skipped = [s.name for s in todo if s.name not in written]
    if written:
        out.print(
            f"{mark(True)} " + escape(f"stored {', '.join(written)} in {service.home / '.env'}")
        )
    if skipped:
        out.print(f"{mark(False)} " + escape(f"not set: {', '.join(skipped)}"))


@skills.command("history")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def history_cmd(name: str, as_json: bool) -> None:
    """Kept versions of a skill (taken before each patch, edit and delete)."""
    service = _service()
    try:
        rows = history_rows(service.home, name)
    except HistoryError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        print_json({"name": name, "versions": rows})
        return
    out = console()
    if not rows:
        out.print(
            f"No kept versions of '{name}' (limit: skills.history_versions = "
            f"{service.settings.history_versions}).",
            markup=False,
        )
        return
    table = Table(title=escape(f"History of {name}"))
    for column in ("version", "kept before", "when", "origin", "description"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            str(row["version"]),
            escape(row["action"]),
            row["when"],
            escape(row["origin"]),
            escape(row["description"]),
        )
    out.print(table)
    out.print(f"Restore one with `hermes-memory skills revert {name} VERSION`.", markup=False)


@skills.command("revert")
@click.argument("name")
@click.argument("version", required=False, type=int)
def revert_cmd(name: str, version: int | None) -> None:
    """Restore a kept version (default: the newest); the current state is kept first."""
    service = _service()
    try:
        done = revert(
            service.home,
            local_root(service.home),
            name,
            version,
            keep=service.settings.history_versions,
        )
    except HistoryError as exc:
        raise click.ClickException(str(exc)) from exc
    message = f"restored '{name}' version {done.restored.number} at {done.directory}"
    if done.kept_current is not None:
        message += f"; the state before is kept as version {done.kept_current.number}"
    console().print(f"{mark(True)} {escape(message)}")


def register(cli: click.Group) -> None:
    """Add ``hermes-memory skills`` to the root group."""
    cli.add_command(skills)


__all__ = ["register", "skills"]
