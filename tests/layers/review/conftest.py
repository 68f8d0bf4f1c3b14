"""A host wired to the loopback fake model, for review tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core.host import MemoryHost, Session
from hermes_core.settings.base import load_settings
from hermes_core.testing.fake_llm import FakeLLMServer


@pytest.fixture
def review_host(hermes_home: Path, fake_llm: FakeLLMServer) -> Iterator[Callable[..., MemoryHost]]:
    hosts: list[MemoryHost] = []

    def build(**sections: Any) -> MemoryHost:
        llm = {"base_url": fake_llm.base_url, "model": fake_llm.model, "max_retries": 0}
        llm.update(sections.pop("llm", {}))
        settings = load_settings(hermes_home, llm=llm, **sections)
        host = MemoryHost.open(
            hermes_home, settings=settings, load_entrypoints=False, activate_provider=False
        )
        hosts.append(host)
        return host

    yield build
    for host in hosts:
        host.close()


def chat_turn(session: Session, text: str, reply: str = "Noted.") -> None:
    """A plain user turn through the Session API (no tools)."""
    session.before_turn(text)
    session.after_turn(text, reply)
