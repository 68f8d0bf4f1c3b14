"""Recall never repeats what the frozen prompt (USER.md / MEMORY.md) already says."""

from __future__ import annotations

from pathlib import Path

from providers_for_tests import RecordingProvider

from hermes_core import MemoryHost, SessionInfo, hookimpl
from hermes_core.context import drop_known_lines
from hermes_core.types import MemoryContext


class ProfileEchoProvider(RecordingProvider):
    """Recalls the user's name (already in USER.md) and one new fact, as real stores do."""

    name = "profileecho"

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        return MemoryContext(
            "- User's name is 王芳.\n- 王芳 likes 龙井 tea in the morning.", count=2, label="echo"
        )


PROMPT = """USER PROFILE
User's name is 王芳.
§
Prefers short answers and dark mode.
MEMORY
Deploys run on Fridays from the release branch."""


def test_lines_already_in_the_prompt_are_dropped_and_the_count_follows() -> None:
    recalled = MemoryContext(
        "- User's name is 王芳.\n- prefers  SHORT answers and dark mode.\n- 用户住在杭州西湖区",
        count=3,
        label="chroma",
    )
    out = drop_known_lines(recalled, PROMPT)
    assert out is not None
    assert out.text == "- 用户住在杭州西湖区"
    assert out.count == 1 and out.label == "chroma"


def test_a_context_with_only_known_lines_disappears() -> None:
    recalled = MemoryContext("1. User's name is 王芳.", count=1, label="mem0")
    assert drop_known_lines(recalled, PROMPT) is None


def test_short_or_partial_lines_are_kept() -> None:
    recalled = MemoryContext("- 王芳\n- Fridays\n- Deploys run on Fridays", count=3)
    out = drop_known_lines(recalled, PROMPT)
    assert out is recalled or (out is not None and out.text == recalled.text)


def test_a_long_line_contained_in_a_prompt_line_is_dropped() -> None:
    recalled = MemoryContext("- deploys run on Fridays from the release", count=1)
    assert drop_known_lines(recalled, PROMPT) is None


def test_first_turn_recall_skips_the_users_own_profile(hermes_home: Path) -> None:
    with MemoryHost.open(hermes_home) as host, host.session(user_id="wf") as s:
        s.call_tool(
            "memory", {"action": "add", "target": "user", "content": "User's name is 王芳."}
        )
    with MemoryHost.open(hermes_home) as host:
        host.registry.activate_class(ProfileEchoProvider)
        with host.session(user_id="wf") as s:
            assert "User's name is 王芳." in s.system_prompt()
            block = s.before_turn("what tea do I like?")
            line = s.recall_line()
    assert "龙井" in block
    assert "User's name is 王芳." not in block
    assert "recalled 1 memory" in line
