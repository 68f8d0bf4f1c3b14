"""The facade: isolation per hook, bounded prefetch, ordered provider sync, tool routing.

Each hook has a ``test_hook_<name>`` here (tests/test_hookspecs.py checks that).
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest
from providers_for_tests import OrderedSyncProvider, RecordingProvider, SleepyProvider

from hermes_core import (
    CompressionBudget,
    CompressionResult,
    HealthCheck,
    MemoryContext,
    MemoryHost,
    MemoryWrite,
    PromptBlock,
    ToolSpec,
    hookimpl,
)
from hermes_core.hooks import OrderedWorker, ToolRouter
from hermes_core.settings import load_settings


class Boom:
    """Raises in every hook."""

    @hookimpl
    def configure(self) -> None:
        raise RuntimeError("boom configure")

    @hookimpl
    def system_prompt_block(self) -> PromptBlock:
        raise RuntimeError("boom prompt")

    @hookimpl
    def on_prompt_frozen(self) -> None:
        raise RuntimeError("boom frozen")

    @hookimpl
    def register_tools(self) -> list[ToolSpec]:
        raise RuntimeError("boom tools")

    @hookimpl
    def on_session_start(self) -> None:
        raise RuntimeError("boom start")

    @hookimpl
    def on_turn_start(self) -> None:
        raise RuntimeError("boom turn start")

    @hookimpl
    def prefetch(self) -> MemoryContext:
        raise RuntimeError("boom prefetch")

    @hookimpl
    def sync(self) -> None:
        raise RuntimeError("boom sync")

    @hookimpl
    def on_turn_end(self) -> None:
        raise RuntimeError("boom turn end")

    @hookimpl
    def on_memory_write(self) -> None:
        raise RuntimeError("boom write")

    @hookimpl
    def on_pre_compress(self) -> str:
        raise RuntimeError("boom pre-compress")

    @hookimpl(tryfirst=True)
    def compress(self) -> CompressionResult:
        raise RuntimeError("boom compress")

    @hookimpl
    def on_session_end(self) -> None:
        raise RuntimeError("boom end")

    @hookimpl
    def register_commands(self) -> None:
        raise RuntimeError("boom commands")

    @hookimpl
    def health_check(self) -> list[HealthCheck]:
        raise RuntimeError("boom health")


class Recorder:
    """A well-behaved plugin that records what reached it."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.blocks: list[str] = []

    @hookimpl
    def configure(self, home: Path) -> None:
        self.events.append("configure")

    @hookimpl
    def system_prompt_block(self, tool_names: frozenset[str]) -> PromptBlock:
        self.events.append("system_prompt_block")
        return PromptBlock(f"RECORDER tools={sorted(tool_names)}", order=45, source="recorder")

    @hookimpl
    def on_prompt_frozen(self, system_prompt: str) -> None:
        self.events.append("on_prompt_frozen")
        self.blocks.append(system_prompt)

    @hookimpl
    def register_tools(self) -> list[ToolSpec]:
        def handler(args: Any, ctx: Any) -> str:
            if args.get("fail"):
                raise ValueError("asked to fail")
            return json.dumps({"success": True, "origin": ctx.origin})

        return [ToolSpec("recorder_tool", "Test tool.", {"type": "object"}, handler)]

    @hookimpl
    def on_session_start(self) -> None:
        self.events.append("on_session_start")

    @hookimpl
    def on_turn_start(self, turn_number: int) -> None:
        self.events.append(f"on_turn_start {turn_number}")

    @hookimpl
    def prefetch(self, query: str) -> MemoryContext:
        self.events.append("prefetch")
        return MemoryContext(f"- recorder saw {query}", count=1, label="recorder")

    @hookimpl
    def sync(self, turn: Any) -> None:
        self.events.append(f"sync {turn.number}")

    @hookimpl
    def on_turn_end(self, turn: Any) -> None:
        self.events.append(f"on_turn_end {turn.number}")

    @hookimpl
    def on_memory_write(self, write: MemoryWrite) -> None:
        self.events.append(f"on_memory_write {write.action}")

    @hookimpl
    def on_pre_compress(self, messages: list[Any]) -> str:
        self.events.append("on_pre_compress")
        return f"recorder notes on {len(messages)} messages"

    @hookimpl
    def compress(self, messages: list[Any], budget: CompressionBudget, notes: str) -> Any:
        self.events.append(f"compress notes={notes!r}")
        return CompressionResult(tuple(messages[-2:]), summary="s", tokens_before=10)

    @hookimpl
    def on_session_end(self, reason: str) -> None:
        self.events.append(f"on_session_end {reason}")

    @hookimpl
    def register_commands(self, cli: Any) -> None:
        self.events.append("register_commands")

    @hookimpl
    def health_check(self) -> list[HealthCheck]:
        return [HealthCheck("recorder", True, "fine")]


@pytest.fixture
def host_with(hermes_home: Path) -> Any:
    hosts: list[MemoryHost] = []

    def build(*plugins: object) -> MemoryHost:
        host = MemoryHost.open(hermes_home, load_entrypoints=False, activate_provider=False)
        for index, plugin in enumerate(plugins):
            host.facade.register(plugin, name=f"test-plugin-{index}")
        hosts.append(host)
        return host

    yield build
    for host in hosts:
        host.close()


def run_turn(host: MemoryHost, recorder: Recorder) -> None:
    """One complete turn through every per-turn hook plus compression and end."""
    session = host.session(user_id="u1")
    block = session.before_turn("what did we decide about the deploy?")
    assert "recorder saw" in block
    assert json.loads(session.call_tool("recorder_tool", {}))["success"] is True
    session.notify_memory_write(MemoryWrite("add", "memory", "fact"))
    session.after_turn("what did we decide about the deploy?", "We chose blue-green.")
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert session.maybe_compress(messages, force=True) == messages[-2:]
    session.close(reason="exit")
    host.facade.register_commands(object())
    assert any(c.name == "recorder" for c in host.facade.health_check())


def test_raising_plugin_never_breaks_a_turn(host_with: Any, caplog: Any) -> None:
    recorder = Recorder()
    caplog.set_level(logging.ERROR)
    host = host_with(Boom(), recorder)
    run_turn(host, recorder)
    for hook in (
        "on_session_start",
        "system_prompt_block",
        "on_prompt_frozen",
        "on_turn_start 1",
        "prefetch",
        "sync 1",
        "on_turn_end 1",
        "on_memory_write add",
        "on_pre_compress",
        "on_session_end exit",
        "register_commands",
    ):
        assert hook in recorder.events, hook
    assert any("compress notes='recorder notes on 2 messages'" in e for e in recorder.events)
    failed_hooks = {r.getMessage().split(" in ")[-1].split(";")[0] for r in caplog.records}
    assert {"prefetch", "sync", "on_turn_end", "on_session_end", "compress"} <= failed_hooks
    assert any("test-plugin-0" in r.getMessage() for r in caplog.records)


def test_hook_configure(host_with: Any) -> None:
    recorder = Recorder()
    host_with(Boom(), recorder)
    assert recorder.events[0] == "configure"  # replayed on late registration


def test_hook_system_prompt_block(host_with: Any) -> None:
    recorder = Recorder()
    host = host_with(recorder)
    session = host.session()
    prompt = session.system_prompt()
    assert "RECORDER tools=[" in prompt and "'recorder_tool'" in prompt


def test_hook_on_prompt_frozen(host_with: Any) -> None:
    recorder = Recorder()
    host = host_with(recorder)
    session = host.session()
    assert recorder.blocks == [session.system_prompt()]


def test_prompt_blocks_sorted_by_order(host_with: Any) -> None:
    class Block:
        def __init__(self, text: str, order: int) -> None:
            self.text, self.order = text, order

        @hookimpl
        def system_prompt_block(self) -> PromptBlock:
            return PromptBlock(self.text, order=self.order)

    host = host_with(Block("THIRD", 90), Block("FIRST", 0), Block("SECOND", 30))
    prompt = host.session().system_prompt()
    assert prompt.index("FIRST") < prompt.index("SECOND") < prompt.index("THIRD")


def test_hook_register_tools(host_with: Any) -> None:
    host = host_with(Recorder())
    session = host.session()
    names = [schema["function"]["name"] for schema in session.tool_schemas()]
    assert "recorder_tool" in names


def test_tool_routing_errors_are_json(host_with: Any) -> None:
    host = host_with(Recorder())
    session = host.session()
    unknown = json.loads(session.call_tool("nope", {}))
    assert (
        unknown["success"] is False and "No memory provider handles tool 'nope'" in unknown["error"]
    )
    bad_json = json.loads(session.call_tool("recorder_tool", "{not json"))
    assert "not valid JSON" in bad_json["error"]
    not_object = json.loads(session.call_tool("recorder_tool", "[1, 2]"))
    assert "must be a JSON object" in not_object["error"]
    raised = json.loads(session.call_tool("recorder_tool", {"fail": True}))
    assert "failed: asked to fail" in raised["error"]
    origin = json.loads(session.call_tool("recorder_tool", {}, origin="background_review"))
    assert origin["origin"] == "background_review"


def test_tool_router_first_wins_and_reserved_names_refused() -> None:
    router = ToolRouter()

    def handler(args: Any, ctx: Any) -> str:
        return "{}"

    assert router.add(ToolSpec("memory", "core", {}, handler), "builtin", is_provider=False)
    assert not router.add(ToolSpec("memory", "shadow", {}, handler), "prov", is_provider=True)
    assert router.add(ToolSpec("x", "first", {}, handler), "a", is_provider=False)
    assert not router.add(ToolSpec("x", "second", {}, handler), "b", is_provider=False)
    assert router.get("x") is not None and router.get("x").spec.description == "first"  # type: ignore[union-attr]
    assert not router.add(ToolSpec("", "nameless", {}, handler), "c", is_provider=False)


def test_hook_on_session_start(host_with: Any) -> None:
    recorder = Recorder()
    host_with(recorder).session()
    assert recorder.events.index("on_session_start") < recorder.events.index("system_prompt_block")


def test_hook_on_turn_start(host_with: Any) -> None:
    recorder = Recorder()
    session = host_with(recorder).session()
    session.before_turn("first real question")
    session.before_turn("ok")  # trivial: turn counted, no prefetch
    assert "on_turn_start 2" in recorder.events
    assert recorder.events.count("prefetch") == 1


def test_hook_prefetch(host_with: Any) -> None:
    recorder = Recorder()
    session = host_with(recorder).session()
    block = session.before_turn("where is the staging database?")
    assert block.startswith("<memory-context>") and block.endswith("</memory-context>")
    assert block.count("<memory-context>") == 1
    assert "recorder saw where is the staging database?" in block
    assert session.recall_line() == "🧠 recorder — recalled 1 memory"


def test_hook_sync(host_with: Any) -> None:
    recorder = Recorder()
    session = host_with(recorder).session()
    session.before_turn("hello there friend")
    session.after_turn("hello there friend", "hi")
    assert "sync 1" in recorder.events  # built-ins are inline: done on return


def test_hook_on_turn_end(host_with: Any) -> None:
    recorder = Recorder()
    session = host_with(recorder).session()
    session.after_turn("q", "a")
    assert recorder.events.index("sync 1") < recorder.events.index("on_turn_end 1")


def test_hook_on_memory_write(host_with: Any) -> None:
    recorder = Recorder()
    session = host_with(recorder).session()
    session.notify_memory_write(MemoryWrite("replace", "user", "new", previous_content="old"))
    assert "on_memory_write replace" in recorder.events


def test_hook_on_pre_compress(host_with: Any) -> None:
    recorder = Recorder()
    session = host_with(recorder).session()
    session.maybe_compress([{"role": "user", "content": "x"}], force=True)
    assert "on_pre_compress" in recorder.events


def test_hook_compress(host_with: Any) -> None:
    recorder = Recorder()
    session = host_with(recorder).session()
    messages = [{"role": "user", "content": f"m{i}"} for i in range(5)]
    assert session.maybe_compress(messages) == messages  # under threshold: untouched
    assert session.maybe_compress(messages, force=True) == messages[-2:]
    assert session.compression.count == 1


def test_hook_on_session_end(host_with: Any) -> None:
    recorder = Recorder()
    session = host_with(recorder).session()
    session.close(reason="new_session")
    session.close(reason="again")  # idempotent
    assert recorder.events.count("on_session_end new_session") == 1
    assert not any("again" in e for e in recorder.events)


def test_hook_register_commands(host_with: Any) -> None:
    recorder = Recorder()
    host_with(recorder).facade.register_commands(object())
    assert "register_commands" in recorder.events


def test_hook_health_check(host_with: Any) -> None:
    host = host_with(Boom(), Recorder())
    checks = host.facade.health_check()
    assert any(c.name == "recorder" and c.ok for c in checks)
    broken = [c for c in checks if c.name == "test-plugin-0"]
    assert broken and not broken[0].ok and broken[0].fix


# -- the provider: bounded prefetch, background sync ---------------------------------------


def test_stuck_provider_prefetch_is_bounded_and_skipped_while_stuck(hermes_home: Path) -> None:
    settings = load_settings(hermes_home, memory={"prefetch_timeout": 0.3})
    host = MemoryHost.open(hermes_home, settings=settings, load_entrypoints=False)
    provider = host.registry.activate_class(SleepyProvider)
    assert isinstance(provider, SleepyProvider)
    try:
        session = host.session()
        started = time.monotonic()
        assert session.before_turn("what is the plan for today?") == ""
        first_turn = time.monotonic() - started
        assert first_turn <= 0.3 + 0.5  # the bound: timeout + 0.5 s
        session.before_turn("and the next step after that?")
        assert provider.calls == 1  # skipped while the first call is stuck
        provider.release.set()
        deadline = time.monotonic() + 5
        while (
            host.facade._bounded.is_stuck("memory-provider:sleepy") and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        block = session.before_turn("tell me about the roadmap please")
        assert provider.calls == 2 and "late recall for tell me about the roadmap" in block
    finally:
        provider.release.set()
        host.close()


def test_provider_sync_keeps_order_across_100_turns(hermes_home: Path) -> None:
    host = MemoryHost.open(hermes_home, load_entrypoints=False)
    provider = host.registry.activate_class(OrderedSyncProvider)
    assert isinstance(provider, OrderedSyncProvider)
    session = host.session()
    for number in range(1, 101):
        session.before_turn(f"question number {number}")
        session.after_turn(f"question number {number}", "answer")
    assert host.flush(10)
    assert provider.seen == list(range(1, 101))
    host.close()


def test_provider_gets_redacted_payloads(hermes_home: Path) -> None:
    host = MemoryHost.open(hermes_home, load_entrypoints=False)
    provider = host.registry.activate_class(RecordingProvider)
    assert isinstance(provider, RecordingProvider)
    session = host.session()
    secret = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ123456"
    session.before_turn(f"my key is {secret} keep it safe")
    session.after_turn(f"my key is {secret}", f"Stored {secret}")
    host.flush(5)
    turn = provider.synced[0]
    assert secret not in json.dumps([turn.user_text, turn.reply, list(turn.messages)])
    assert "[redacted]" in turn.user_text and "[redacted]" in turn.reply
    assert all(secret not in str(value) for name, value in provider.calls if name == "prefetch")
    host.close()


def test_provider_cannot_shadow_reserved_tool(hermes_home: Path) -> None:
    host = MemoryHost.open(hermes_home, load_entrypoints=False)
    host.registry.activate_class(RecordingProvider)
    session = host.session()
    assert "recording_echo" in session.tool_names
    routed = session._router.get("memory")
    assert routed is None or routed.plugin_name != "memory-provider:recording"
    host.close()


def test_shutdown_reports_abandoned_work() -> None:
    worker = OrderedWorker()
    import threading

    gate = threading.Event()
    worker.submit("slow", lambda: gate.wait(5))
    worker.submit("queued behind", lambda: None)
    report = worker.shutdown(timeout=0.2)
    gate.set()
    assert not report.completed
    assert report.abandoned == ["slow", "queued behind"]
    assert worker.submit("after", lambda: None) is False


def test_provider_shutdown_called_once_per_close(hermes_home: Path) -> None:
    host = MemoryHost.open(hermes_home, load_entrypoints=False)
    provider = host.registry.activate_class(RecordingProvider)
    assert isinstance(provider, RecordingProvider)
    host.close()
    host.close()
    assert provider.shutdowns == 1


def test_defaulted_hook_arguments_are_reported(plugin_manager: Any) -> None:
    from hermes_core.plugins import defaulted_hook_arguments

    class Defaulted:
        @hookimpl
        def on_session_end(self, messages: list[Any], reason: str = "exit") -> None:
            pass

    plugin = Defaulted()
    plugin_manager.register(plugin, name="defaulted")
    assert defaulted_hook_arguments(plugin_manager, plugin) == ["defaulted.on_session_end(reason)"]


def test_hook_on_compressed(host_with: Any) -> None:
    seen: list[CompressionResult] = []

    class Watcher:
        @hookimpl
        def on_compressed(self, result: CompressionResult) -> None:
            seen.append(result)

    host = host_with(Watcher(), Recorder())
    session = host.session()
    messages = [{"role": "user", "content": f"m{i}"} for i in range(4)]
    session.maybe_compress(messages)  # below threshold: nothing happens
    assert seen == []
    session.maybe_compress(messages, force=True)
    assert [m["content"] for m in seen[0].messages] == ["m2", "m3"]
