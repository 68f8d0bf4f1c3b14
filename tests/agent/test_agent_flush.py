"""`hermes-memory chat` shows what the memory flush saved before /new, /reset and exit."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from scripted import ScriptedModel, call

from hermes_core.agent.loop import Agent
from hermes_core.cli.chat import ChatUI, EventPrinter


def chat(agent: Agent, keys: str) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=160, color_system=None, highlight=False)
    printer = EventPrinter(console, spinner=True)  # the spinner runs around /new and exit
    agent.on_event = printer
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        ChatUI(agent, console, printer, input=pipe, output=DummyOutput()).run()
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("command", "label"), [("/new", "/new"), ("/reset", "/reset"), ("/exit", "exit")]
)
def test_chat_shows_what_the_flush_saved(
    make_agent: Any, model: ScriptedModel, hermes_home: Path, command: str, label: str
) -> None:
    model.when(
        "[Memory flush",
        call(
            "memory", action="add", target="user", content="User 的项目叫青龙, deploys on Fridays."
        ),
    )
    agent: Agent = make_agent(memory={"nudge_interval": 0})
    for i in range(6):
        agent.run_turn(f"turn {i}: 青龙 deploys on Fridays")
    out = chat(agent, f"{command}\r/exit\r")
    line = f"💾 Memory ➕ User 的项目叫青龙, deploys on Fridays. (saved before {label})"
    assert line in out
    assert out.count("saved before") == 1  # the new session had no turns: no second flush
    text = (hermes_home / "memories" / "USER.md").read_text(encoding="utf-8")
    assert "User 的项目叫青龙, deploys on Fridays." in text


def test_agent_compress_flushes_first_and_reports_it(
    make_agent: Any, model: ScriptedModel, fake_llm: Any
) -> None:
    model.when("[Memory flush", "Nothing to save.")
    agent: Agent = make_agent(
        memory={"nudge_interval": 0},
        compression={"protect_last_n": 2},
        llm={"context_length": 1024},
    )
    for i in range(6):
        agent.run_turn(f"step {i}: 记住 staging uses port 5433. " * 8)
    assert agent.compress(force=True)
    flushes = [
        b for b in fake_llm.chat_requests if "[Memory flush" in str(b["messages"][-1]["content"])
    ]
    assert len(flushes) == 1
    assert agent.drain_notifications() == []  # nothing saved, nothing shown
