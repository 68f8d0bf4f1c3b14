"""Local fixtures for the LLM client tests (the shared ``fake_llm`` fixture wraps the same
server)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hermes_core.testing.fake_llm import FakeLLMServer


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """A started loopback FakeLLMServer, stopped after the test."""
    with FakeLLMServer() as server:
        yield server
