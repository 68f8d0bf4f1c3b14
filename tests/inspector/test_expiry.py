"""Expiry of memory entries: an expired entry stays in its file, leaves the prompt, and
forgetting a subject removes its expiry mark too."""

from __future__ import annotations

import time
from pathlib import Path

from hermes_core import MemoryHost
from hermes_core.inspector import forget
from hermes_core.layers.memory.engine import MemoryEngine
from hermes_core.settings.base import load_settings


def test_an_expired_entry_leaves_the_prompt_but_stays_in_the_file(hermes_home: Path) -> None:
    with (
        MemoryHost.open(hermes_home, load_entrypoints=False) as host,
        host.session(user_id="u") as s,
    ):
        for fact in ("Visiting 上海 until Friday.", "Prefers tea."):
            s.call_tool("memory", {"action": "add", "target": "user", "content": fact})
    engine = MemoryEngine(hermes_home, load_settings(hermes_home).memory, "u")
    engine.archive.set_expiry("user", "Visiting 上海 until Friday.", time.time() - 60)
    engine.archive.set_expiry("user", "Prefers tea.", time.time() + 86_400)
    with (
        MemoryHost.open(hermes_home, load_entrypoints=False) as host,
        host.session(user_id="u") as s,
    ):
        prompt = s.system_prompt()
    assert "Prefers tea." in prompt and "上海" not in prompt
    assert "Visiting 上海 until Friday." in engine.store("user").entries()
    assert engine.archive.expired("user") == {"Visiting 上海 until Friday."}
    # another user's view is not touched
    other = MemoryEngine(hermes_home, load_settings(hermes_home).memory, "v")
    assert other.archive.expiries("user") == {}
    engine.archive.set_expiry("user", "Visiting 上海 until Friday.", None)
    with (
        MemoryHost.open(hermes_home, load_entrypoints=False) as host,
        host.session(user_id="u") as s,
    ):
        assert "上海" in s.system_prompt()


def test_forget_removes_the_expiry_mark_too(hermes_home: Path) -> None:
    with (
        MemoryHost.open(hermes_home, load_entrypoints=False) as host,
        host.session(user_id="u") as s,
    ):
        s.call_tool("memory", {"action": "add", "target": "user", "content": "Falcon trip 2027."})
    engine = MemoryEngine(hermes_home, load_settings(hermes_home).memory, "u")
    engine.archive.set_expiry("user", "Falcon trip 2027.", time.time() + 3600)
    with MemoryHost.open(hermes_home, load_entrypoints=False) as host:
        report = forget.forget_subject(host, "u", "falcon trip")
    assert report.proof.clean, report.proof.to_dict()
    assert engine.archive.expiries("user") == {}
