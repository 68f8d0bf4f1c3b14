"""``hermes-memory chat`` in a real terminal (tmux): prompt, streamed reply, /memory, /exit."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from scripted import ScriptedModel, call

from hermes_core.testing.fake_llm import FakeLLMServer

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    """One private tmux server (its own socket), killed afterwards."""

    def __init__(self) -> None:
        self.socket = f"hermes-test-{uuid.uuid4().hex[:8]}"

    def run(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        )
        return done.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-J", "-S", "-200", "-t", "chat")

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; screen:\n{self.screen()}")

    def type(self, line: str) -> None:
        self.run("send-keys", "-t", "chat", "-l", line)
        self.run("send-keys", "-t", "chat", "Enter")


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    mux = Tmux()
    yield mux
    mux.run("kill-server")


def test_chat_in_a_real_terminal(
    tmux: Tmux, hermes_home: Path, fake_llm: FakeLLMServer, model: ScriptedModel
) -> None:
    model.when(
        "remember",
        call("memory", action="add", target="user", content="User's name is 王芳."),
    )
    hermes = Path(sys.executable).parent / "hermes-memory"
    command = (
        f"env HERMES_HOME={shlex.quote(str(hermes_home))} "
        f"HERMES_LLM__BASE_URL={fake_llm.base_url} HERMES_LLM__MODEL={fake_llm.model} "
        f"{shlex.quote(str(hermes))} chat; echo CHAT-EXITED-$?; sleep 60"
    )
    tmux.run("new-session", "-d", "-s", "chat", "-x", "160", "-y", "50", command)
    tmux.wait_for("/help for commands")
    tmux.wait_for("›")
    tmux.type("please remember my name is 王芳")
    screen = tmux.wait_for("Done (memory: success=True).")
    assert "⚙ memory(" in screen and "prompt +" in tmux.wait_for("prompt +")
    tmux.type("/memory")
    screen = tmux.wait_for("1. User's name is 王芳.")
    assert "USER.md — " in screen
    tmux.type("/exit")
    tmux.wait_for("CHAT-EXITED-0")
    assert "User's name is 王芳." in (hermes_home / "memories" / "USER.md").read_text("utf-8")


def test_chat_shows_a_spinner_with_the_retry_count_and_names_the_memory(
    tmux: Tmux, hermes_home: Path, fake_llm: FakeLLMServer, model: ScriptedModel
) -> None:
    """A failing endpoint is visible while it is retried: the spinner line counts retries
    and says the server answered (5xx), then the reply streams as usual."""
    model.when("部署", "部署在周五。")
    hermes = Path(sys.executable).parent / "hermes-memory"
    command = (
        f"env HERMES_HOME={shlex.quote(str(hermes_home))} "
        f"HERMES_LLM__BASE_URL={fake_llm.base_url} HERMES_LLM__MODEL={fake_llm.model} "
        f"HERMES_LLM__MAX_RETRIES=3 {shlex.quote(str(hermes))} chat; "
        "echo CHAT-EXITED-$?; sleep 60"
    )
    tmux.run("new-session", "-d", "-s", "chat", "-x", "160", "-y", "50", command)
    banner = tmux.wait_for("/help for commands")
    assert "memory: built-in" in banner
    tmux.wait_for("›")
    fake_llm.script_error(503, delay=1.5)  # slow failures keep the spinner on screen
    fake_llm.script_error(503, delay=1.5)
    tmux.type("我们什么时候部署?")
    screen = tmux.wait_for("retry 1/3")
    assert "503" in screen and "is failing" in screen
    tmux.wait_for("retry 2/3")
    screen = tmux.wait_for("部署在周五。")
    assert "retry 1/3" not in screen.split("部署在周五。")[-1]  # the spinner is gone
    tmux.type("/exit")
    tmux.wait_for("CHAT-EXITED-0")
