"""Fixtures for agent tests: a scripted model on the loopback fake server and an agent
factory on a fresh Hermes home."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted import ScriptedModel

from hermes_core.agent.loop import Agent, AgentEvent
from hermes_core.host import MemoryHost
from hermes_core.settings.base import load_settings
from hermes_core.testing.fake_llm import FakeLLMServer


@pytest.fixture
def model(fake_llm: FakeLLMServer) -> ScriptedModel:
    scripted = ScriptedModel()
    fake_llm.responder = scripted
    return scripted


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def make_agent(
    hermes_home: Path, fake_llm: FakeLLMServer, workdir: Path
) -> Iterator[Callable[..., Agent]]:
    """``make_agent(events=None, **settings_sections)`` → an Agent on its own host."""
    hosts: list[MemoryHost] = []

    def build(events: list[AgentEvent] | None = None, **sections: Any) -> Agent:
        llm = {"base_url": fake_llm.base_url, "model": fake_llm.model, "max_retries": 0}
        llm.update(sections.pop("llm", {}))
        settings = load_settings(hermes_home, llm=llm, **sections)
        host = MemoryHost.open(
            hermes_home, settings=settings, load_entrypoints=False, activate_provider=False
        )
        hosts.append(host)
        sink = events if events is not None else []
        return Agent(host, cwd=workdir, on_event=sink.append)

    yield build
    for host in hosts:
        host.close()
