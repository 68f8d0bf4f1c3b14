"""What the CLI prints, checked on the rendered text (issue 27): every command it prints can be
copied and pasted as shown (rich markup would eat ``[postgresql]``), piped output has a sane
width without cutting a command or a figure, and doctor's lines name what they checked."""

from __future__ import annotations

import io
import json
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from hermes_core.cli import output
from hermes_core.cli.main import cli
from hermes_core.cli.output import Table, shown
from hermes_core.embedding import DISABLE_ENV

ROOT = Path(__file__).resolve().parents[1]
PG_COMMAND = "pip install 'hermes-memory-core[postgresql]'"


def test_shown_keeps_brackets_and_makes_control_characters_visible() -> None:
    buffer = io.StringIO()
    Console(file=buffer, width=200, color_system=None).print(
        f"run {shown(PG_COMMAND)} or {shown('[/INST] x[bold]y')} {shown('a' + chr(27) + '[2J')}"
    )
    text = buffer.getvalue()
    assert PG_COMMAND in text and "[/INST] x[bold]y" in text
    assert "a␛[2J" in text and "\x1b" not in text


def test_the_postgresql_hint_is_the_command_that_installs_the_driver() -> None:
    """The distribution and the extra the hint names exist, and the extra brings psycopg."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "hermes-memory-core"
    extra = project["optional-dependencies"]["postgresql"]
    assert any(dep.startswith("psycopg[") or dep.startswith("psycopg>") for dep in extra)
    assert any(dep.startswith("psycopg-pool") for dep in extra)


def test_doctor_prints_the_postgresql_driver_fix_runnable(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (hermes_home / "config.yaml").write_text(
        "memory:\n  store: postgresql\n  url: postgresql://hermes@127.0.0.1:9/hermes\n",
        encoding="utf-8",
    )
    monkeypatch.setitem(sys.modules, "psycopg", None)  # the driver is not installed
    result = CliRunner().invoke(cli, ["doctor"])
    assert result.exit_code == 1, result.output
    assert PG_COMMAND in result.output
    assert "pip install 'hermes-memory-core'" not in result.output


def test_doctor_prints_the_embed_extra(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DISABLE_ENV, "off")
    result = CliRunner().invoke(cli, ["doctor"])
    assert "pip install 'hermes-memory-core[embed]'" in result.output


def test_piped_doctor_is_about_100_columns_and_keeps_every_fix_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setenv(DISABLE_ENV, "off")
    home = Path(tempfile.mkdtemp(prefix="h"))  # a home path as short as ~/.hermes
    monkeypatch.setenv("HERMES_HOME", str(home))
    home.chmod(0o755)  # a failing check with a fix
    try:
        result = CliRunner().invoke(cli, ["doctor"])
    finally:
        shutil.rmtree(home)
    lines = result.output.splitlines()
    table = [line for line in lines if line[:1] in "┏┃┡│└"]
    assert table and max(len(line) for line in table) <= output.PIPED_WIDTH
    assert f"chmod 700 {home}" in result.output  # whole, on its own line
    assert "pip install 'hermes-memory-core[embed]'" in result.output


def test_a_piped_table_whose_words_need_more_width_gets_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    buffer = io.StringIO()
    monkeypatch.setattr(sys, "stdout", buffer)
    table = Table()
    figures = [f"0.{n:09d}" for n in range(12)]
    for n in range(12):
        table.add_column(f"recall_all@{n}")
    table.add_row(*figures)
    output.console().print(table)
    text = buffer.getvalue()
    assert max(len(line) for line in text.splitlines()) > output.PIPED_WIDTH
    assert all(figure in text for figure in figures) and "…" not in text


@pytest.mark.parametrize(
    ("count", "word", "expected"),
    [
        (1, "entry", "1 entry"),
        (2, "entry", "2 entries"),
        (0, "message", "0 messages"),
        (1_200, "session", "1,200 sessions"),
        (1, "match", "1 match"),
        (3, "match", "3 matches"),
        (2, "day", "2 days"),
        (2, "person", "2 people"),
    ],
)
def test_plural_agrees_with_the_count(count: int, word: str, expected: str) -> None:
    from hermes_core.text import plural

    assert plural(count, word, "people" if word == "person" else None) == expected


def test_doctor_says_1_entry_not_1_entries(hermes_home: Path) -> None:
    memories = hermes_home / "memories"
    memories.mkdir(exist_ok=True)
    (memories / "MEMORY.md").write_text("The user deploys on Fridays.", encoding="utf-8")
    (memories / "USER.md").write_text("喜欢乌龙茶\n§\nPrefers short answers.", encoding="utf-8")
    checks = {
        c["name"]: c for c in json.loads(CliRunner().invoke(cli, ["doctor", "--json"]).output)
    }
    assert checks["memory: MEMORY.md"]["detail"].startswith("1 entry,")
    assert checks["memory: USER.md"]["detail"].startswith("2 entries,")


def test_doctor_says_config_yaml_is_absent_rather_than_valid(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").unlink(missing_ok=True)
    checks = {
        c["name"]: c for c in json.loads(CliRunner().invoke(cli, ["doctor", "--json"]).output)
    }
    assert checks["config"]["ok"] and "is valid" not in checks["config"]["detail"]
    assert "defaults are used" in checks["config"]["detail"]
    (hermes_home / "config.yaml").write_text("memory:\n  memory_char_limit: 3000\n")
    checks = {
        c["name"]: c for c in json.loads(CliRunner().invoke(cli, ["doctor", "--json"]).output)
    }
    assert checks["config"]["detail"] == f"{hermes_home / 'config.yaml'} is valid"


def test_doctor_in_a_hermes_agent_home_names_the_file_it_checks(hermes_home: Path) -> None:
    """Beside Hermes Agent's state.db our tables live in hermes_core.db: the permission line
    names that file, not state.db."""
    from test_homefiles import _agent_like  # a state.db shaped like Hermes Agent's

    _agent_like(hermes_home)
    checks = {
        c["name"]: c for c in json.loads(CliRunner().invoke(cli, ["doctor", "--json"]).output)
    }
    assert checks["sessions: Hermes Agent home"]["ok"]
    assert "sessions: hermes_core.db permissions" in checks
    assert "sessions: state.db permissions" not in checks
