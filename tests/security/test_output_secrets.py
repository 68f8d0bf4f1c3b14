"""One redaction on every output path: each CLI command (the whole click tree) is run with
secret-bearing settings set; no secret appears in its text, ``--json``, errors or logs."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from hermes_core.cli.main import cli
from hermes_core.security.redaction import (
    is_secret_key,
    redact_data,
    redact_text,
    remember_secrets,
    secret_values,
)

LLM_PASSWORD = "Pw0rdInUrl4711"
API_KEY = "plainKeyNoShape0815"
SESSIONS_PASSWORD = "pgSecretZ9y8"
PROVIDER_KEY = "honchoKeyQ1w2e3r4"
MEMORY_PASSWORD = "memPgPassK7"
SECRETS = [LLM_PASSWORD, API_KEY, SESSIONS_PASSWORD, PROVIDER_KEY, MEMORY_PASSWORD]

SKIPPED = {
    ("bench",): "benchmarks run for minutes; they print figures, not settings",
    ("chat",): "interactive; its banner goes through the same console (checked below)",
    ("install",): "runs pip",
    ("uninstall",): "runs pip",
    ("mcp", "serve"): "serves until stopped; tested with a real server in tests/mcp_server",
    ("ui",): "serves until stopped; tested over HTTP and in a browser in tests/ui",
}


def _commands(
    group: click.Group, ctx: click.Context, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        path = (*prefix, name)
        if command is None or any(path[: len(skip)] == skip for skip in SKIPPED):
            continue
        if isinstance(command, click.Group):
            yield from _commands(command, click.Context(command, parent=ctx), path)
        else:
            yield path, command


def _argv(path: tuple[str, ...], command: click.Command) -> list[str]:
    argv = list(path)
    for param in command.params:
        if param.required and isinstance(param, click.Argument):
            argv.append("x")
        elif param.required and isinstance(param, click.Option):
            argv += [param.opts[0], "1"]
    return argv


ALL_COMMANDS = sorted(_commands(cli, click.Context(cli)))


def _secret_home(home: Path) -> None:
    (home / "config.yaml").write_text(
        "llm:\n"
        f"  base_url: http://alice:{LLM_PASSWORD}@127.0.0.1:9/v1\n"
        f"  api_key: {API_KEY}\n"
        "  model: gpt-test\n"
        "sessions:\n"
        f"  url: postgresql://bob:{SESSIONS_PASSWORD}@127.0.0.1:1/hermes\n",
        encoding="utf-8",
    )
    (home / ".env").write_text(
        f"HONCHO_API_KEY={PROVIDER_KEY}\n"
        f"HERMES_MEMORY__URL=postgresql://carol:{MEMORY_PASSWORD}@127.0.0.1:1/m\n",
        encoding="utf-8",
    )


def test_the_walk_covers_every_command() -> None:
    names = {" ".join(path) for path, _ in ALL_COMMANDS}
    assert {"doctor", "memory list", "memory status", "sessions list", "mcp token list"} <= names
    assert len(names) >= 40


@pytest.mark.parametrize(
    ("path", "command"), ALL_COMMANDS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else ""
)
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_no_command_prints_a_secret(
    hermes_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    path: tuple[str, ...],
    command: click.Command,
    as_json: bool,
) -> None:
    has_json = any("--json" in getattr(p, "opts", []) for p in command.params)
    if as_json and not has_json:
        pytest.skip("no --json")
    _secret_home(hermes_home)
    monkeypatch.setenv("EDITOR", "true")
    monkeypatch.setenv("VISUAL", "true")
    argv = ["-vv", *_argv(path, command), *(["--json"] if as_json else [])]
    caplog.set_level(logging.DEBUG)
    result = CliRunner().invoke(cli, argv, input="")
    shown = result.output + (str(result.exception) if result.exception else "") + caplog.text
    leaked = [secret for secret in SECRETS if secret in shown]
    assert leaked == [], f"{' '.join(argv)} printed {leaked}:\n{shown[-2000:]}"


def test_doctor_shows_the_endpoint_without_its_password(hermes_home: Path) -> None:
    _secret_home(hermes_home)
    for argv in (["doctor"], ["doctor", "--json"]):
        out = CliRunner().invoke(cli, argv).output
        assert "http://alice:***@127.0.0.1:9/v1" in out
        assert LLM_PASSWORD not in out


def test_error_messages_and_logs_are_redacted(
    hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    @click.command("leaky")
    def leaky() -> None:
        logging.getLogger("hermes_core.test").warning(
            "connecting to %s", f"https://u:{LLM_PASSWORD}@h/"
        )
        raise click.ClickException(f"cannot reach postgresql://u:{SESSIONS_PASSWORD}@h/db")

    cli.add_command(leaky)
    try:
        caplog.set_level(logging.WARNING)
        result = CliRunner().invoke(cli, ["leaky"])
    finally:
        cli.commands.pop("leaky")
    assert result.exit_code == 1
    assert "postgresql://u:***@h/db" in result.output
    assert SESSIONS_PASSWORD not in result.output
    assert LLM_PASSWORD not in caplog.text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("http://user:hunter22@host/v1", "hunter22"),
        ("redis://:onlyPassw0rd@10.0.0.1:6379/0", "onlyPassw0rd"),
        ("host=h password=s3cr3tpw dbname=x", "s3cr3tpw"),
        ("key sk-proj-abcdefghijklmnop1234", "sk-proj-abcdefghijklmnop1234"),
        ("密码：Zx9kQ2mN7p", "Zx9kQ2mN7p"),
        ("postgresql://u:p%40ssw0rd@h/db", "p%40ssw0rd"),
    ],
)
def test_redact_text_masks_every_shape(text: str, secret: str) -> None:
    assert secret not in redact_text(text)


def test_registered_setting_values_are_masked_even_without_shape() -> None:
    remember_secrets(["shapelessvalue42"])
    assert redact_text("key is shapelessvalue42.") == "key is ***."
    assert redact_data({"a": ["shapelessvalue42"]}) == {"a": ["***"]}


def test_secret_values_reads_names_and_urls_but_not_look_alikes() -> None:
    found = secret_values(
        {
            "llm": {"api_key": "k-123456", "base_url": "http://u:pw12@h"},
            "PWD": "/home/me",
            "SSH_AUTH_SOCK": "/tmp/agent",
            "compression": {"token_budget": "tiktoken"},
            "GITHUB_TOKEN": "${GITHUB_TOKEN}",
        }
    )
    assert sorted(found) == ["k-123456", "pw12"]
    assert is_secret_key("HONCHO_API_KEY") and not is_secret_key("max_tokens")


def test_ordinary_text_is_left_alone() -> None:
    for text in ("see https://example.com/docs?q=1", "user@example.com wrote 中文", "a: b"):
        assert redact_text(text) == text
