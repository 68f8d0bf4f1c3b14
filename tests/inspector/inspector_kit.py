"""Helpers of the inspector tests: the seeded two-user home and an independent byte search."""

from __future__ import annotations

from pathlib import Path

from hermes_core import MemoryHost

PHRASE_EN = "Project Falcon"
PHRASE_ZH = "猎鹰计划"


def seed(home: Path) -> None:
    """Two users: alice (English and Chinese facts about the secret phrases) and bob."""
    with MemoryHost.open(home, load_entrypoints=False) as host:
        with host.session(user_id="alice", source="cli") as s:
            for content in (
                f"Alice leads {PHRASE_EN} at work.",
                f"Alice 负责{PHRASE_ZH}。",
                "Alice prefers tea over coffee.",
            ):
                s.call_tool("memory", {"action": "add", "target": "user", "content": content})
            s.before_turn(f"what is the status of {PHRASE_EN}?")
            s.after_turn(f"what is the status of {PHRASE_EN}?", f"{PHRASE_EN} ships Friday.")
            s.before_turn(f"{PHRASE_ZH}进展如何?")
            s.after_turn(f"{PHRASE_ZH}进展如何?", "进展顺利。")
            s.after_turn("remind me to buy milk", "Noted: buy milk.")
        with host.session(user_id="bob", source="cli") as s:
            s.call_tool("memory", {"action": "add", "target": "user", "content": "Bob likes 围棋."})
            s.after_turn("hello there", "Hi Bob!")


def raw_hits(home: Path, phrase: str) -> list[str]:
    """Files below ``home`` whose bytes contain ``phrase`` (as written or lower-cased): an
    independent check, not the inspector's own scan."""
    variants = {phrase.encode(), phrase.lower().encode()}
    found = []
    for path in home.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if any(v in data or v in data.lower() for v in variants):
                found.append(str(path.relative_to(home)))
    return found
