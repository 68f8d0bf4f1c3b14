"""The scripted loopback OpenAI-compatible server for tests (the ``fake_llm`` fixture).

It lives in :mod:`hermes_core.llm.scripted_server` (the benchmarks ship with it); this module
re-exports it so tests and provider packages keep importing it from the test kit.
"""

from __future__ import annotations

from hermes_core.llm.scripted_server import (
    Endpoint,
    FakeLLMServer,
    RecordedRequest,
    Reply,
    Responder,
    ScriptedReply,
    hashed_embedding,
)

__all__ = [
    "Endpoint",
    "FakeLLMServer",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ScriptedReply",
    "hashed_embedding",
]
