"""hermes_core.bounded: the one timeout-on-a-thread helper (hook facade and MCP tools)."""

from __future__ import annotations

import threading

import pytest

from hermes_core.bounded import BoundedCalls


def test_a_finished_call_gives_its_result_and_its_exception() -> None:
    calls = BoundedCalls("t")
    assert calls.run("k", lambda: "完成", 5.0) == (True, "完成")

    def boom() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        calls.run("k", boom, 5.0)
    assert not calls.is_stuck("k")


def test_a_call_past_its_timeout_is_stuck_until_it_returns() -> None:
    calls = BoundedCalls("hermes-test")
    release = threading.Event()
    names: list[str] = []

    def slow() -> str:
        names.append(threading.current_thread().name)
        release.wait(30)
        return "late"

    assert calls.run("slow", slow, 0.05) == (False, None)
    assert calls.is_stuck("slow") and not calls.is_stuck("other")
    assert names == ["hermes-test-slow"]
    release.set()
    for thread in threading.enumerate():
        if thread.name == "hermes-test-slow":
            thread.join(30)
    assert not calls.is_stuck("slow")
    assert calls.run("slow", lambda: 1, 5.0) == (True, 1)
