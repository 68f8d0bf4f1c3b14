"""The interactive UI through prompt_toolkit pipe input: type a message, see the streamed
reply and tool lines, run /memory and /help, leave with /exit."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from scripted import ScriptedModel, call

from hermes_core.agent.loop import Agent, AgentEvent
from hermes_core.cli.chat import ChatUI, EventPrinter


def test_type_a_message_see_the_stream_run_memory_and_exit(
    make_agent: Any, model: ScriptedModel, hermes_home: Path
) -> None:
    model.when(
        "remember",
        call("memory", action="add", target="user", content="User's cat is called 小白."),
    )
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system=None, highlight=False)
    printer = EventPrinter(console)
    seen: list[AgentEvent] = []

    def on_event(event: AgentEvent) -> None:
        seen.append(event)
        printer(event)

    agent: Agent = make_agent()
    agent.on_event = on_event
    with create_pipe_input() as pipe:
        pipe.send_text("please remember my cat is called 小白\r/memory\r/help\r/exit\r")
        ChatUI(agent, console, printer, input=pipe, output=DummyOutput(), banner="hi").run()
    out = buffer.getvalue()
    assert len([e for e in seen if e.kind == "text"]) > 1  # streamed in pieces
    reply = "Done (memory: success=True)."
    assert out.index("⚙ memory(") < out.index("✓") < out.index(reply)
    assert "prompt +" in out  # token usage line
    memory_listing = out.index("USER.md — ")
    assert out.index(reply) < memory_listing < out.index("1. User's cat is called 小白.")
    assert "/compress [focus]" in out and out.rstrip().endswith("Bye.")
    assert agent.session._closed  # /exit closed the session


def test_eof_leaves_cleanly_and_model_errors_are_shown(
    make_agent: Any, model: ScriptedModel, fake_llm: Any
) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system=None)
    printer = EventPrinter(console)
    agent: Agent = make_agent()
    agent.on_event = printer
    fake_llm.script_error(404, "model not found")
    with create_pipe_input() as pipe:
        pipe.send_text("hello?\r/bogus\r")
        pipe.close()
        ChatUI(agent, console, printer, input=pipe, output=DummyOutput()).run()
    out = buffer.getvalue()
    assert "✗" in out and "llm.model" in out
    assert "Unknown command /bogus" in out


def test_a_failing_slash_command_is_reported_and_the_chat_goes_on(
    make_agent: Any, model: ScriptedModel, monkeypatch: Any
) -> None:
    from hermes_core.agent import commands

    def boom(agent: Agent, args: list[str]) -> commands.CommandResult:
        raise OSError("disk full")

    monkeypatch.setitem(commands.COMMANDS, "memory", boom)
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system=None, highlight=False)
    printer = EventPrinter(console)
    agent: Agent = make_agent()
    agent.on_event = printer
    with create_pipe_input() as pipe:
        pipe.send_text("/memory approve all\r你好\r/exit\r")
        ChatUI(agent, console, printer, input=pipe, output=DummyOutput()).run()
    out = buffer.getvalue()
    assert "✗ /memory failed: OSError: disk full" in out
    assert out.index("disk full") < out.index("OK.") and out.rstrip().endswith("Bye.")
