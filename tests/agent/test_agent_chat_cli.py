"""``hermes-memory chat`` as a command: one-shot use, endpoint options, first-run help."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from scripted import ScriptedModel

from hermes_core.cli.main import cli
from hermes_core.testing.fake_llm import FakeLLMServer


def test_one_shot_prints_the_reply_and_exits_zero(
    hermes_home: Path, fake_llm: FakeLLMServer, model: ScriptedModel
) -> None:
    model.when("capital", "北京 is the capital.")
    result = CliRunner().invoke(
        cli,
        [
            "chat",
            "-q",
            "What is the capital of China?",
            "--base-url",
            fake_llm.base_url,
            "--model",
            fake_llm.model,
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "北京 is the capital."
    assert (hermes_home / "state.db").exists()


def test_settings_from_env_and_model_picked_from_the_server(
    hermes_home: Path,
    fake_llm: FakeLLMServer,
    model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HERMES_LLM__BASE_URL", fake_llm.base_url)
    result = CliRunner().invoke(cli, ["chat", "-q", "hello there"])
    assert result.exit_code == 0, result.output
    assert "using model fake-model" in result.stderr
    assert fake_llm.chat_requests[-1]["model"] == "fake-model"


def test_first_run_without_an_endpoint_says_how_to_configure(hermes_home: Path) -> None:
    result = CliRunner().invoke(cli, ["chat", "-q", "hi"])
    assert result.exit_code == 1
    for hint in (
        "no model endpoint is configured",
        "http://127.0.0.1:11434/v1",
        "http://127.0.0.1:8000/v1",
        "http://127.0.0.1:1234/v1",
        "HERMES_LLM__BASE_URL",
        "--base-url",
        "llm:",
    ):
        assert hint in result.output


def test_unreachable_endpoint_names_the_url_and_the_fix(hermes_home: Path) -> None:
    with FakeLLMServer() as server:
        dead = server.base_url  # the port is free again once the server stops
    result = CliRunner().invoke(cli, ["chat", "-q", "hi", "--base-url", dead, "--model", "m"])
    assert result.exit_code == 1
    assert f"{dead} is not reachable" in result.output and "Ollama" in result.output


def test_wrong_api_key_is_reported(hermes_home: Path) -> None:
    with FakeLLMServer(api_key="right") as server:
        result = CliRunner().invoke(
            cli,
            ["chat", "-q", "hi", "--base-url", server.base_url, "--model", "m", "--api-key", "x"],
        )
    assert result.exit_code == 1 and "--api-key" in result.output


def test_one_shot_reports_retries_on_stderr_and_5xx_in_its_own_words(
    hermes_home: Path, fake_llm: FakeLLMServer, model: ScriptedModel
) -> None:
    model.when("hello", "hi!")
    fake_llm.script_error(502)
    args = ["chat", "-q", "hello", "--base-url", fake_llm.base_url, "--model", fake_llm.model]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "hi!"
    assert "retry 1/" in result.stderr and "502" in result.stderr
    for _ in range(8):
        fake_llm.script_error(500)
    failed = CliRunner().invoke(cli, [*args, "--no-usage"], env={"HERMES_LLM__MAX_RETRIES": "1"})
    assert failed.exit_code == 1
    assert "answered but is failing: 500" in failed.output
    assert "could not connect" not in failed.output


def test_one_shot_sends_library_warnings_to_the_log_file(
    hermes_home: Path, fake_llm: FakeLLMServer, model: ScriptedModel
) -> None:
    """A library warning (here: the configured provider is not installed) goes to
    $HERMES_HOME/logs/chat.log in -q mode too, never between the reply's lines."""
    model.when("hello", "你好!")
    result = CliRunner().invoke(
        cli,
        ["chat", "-q", "hello", "--base-url", fake_llm.base_url, "--model", fake_llm.model],
        env={"HERMES_MEMORY__PROVIDER": "nosuchprovider"},
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "你好!"
    log = (hermes_home / "logs" / "chat.log").read_text(encoding="utf-8")
    assert "nosuchprovider" in log and "WARNING" in log


def test_one_shot_says_why_a_turn_was_not_stored(
    hermes_home: Path, fake_llm: FakeLLMServer, model: ScriptedModel
) -> None:
    """Another program's state.db: the reply is not lost silently, the user is told why."""
    import sqlite3

    with sqlite3.connect(hermes_home / "state.db") as conn:
        conn.execute("CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)")
    model.when("capital", "北京 is the capital.")
    result = CliRunner().invoke(
        cli,
        ["chat", "-q", "capital of China?", "--base-url", fake_llm.base_url],
    )
    assert result.exit_code == 1
    assert "another program" in result.output and "HERMES_HOME" in result.output
    assert "Traceback" not in result.output


def test_one_shot_with_a_provider_that_cannot_finish_says_so_on_screen(
    hermes_home: Path,
    fake_llm: FakeLLMServer,
    model: ScriptedModel,
    fake_distribution: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 27: a slow provider's unfinished save at exit was only a log line; now stderr
    has one plain line naming it, what it was doing and the setting (no ERROR, no trace)."""
    from providers_for_tests import SlowSavingProvider

    monkeypatch.setattr(SlowSavingProvider, "delay", 3.0)
    fake_distribution(
        "hermes-memory-slowsave", providers={"slowsave": "providers_for_tests:SlowSavingProvider"}
    )
    model.when("hello", "Hi!")
    result = CliRunner().invoke(
        cli,
        ["chat", "-q", "hello", "--base-url", fake_llm.base_url, "--model", fake_llm.model],
        env={
            "HERMES_MEMORY__PROVIDER": "slowsave",
            "HERMES_MEMORY__SHUTDOWN_TIMEOUT": "0.3",
            "HERMES_MEMORY__PROVIDER_TIMEOUT": "0.3",
        },
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "Hi!"
    assert "⚠ slowsave: stopped waiting after 0.3 s while it was saving the last turn" in (
        result.stderr
    )
    assert "memory.shutdown_timeout" in result.stderr
    assert "ERROR" not in result.stderr and "Traceback" not in result.stderr
