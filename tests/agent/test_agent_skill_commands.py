"""Skills in ``hermes-memory chat`` (issue 19.2 and 19.3): every enabled skill is a ``/name``
command with completion, loading the skill into the turn; names that clash with a built-in
are refused with a notice; a loaded skill with unset required keys gets an offer to set them
(hidden input, stored in .env). Driven through prompt_toolkit pipe input; the tmux test
drives the real terminal."""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from scripted import ScriptedModel, call, last_user

from hermes_core.agent.commands import MAX_STACKED_SKILLS, run_command, skill_commands
from hermes_core.agent.loop import Agent
from hermes_core.cli.chat import ChatUI, EventPrinter, SlashCompleter
from hermes_core.testing.fake_llm import FakeLLMServer


def write_skill(home: Path, name: str, description: str, body: str, **front: Any) -> None:
    directory = home / "skills" / name
    directory.mkdir(parents=True, exist_ok=True)
    meta = yaml.safe_dump({"name": name, "description": description, **front}, allow_unicode=True)
    (directory / "SKILL.md").write_text(f"---\n{meta}---\n{body}", encoding="utf-8")


@pytest.fixture
def skills_home(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NEWS_API_KEY", "")  # restored afterwards even if the chat sets it
    monkeypatch.delenv("NEWS_API_KEY")
    write_skill(
        hermes_home,
        "news-digest",
        "Summarise today's headlines into a short digest.",
        "## Procedure\n1. Fetch headlines with NEWS_API_KEY.\n2. Group by topic (TOPIC-MARK).\n",
        required_environment_variables=[
            {"name": "NEWS_API_KEY", "prompt": "Your newsapi.org key", "help": "newsapi.org"}
        ],
    )
    write_skill(
        hermes_home,
        "zh-weekly",
        "写一份本周工作周报。",
        "## 步骤\n1. 汇总本周完成的事（周报标记）。\n",
    )
    write_skill(hermes_home, "help", "A skill that clashes with /help.", "## Steps\n1. x\n")
    return hermes_home


def ui_run(agent: Agent, keys: str) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=160, color_system=None, highlight=False)
    printer = EventPrinter(console, show_usage=False)
    agent.on_event = printer
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        ChatUI(agent, console, printer, input=pipe, output=DummyOutput()).run()
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("line", "skill_mark", "instruction"),
    [
        ("/news-digest only tech news please", "TOPIC-MARK", "only tech news please"),
        ("/zh-weekly 重点写上线的部分", "周报标记", "重点写上线的部分"),
    ],
)
def test_a_skill_command_loads_the_skill_into_the_turn(
    make_agent: Any,
    model: ScriptedModel,
    fake_llm: FakeLLMServer,
    skills_home: Path,
    line: str,
    skill_mark: str,
    instruction: str,
) -> None:
    model.default = "Following the skill."
    agent: Agent = make_agent()
    name = line.split()[0][1:]
    answer = "n\r" if name == "news-digest" else ""  # news-digest's key is not set: decline
    out = ui_run(agent, f"{line}\r{answer}/exit\r")
    assert f"Loaded skill '{name}'." in out and "Following the skill." in out
    sent = last_user(fake_llm.chat_requests[-1])
    assert skill_mark in sent and sent.rstrip().endswith(instruction)
    assert f'<skill name="{name}">' in sent


def test_stacked_skill_commands_and_the_limit(make_agent: Any, skills_home: Path) -> None:
    agent: Agent = make_agent()
    result = run_command(agent, "/news-digest /zh-weekly do both")
    assert result.skills == ["news-digest", "zh-weekly"]
    assert "TOPIC-MARK" in result.turn and "周报标记" in result.turn
    assert result.turn.endswith("do both")
    many = " ".join(["/news-digest", "/zh-weekly"] * 3)
    assert run_command(agent, many + " x").skills == ["news-digest", "zh-weekly"]
    for i in range(MAX_STACKED_SKILLS + 1):
        write_skill(skills_home, f"s{i}", f"Skill {i}.", "## Steps\n1. x\n")
    too_many = run_command(agent, " ".join(f"/s{i}" for i in range(MAX_STACKED_SKILLS + 1)))
    assert not too_many.turn and f"At most {MAX_STACKED_SKILLS}" in too_many.lines[0]


def test_clashing_names_are_refused_and_help_lists_skills(
    make_agent: Any, skills_home: Path
) -> None:
    agent: Agent = make_agent()
    assert "help" not in skill_commands(agent)
    out = ui_run(agent, "/help\r/exit\r")
    assert "Skill 'help' is not available as /help: that is a built-in command" in out
    assert "/news-digest" in out and "/zh-weekly" in out and "写一份本周工作周报。" in out
    assert "/compress [focus]" in out  # /help is still the built-in


def test_unknown_and_disabled_skill_commands(make_agent: Any, skills_home: Path) -> None:
    agent: Agent = make_agent(skills={"disabled": ["zh-weekly"]})
    assert "Unknown command /zh-weekly" in run_command(agent, "/zh-weekly 写").lines[0]
    assert "Unknown command /nope" in run_command(agent, "/nope").lines[0]


def test_completion_offers_builtins_and_skills(make_agent: Any, skills_home: Path) -> None:
    agent: Agent = make_agent()
    completer = SlashCompleter(lambda: skill_commands(agent))

    def complete(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

    assert complete("/ne") == ["/new", "/news-digest"]
    assert complete("/zh") == ["/zh-weekly"]
    assert "/help" in complete("/he") and complete("/he").count("/help") == 1
    assert complete("hello") == [] and complete("/news-digest x") == []
    meta = {
        c.text: c.display_meta_text
        for c in completer.get_completions(Document("/zh"), CompleteEvent())
    }
    assert meta["/zh-weekly"] == "写一份本周工作周报。"


def test_loading_a_skill_offers_to_set_its_missing_keys(
    make_agent: Any, model: ScriptedModel, skills_home: Path
) -> None:
    agent: Agent = make_agent()
    out = ui_run(agent, "/news-digest go\ry\rkey-abc-123\r/exit\r")
    assert "Skill news-digest needs NEWS_API_KEY, which is not set." in out
    assert "stored NEWS_API_KEY in .env" in out
    assert "key-abc-123" not in out  # hidden input
    assert "NEWS_API_KEY=key-abc-123" in (skills_home / ".env").read_text(encoding="utf-8")
    assert os.environ.get("NEWS_API_KEY") == "key-abc-123"


def test_a_skill_the_model_loads_gets_the_offer_after_the_turn(
    make_agent: Any, model: ScriptedModel, skills_home: Path
) -> None:
    model.when("新闻", call("skill_view", name="news-digest"))
    agent: Agent = make_agent()
    out = ui_run(agent, "给我今天的新闻摘要\rn\r/exit\r")
    assert "⚙ skill_view(" in out
    assert out.index("⚙ skill_view(") < out.index("Skill news-digest needs NEWS_API_KEY")
    assert "Skipped. Set later with `hermes-memory skills env news-digest`." in out
    assert not (skills_home / ".env").exists()


# ---------------------------------------------------------------- the real terminal


class Tmux:
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

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "chat", *keys)

    def type(self, line: str) -> None:
        self.run("send-keys", "-t", "chat", "-l", line)
        self.run("send-keys", "-t", "chat", "Enter")


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    mux = Tmux()
    yield mux
    mux.run("kill-server")


def test_skill_command_with_completion_and_key_offer_in_a_real_terminal(
    tmux: Tmux, skills_home: Path, fake_llm: FakeLLMServer, model: ScriptedModel
) -> None:
    model.default = "摘要如下：一切正常。"
    hermes = Path(sys.executable).parent / "hermes-memory"
    command = (
        f"env HERMES_HOME={shlex.quote(str(skills_home))} "
        f"HERMES_LLM__BASE_URL={fake_llm.base_url} HERMES_LLM__MODEL={fake_llm.model} "
        f"{shlex.quote(str(hermes))} chat; echo CHAT-EXITED-$?; sleep 60"
    )
    tmux.run("new-session", "-d", "-s", "chat", "-x", "160", "-y", "50", command)
    tmux.wait_for("/help for commands")
    tmux.wait_for("Skill 'help' is not available as /help")  # printed just after the banner
    tmux.wait_for("›")
    tmux.run("send-keys", "-t", "chat", "-l", "/news-d")
    tmux.wait_for("Summarise today's headlines")  # the completion menu, with the description
    tmux.keys("Tab")
    tmux.wait_for("› /news-digest")  # completed in the prompt
    tmux.run("send-keys", "-t", "chat", "-l", " 只要科技新闻")
    tmux.keys("Enter")
    tmux.wait_for("Set NEWS_API_KEY now? [y/N]")
    tmux.type("y")
    tmux.wait_for("Your newsapi.org key (hidden, empty to skip):")
    tmux.type("tmux-secret-42")
    screen = tmux.wait_for("摘要如下：一切正常。")
    assert "stored NEWS_API_KEY in .env" in screen and "tmux-secret-42" not in screen
    sent = last_user(fake_llm.chat_requests[-1])
    assert "TOPIC-MARK" in sent and sent.rstrip().endswith("只要科技新闻")
    tmux.type("/exit")
    tmux.wait_for("CHAT-EXITED-0")
    assert "NEWS_API_KEY=tmux-secret-42" in (skills_home / ".env").read_text(encoding="utf-8")
