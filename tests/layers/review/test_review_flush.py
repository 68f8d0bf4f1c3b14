"""The memory flush before context is lost (compression, /new, /reset, exit, Session.close),
against the loopback fake model: writes land, the 6-turn limit holds, a hanging model does
not hold up the exit, and without a model nothing is written (logged once)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import chat_turn

from hermes_core.host import MemoryHost, Session
from hermes_core.layers.review import attach_review
from hermes_core.layers.review.plugin import find_review_layer
from hermes_core.markers import hookimpl
from hermes_core.testing.fake_llm import FakeLLMServer, ScriptedReply
from hermes_core.types import ChatMessage, SessionInfo

FLUSH_MARK = "[Memory flush"


def is_flush(body: Mapping[str, Any]) -> bool:
    messages = body.get("messages") or []
    users = [m for m in messages if m.get("role") == "user"]
    return bool(users) and str(users[-1].get("content", "")).startswith(FLUSH_MARK)


def flush_saves(content: str, target: str = "user") -> Callable[[Mapping[str, Any]], Any]:
    """A responder: a flush adds ``content`` once, then says it is done."""

    def respond(body: Mapping[str, Any]) -> Any:
        if not is_flush(body):
            return "(not a flush)"
        if body["messages"][-1]["role"] == "tool":
            return "Saved."
        return {
            "tool_calls": [
                {
                    "name": "memory",
                    "arguments": {"action": "add", "target": target, "content": content},
                }
            ]
        }

    return respond


def flushes(fake_llm: FakeLLMServer) -> list[dict[str, Any]]:
    return [body for body in fake_llm.chat_requests if is_flush(body)]


def user_md(home: Path) -> str:
    path = home / "memories" / "USER.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def talk(session: Session, turns: int, *, chinese: bool = False) -> None:
    for i in range(turns):
        zh = f"第{i}轮：我习惯用 Emacs，项目在 /srv/应用_{i}"
        chat_turn(session, zh if chinese else f"turn {i}: I use Emacs")


def open_session(host: MemoryHost) -> Session:
    session = host.session()
    assert attach_review(session) is not None
    return session


# -- the triggers -----------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["exit", "new_session", "reset"])
def test_flush_on_close_lands_the_write(
    review_host: Callable[..., MemoryHost],
    fake_llm: FakeLLMServer,
    hermes_home: Path,
    reason: str,
) -> None:
    fake_llm.responder = flush_saves("User prefers Emacs and keeps projects under /srv.")
    host = review_host(memory={"nudge_interval": 0})
    session = open_session(host)
    talk(session, 6)
    session.close(reason=reason)
    assert "User prefers Emacs and keeps projects under /srv." in user_md(hermes_home)
    [first, second] = flushes(fake_llm)
    offered = {tool["function"]["name"] for tool in first["tools"]}
    assert offered == {"memory", "skill_manage"}  # nothing else, not even skill_view
    seen = json.dumps(first["messages"], ensure_ascii=False)
    assert "turn 0: I use Emacs" in seen and "turn 5: I use Emacs" in seen
    assert first["messages"][0] == {"role": "system", "content": session.system_prompt()}
    label = {"exit": "exit", "new_session": "/new", "reset": "/reset"}[reason]
    assert session.drain_flush_notices() == [
        f"💾 Memory ➕ User prefers Emacs and keeps projects under /srv. (saved before {label})"
    ]
    assert second["messages"][-1]["role"] == "tool"


def test_flush_before_compression_then_not_again_at_exit(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    fake_llm.responder = flush_saves("用户习惯用 Emacs，项目放在 /srv 下。")
    host = review_host(memory={"nudge_interval": 0}, compression={"protect_last_n": 2})
    session = open_session(host)
    talk(session, 6, chinese=True)
    messages: list[ChatMessage] = [{"role": "system", "content": "s"}, *session.transcript]
    session.maybe_compress(messages, force=True, context_length=400)
    assert "用户习惯用 Emacs，项目放在 /srv 下。" in user_md(hermes_home)
    assert len(flushes(fake_llm)) == 2  # the save and its closing call
    seen = json.dumps(flushes(fake_llm)[0]["messages"], ensure_ascii=False)
    assert "第0轮：我习惯用 Emacs" in seen
    assert session.compression.count == 1  # the compression went on
    talk(session, 2, chinese=True)
    session.close()  # only 2 turns since the flush: nothing to do
    assert len(flushes(fake_llm)) == 2


def test_fewer_than_six_turns_never_flush(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    fake_llm.responder = flush_saves("should not be saved")
    host = review_host(memory={"nudge_interval": 0})
    session = open_session(host)
    talk(session, 5)
    session.maybe_compress([{"role": "system", "content": "s"}, *session.transcript], force=True)
    session.close(reason="exit")
    assert flushes(fake_llm) == [] and "should not be saved" not in user_md(hermes_home)


def test_a_background_review_resets_the_count(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer
) -> None:
    fake_llm.responder = lambda body: "Nothing to save."
    host = review_host(memory={"nudge_interval": 4})
    session = open_session(host)
    talk(session, 7)  # a review at turn 4: only 3 turns since
    runner = find_review_layer(host.pm).runner(session.id)  # type: ignore[union-attr]
    assert runner is not None and runner.wait_idle(10)
    session.close()
    assert flushes(fake_llm) == []


def test_flush_min_turns_is_configurable_and_zero_disables(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer
) -> None:
    fake_llm.responder = flush_saves("x")
    host = review_host(memory={"nudge_interval": 0, "flush_min_turns": 0})
    session = open_session(host)
    talk(session, 12)
    session.close()
    assert flushes(fake_llm) == []
    off = review_host(memory={"nudge_interval": 0}, review={"enabled": False})
    session_off = open_session(off)
    talk(session_off, 8)
    session_off.close()
    assert flushes(fake_llm) == []  # review.enabled: false stops the flush too
    host2 = review_host(memory={"nudge_interval": 0, "flush_min_turns": 2})
    session2 = open_session(host2)
    talk(session2, 2)
    session2.close()
    assert len(flushes(fake_llm)) == 2


def test_flush_writes_follow_the_review_approval_policy(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    host = review_host(memory={"nudge_interval": 0})
    session = open_session(host)
    session.call_tool("memory", {"action": "add", "target": "user", "content": "User uses vim."})

    def remove(body: Mapping[str, Any]) -> Any:
        if not is_flush(body) or body["messages"][-1]["role"] == "tool":
            return "Done."
        return {
            "tool_calls": [
                {
                    "name": "memory",
                    "arguments": {"action": "remove", "target": "user", "old_text": "vim"},
                }
            ]
        }

    fake_llm.responder = remove
    talk(session, 6)
    session.close()
    assert "User uses vim." in user_md(hermes_home)  # unattended removal: only proposed
    [line] = session.drain_flush_notices()
    assert "proposed" in line and "/memory pending" in line


# -- bounded ------------------------------------------------------------------------------


def test_a_hanging_model_does_not_hold_up_the_exit(
    review_host: Callable[..., MemoryHost],
    fake_llm: FakeLLMServer,
    hermes_home: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    hang = 12.0

    def respond(body: Mapping[str, Any]) -> Any:
        if not is_flush(body):
            return "ok"
        return ScriptedReply(
            delay=hang,
            tool_calls=(
                {
                    "name": "memory",
                    "arguments": {"action": "add", "target": "user", "content": "late write"},
                },
            ),
        )

    fake_llm.responder = respond
    host = review_host(memory={"nudge_interval": 0}, review={"flush_timeout": 0.5})
    session = open_session(host)
    talk(session, 6)
    caplog.set_level(logging.WARNING)
    started = time.monotonic()
    session.close()
    elapsed = time.monotonic() - started
    assert elapsed < hang / 2, f"exit waited {elapsed:.1f}s for a hanging model"  # generous
    assert any("timed out" in r.getMessage() for r in caplog.records)
    with pytest.raises(Exception, match="closed"):
        session.before_turn("still open?")
    assert "late write" not in user_md(hermes_home)


def test_a_failing_flush_never_blocks_the_compression(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer
) -> None:
    fake_llm.responder = lambda body: {"status": 500} if is_flush(body) else "## Goal\n- keep going"
    host = review_host(memory={"nudge_interval": 0}, compression={"protect_last_n": 2})
    session = open_session(host)
    talk(session, 6)
    out = session.maybe_compress(
        [{"role": "system", "content": "s"}, *session.transcript], force=True, context_length=400
    )
    assert session.compression.count == 1 and len(out) < len(session.transcript) + 1


# -- no model -------------------------------------------------------------------------------


def test_without_a_model_nothing_is_written_and_the_reason_is_logged_once(
    hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    with MemoryHost.open(hermes_home, load_entrypoints=False, activate_provider=False) as host:
        for _ in range(3):
            session = open_session(host)
            talk(session, 6)
            session.close()
            assert session.drain_flush_notices() == []
    reasons = [r.getMessage() for r in caplog.records if "memory flush" in r.getMessage()]
    assert len(reasons) == 1 and "no review model configured" in reasons[0]
    assert user_md(hermes_home) == ""


# -- the hook --------------------------------------------------------------------------------


class LossRecorder:
    def __init__(self) -> None:
        self.events: list[str] = []

    @hookimpl
    def on_context_loss(
        self, session: SessionInfo, messages: Sequence[ChatMessage], trigger: str
    ) -> list[str]:
        self.events.append(f"loss {trigger} {len(messages)}")
        return [f"saved {trigger}"]

    @hookimpl
    def on_pre_compress(self, session: SessionInfo) -> None:
        self.events.append("pre_compress")

    @hookimpl
    def on_session_end(self, session: SessionInfo, reason: str) -> None:
        self.events.append(f"end {reason}")


def test_hook_on_context_loss(hermes_home: Path) -> None:
    recorder = LossRecorder()
    with MemoryHost.open(hermes_home, load_entrypoints=False, activate_provider=False) as host:
        host.facade.register(recorder, name="loss-recorder")
        session = host.session()
        chat_turn(session, "hello there, 你好")
        messages: list[ChatMessage] = [{"role": "user", "content": f"m{i}"} for i in range(4)]
        session.maybe_compress(messages, force=True)
        session.close(reason="reset")
        assert recorder.events == [
            "loss compression 4",
            "pre_compress",
            "loss reset 2",
            "end reset",
        ]
        assert session.drain_flush_notices() == ["saved compression", "saved reset"]
        assert session.flush_memories() == []  # closed: nothing more
