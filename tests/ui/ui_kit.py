"""Helpers of the hermes-memory ui tests: the seeded two-user home."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from hermes_core import MemoryHost

SECRET = "Project Falcon"
SECRET_ZH = "猎鹰计划"
SCRIPT = "<script>document.title='pwned'</script>"


def seed(home: Path) -> None:
    """alice: facts about the secrets, a stored <script>, a staged write, sessions (EN/ZH);
    bob: his own fact and session."""
    with MemoryHost.open(home, load_entrypoints=False) as host:
        with host.session(user_id="alice") as s:
            for content in (
                f"Alice leads {SECRET}.",
                f"Alice 负责{SECRET_ZH}。",
                f"Alice wrote {SCRIPT} once",
            ):
                s.call_tool("memory", {"action": "add", "target": "user", "content": content})
            s.before_turn(f"status of {SECRET}?")
            s.after_turn(f"status of {SECRET}?", f"{SECRET} ships Friday.")
            s.before_turn(f"{SECRET_ZH}进展如何?")
            s.after_turn(f"{SECRET_ZH}进展如何?", "进展顺利。")
        with host.session(user_id="bob") as s:
            s.call_tool(
                "memory", {"action": "add", "target": "user", "content": "Bob likes 围棋 (go)."}
            )
            s.after_turn("hello there", "Hi Bob, bobsecret-42 noted!")
    (home / "config.yaml").write_text("memory:\n  write_approval: true\n")
    with MemoryHost.open(home, load_entrypoints=False) as host, host.session(user_id="alice") as s:
        s.call_tool(
            "memory",
            {"action": "add", "target": "memory", "content": "Alice's team ships on Fridays."},
        )


def holographic_provider() -> Any:
    """The holographic provider class: installed, or straight from this checkout's
    plugins/ (it needs nothing beyond the core), so the core's browser tests can show a
    provider that lists, expires and forgets its memories."""
    try:
        module = importlib.import_module("hermes_memory_holographic.provider")
    except ImportError:
        plugin = Path(__file__).resolve().parents[2] / "plugins" / "hermes-memory-holographic"
        sys.path.insert(0, str(plugin))
        module = importlib.import_module("hermes_memory_holographic.provider")
    return module.HolographicProvider
