"""Transcript builders and validators shared by the compression tests (EN + ZH)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core.settings.models import HermesSettings
from hermes_core.types import ChatMessage, SessionInfo

SYSTEM = {"role": "system", "content": "You are Hermes, a helpful agent."}


def settings(**sections: Mapping[str, Any]) -> HermesSettings:
    """HermesSettings from plain dicts, e.g. ``settings(compression={"protect_last_n": 4})``."""
    return HermesSettings.model_validate({k: dict(v) for k, v in sections.items()})


def session(home: Path, s: HermesSettings, sid: str = "s1") -> SessionInfo:
    return SessionInfo(id=sid, home=home, settings=s, model="fake-model")


def tool_exchange(
    i: int, *, output: str | None = None, name: str = "terminal"
) -> list[ChatMessage]:
    """An assistant tool call and its result."""
    args = (
        {"command": f"pytest -q tests/test_{i}.py"}
        if name == "terminal"
        else {"path": f"/srv/app/f{i}.py"}
    )
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": f"call_{i}",
            "content": output if output is not None else ("ok line\n" * 40) + f"{i} passed\n",
        },
    ]


def transcript(turns: int, *, chinese: bool = False, tools: bool = True) -> list[ChatMessage]:
    """system + ``turns`` user turns, each: user ask, (tool call + result), assistant reply."""
    msgs: list[ChatMessage] = [dict(SYSTEM)]
    for i in range(turns):
        if chinese:
            ask = f"第{i}步：请检查 /srv/应用/配置_{i}.yaml，不要动生产环境。预算是 {4200 + i} 元。"
            reply = f"第{i}步完成，延迟为 {i * 10} 毫秒。"
        else:
            ask = (
                f"Step {i}: check /srv/app/config_{i}.yaml and never touch prod. "
                f"Budget is ${4200 + i}."
            )
            reply = f"Step {i} done; latency was {i * 10} ms and the build id is B-{9000 + i}."
        msgs.append({"role": "user", "content": ask})
        if tools:
            msgs.extend(tool_exchange(i))
        msgs.append({"role": "assistant", "content": reply})
    return msgs


def assert_valid_openai(messages: Sequence[Mapping[str, Any]]) -> None:
    """Every tool result follows its call (within the call's group), no orphans, every call
    answered, system only first, no two consecutive user or assistant messages."""
    pending: list[str] = []
    previous = ""
    for index, message in enumerate(messages):
        role = message.get("role")
        assert role in {"system", "user", "assistant", "tool"}, message
        if role == "system":
            assert index == 0, "system message only at the start"
        if role == "tool":
            call_id = message.get("tool_call_id")
            assert call_id in pending, f"orphan tool result {call_id} at {index}"
            pending.remove(call_id)
        else:
            assert not pending, f"unanswered tool calls {pending} before {index}"
            if role in {"user", "assistant"}:
                assert role != previous, f"two consecutive {role} messages at {index}"
        if role == "assistant":
            pending = [c["id"] for c in message.get("tool_calls") or []]
        previous = role if role != "tool" else "tool"
    assert not pending, f"unanswered tool calls at the end: {pending}"


def newest_user(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user" and not message.get("_compressed_summary"):
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    raise AssertionError("no user message")
