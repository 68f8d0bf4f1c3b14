"""``hookspecs.LIFECYCLE`` is the order a real session calls the hooks in, and the specs are
defined in that order (so hookspecs.py and docs/hooks.md read as the lifecycle)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_core import MemoryHost, hookimpl
from hermes_core.docgen import hook_names
from hermes_core.hookspecs import LIFECYCLE
from hermes_core.plugins import create_plugin_manager
from hermes_core.types import CompressionResult


class OrderRecorder:
    """Implements every session hook and records the order of the calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def configure(self) -> None:
        self.calls.append("configure")

    @hookimpl
    def on_session_start(self) -> None:
        self.calls.append("on_session_start")

    @hookimpl
    def register_tools(self) -> None:
        self.calls.append("register_tools")

    @hookimpl
    def system_prompt_block(self) -> None:
        self.calls.append("system_prompt_block")

    @hookimpl
    def on_prompt_frozen(self) -> None:
        self.calls.append("on_prompt_frozen")

    @hookimpl
    def on_turn_start(self) -> None:
        self.calls.append("on_turn_start")

    @hookimpl
    def prefetch(self) -> None:
        self.calls.append("prefetch")

    @hookimpl
    def on_memory_write(self) -> None:
        self.calls.append("on_memory_write")

    @hookimpl
    def sync(self) -> None:
        self.calls.append("sync")

    @hookimpl
    def on_turn_end(self) -> None:
        self.calls.append("on_turn_end")

    @hookimpl
    def on_context_loss(self) -> None:
        self.calls.append("on_context_loss")

    @hookimpl
    def on_pre_compress(self) -> None:
        self.calls.append("on_pre_compress")

    @hookimpl
    def compress(self, messages: list[Any]) -> CompressionResult:
        self.calls.append("compress")
        return CompressionResult(tuple(messages[-1:]), summary="摘要 summary", tokens_before=9)

    @hookimpl
    def on_compressed(self) -> None:
        self.calls.append("on_compressed")

    @hookimpl
    def on_session_end(self) -> None:
        self.calls.append("on_session_end")


def test_lifecycle_is_the_order_a_real_session_records(hermes_home: Path) -> None:
    recorder = OrderRecorder()
    pm = create_plugin_manager(load_entrypoints=False)
    pm.register(recorder, name="order-recorder")
    with MemoryHost.open(hermes_home, pm=pm, activate_provider=False) as host:
        session = host.session(user_id="u1")
        question = "我们上次怎么部署青龙服务的? how did we deploy?"
        session.before_turn(question)
        saved = json.loads(
            session.call_tool("memory", {"action": "add", "content": "User deploys with helm."})
        )
        assert saved["success"] is True
        session.after_turn(question, "With helm.")
        messages = [{"role": "user", "content": question}, {"role": "assistant", "content": "ok"}]
        session.maybe_compress(messages, force=True)
        session.close()
    first_seen = list(dict.fromkeys(recorder.calls))
    assert tuple(first_seen) == LIFECYCLE
    assert recorder.calls.count("configure") == 1


def test_specs_are_defined_in_lifecycle_order() -> None:
    names = hook_names()
    assert tuple(n for n in names if n in LIFECYCLE) == LIFECYCLE
    assert set(names) - set(LIFECYCLE) == {"register_commands", "health_check"}
    assert names[-2:] == ["register_commands", "health_check"]
