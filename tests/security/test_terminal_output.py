"""What reaches the terminal: names, titles, user ids and memory text with ANSI/OSC escape
sequences (or rich markup) are shown with every control character made visible, by every
command (text and ``--json``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from hermes_core.cli.main import cli
from hermes_core.cli.output import console, print_json, shown
from hermes_core.security.terminal import has_controls, visible

OSC_TITLE = "\x1b]0;pwned\x07"
CSI_RED = "\x1b[31m"
C1_CSI = "\x9b2J"
HOSTILE = f"evil{OSC_TITLE}{CSI_RED}{C1_CSI}\u202e"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _raw_controls(text: str) -> list[str]:
    return RAW.findall(text)


def _plugin_dir(home: Path, name: str) -> None:
    plugin = home / "plugins" / name
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(
        "from agent.memory_provider import MemoryProvider\n", encoding="utf-8"
    )
    (plugin / "plugin.yaml").write_text(f"name: x\nversion: '{CSI_RED}1'\n", encoding="utf-8")


@pytest.mark.parametrize("argv", [["memory", "list"], ["memory", "list", "--json"]])
def test_memory_list_shows_a_hostile_plugin_dir_name_escaped(
    hermes_home: Path, argv: list[str]
) -> None:
    _plugin_dir(hermes_home, HOSTILE)
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    assert "evil" in result.output
    assert _raw_controls(result.output) == []
    if "--json" in argv:  # the JSON still holds the exact name, escaped
        names = [row["name"] for row in json.loads(result.output)]
        assert HOSTILE in names


def test_memory_status_shows_hostile_names_escaped(hermes_home: Path) -> None:
    _plugin_dir(hermes_home, HOSTILE)
    result = CliRunner().invoke(cli, ["memory", "status"])
    assert "evil" in result.output
    assert _raw_controls(result.output) == []


def test_session_titles_and_user_ids_are_escaped(hermes_home: Path) -> None:
    from hermes_core import MemoryHost

    with MemoryHost.open(hermes_home, load_entrypoints=False) as host:
        session = host.session(user_id=f"u{CSI_RED}1")
        session.before_turn("hello " + OSC_TITLE)
        session.after_turn("hello " + OSC_TITLE, "hi " + C1_CSI)
        sid = session.id
        session.close()
    runner = CliRunner()
    assert runner.invoke(cli, ["sessions", "title", sid, f"t{OSC_TITLE}"]).exit_code in (0, 1)
    for argv in (
        ["sessions", "list", "--all-users"],
        ["sessions", "list", "--all-users", "--json"],
        ["sessions", "show", sid],
        ["sessions", "users"],
        ["sessions", "search", "hello"],
    ):
        out = runner.invoke(cli, argv).output
        assert _raw_controls(out) == [], (argv, out)


def test_mcp_token_users_are_escaped(hermes_home: Path) -> None:
    runner = CliRunner()
    added = runner.invoke(
        cli, ["mcp", "token", "add", "--user", f"b{CSI_RED}ob", "--label", f"l{OSC_TITLE}"]
    )
    assert added.exit_code == 0, added.output
    for argv in (["mcp", "token", "list"], ["mcp", "token", "list", "--json"]):
        out = runner.invoke(cli, argv).output
        assert _raw_controls(out) == [], out


def test_error_messages_are_escaped(hermes_home: Path) -> None:
    result = CliRunner().invoke(cli, ["memory", "use", HOSTILE])
    assert result.exit_code != 0
    assert _raw_controls(result.output) == []


def test_every_console_string_and_json_value_is_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    console().print(f"name {HOSTILE}")
    print_json({"name": HOSTILE, "中文": "值" + "\x7f"})
    out = capsys.readouterr().out
    assert _raw_controls(out) == []
    assert "中文" in out and "值" in out


def test_shown_escapes_markup_and_newlines() -> None:
    assert shown("[bold]x[/bold]") == "\\[bold]x\\[/bold]"
    assert "\n" not in shown("a\nb") and "␊" in shown("a\nb")


def test_visible_keeps_length_and_every_letter() -> None:
    text = f"用户 {HOSTILE} ok\n"
    out = visible(text)
    assert len(out) == len(text)
    assert not _raw_controls(out) and out.endswith("ok\n")
    assert has_controls(text) and not has_controls("plain 中文")
