"""A readable scripted model for agent tests: a ``responder`` that decides from the request.

Rules map a substring of the newest user message to a reply; tool results are answered by
``after_tool`` rules keyed by the tool just called. Review requests (the review prompt is the
newest user message) go to ``review`` callables. Everything the model saw is in
``FakeLLMServer.chat_requests``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Reply = str | dict[str, Any]


def call(tool: str, /, **arguments: Any) -> dict[str, Any]:
    """A reply that calls one tool."""
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def last_user(body: Mapping[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


def calls_since_user(body: Mapping[str, Any]) -> list[str]:
    """Tool names the model called since the newest user message."""
    names: list[str] = []
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            break
        for c in message.get("tool_calls") or []:
            names.append(c["function"]["name"])
    return list(reversed(names))


def last_tool_result(body: Mapping[str, Any]) -> dict[str, Any]:
    message = (body.get("messages") or [{}])[-1]
    try:
        return json.loads(message.get("content") or "{}")
    except ValueError:
        return {}


def is_review(body: Mapping[str, Any]) -> bool:
    return last_user(body).startswith("[Background review")


def is_summary_request(body: Mapping[str, Any]) -> bool:
    messages = body.get("messages") or []
    return bool(messages) and "summarisation agent" in str(messages[0].get("content", ""))


@dataclass
class ScriptedModel:
    """``rules``: [(substring of the user message, reply)]; first match wins."""

    rules: list[tuple[str, Reply]] = field(default_factory=list)
    review: Callable[[Mapping[str, Any]], Reply] | None = None
    default: str = "OK."
    summary: str = (
        "## Goal\nKeep chatting about project 青龙.\n## Critical Context\n"
        "The user deploys 青龙 with Kubernetes."
    )

    def when(self, needle: str, reply: Reply) -> ScriptedModel:
        self.rules.append((needle, reply))
        return self

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        if is_summary_request(body):
            return self.summary
        if is_review(body):
            return self.review(body) if self.review is not None else "Nothing to save."
        messages = body.get("messages") or []
        if messages and messages[-1].get("role") == "tool":
            result = last_tool_result(body)
            return f"Done ({calls_since_user(body)[-1]}: success={result.get('success')})."
        text = last_user(body)
        for needle, reply in self.rules:
            if needle in text:
                return reply
        return self.default
