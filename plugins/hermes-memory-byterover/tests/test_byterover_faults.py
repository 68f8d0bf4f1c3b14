"""Faults of the brv subprocess: hang, timeout, crash, error answers, malformed output, a
missing binary, the circuit breaker; and user isolation (EN and ZH)."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_brv import FakeBrv
from hermes_memory_byterover import ByteRoverProvider

from hermes_core.testing.harness import ProviderHarness
from hermes_core.testing.service_faults import crossover
from hermes_core.testing.service_frame import ServiceFrameChecks

PREFETCH_TIMEOUT = 1.0
SLACK = 0.5
THRESHOLD = 3
COOLDOWN = 0.5


def error_of(result: str) -> str:
    data = json.loads(result)
    assert isinstance(data, dict)
    return str(data.get("error") or "")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent) counts as gone
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def wait_gone(pids: list[int], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def harness(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderHarness]:
    monkeypatch.setenv("HERMES_MEMORY__PREFETCH_TIMEOUT", str(PREFETCH_TIMEOUT))
    made = ProviderHarness(
        ByteRoverProvider,
        hermes_home,
        {
            "failure_threshold": THRESHOLD,
            "breaker_cooldown": COOLDOWN,
            "timeout_query": 5.0,
            "curate_detach": False,
        },
    )
    yield made
    made.close()


def query(harness: ProviderHarness, text: str = "Which editor do I like?") -> str:
    return harness.session.call_tool("brv_query", {"query": text})


def test_hanging_brv_does_not_hold_the_turn_and_is_killed(
    harness: ProviderHarness, fake_brv: FakeBrv
) -> None:
    fake_brv.set("hang", command="query")
    started = time.monotonic()
    block = harness.session.before_turn("Which editor do I like best for Rust?")
    elapsed = time.monotonic() - started
    assert elapsed <= PREFETCH_TIMEOUT + SLACK, f"turn held {elapsed:.2f}s by a hanging brv"
    assert block == ""
    # the provider's own deadline (min(prefetch_timeout, timeout_query)) kills brv and the
    # helper it started: nothing outlives the call
    assert wait_until(lambda: bool(fake_brv.children()))
    assert wait_gone(fake_brv.children()), "the hung brv's process group survived"


def wait_until(check: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_tool_timeout_names_the_setting_and_kills_the_group(
    hermes_home: Path, fake_brv: FakeBrv
) -> None:
    harness = ProviderHarness(ByteRoverProvider, hermes_home, {"timeout_query": 0.5})
    try:
        fake_brv.set("hang", command="query")
        started = time.monotonic()
        error = error_of(query(harness))
        assert time.monotonic() - started < 5
        assert "0.5 s" in error and "timeout_query" in error, error
        assert wait_gone(fake_brv.children())
    finally:
        harness.close()


def test_crash_is_a_json_error_and_the_turn_goes_on(
    harness: ProviderHarness, fake_brv: FakeBrv
) -> None:
    fake_brv.set("fail")
    assert harness.session.before_turn("Which editor do I like best?") == ""
    harness.session.after_turn("Please remember I like Helix as my editor.", "Noted.")
    assert harness.host.flush(10)
    error = error_of(query(harness))
    assert "exit 1" in error and "daemon crashed" in error, error


def test_error_answer_with_exit_zero_is_an_error(
    harness: ProviderHarness, fake_brv: FakeBrv
) -> None:
    fake_brv.set("error_json")
    error = error_of(query(harness))
    assert "No provider connected" in error


def test_malformed_output_is_logged_not_raised(
    harness: ProviderHarness, fake_brv: FakeBrv, caplog: pytest.LogCaptureFixture
) -> None:
    fake_brv.set("malformed")
    with caplog.at_level(logging.WARNING):
        assert harness.prefetch("Which editor do I like best?") is None
        error = error_of(query(harness))
    assert "malformed" in error.lower()
    assert any(
        "malformed" in r.getMessage().lower() and r.levelno >= logging.WARNING
        for r in caplog.records
    )


def test_breaker_opens_after_the_configured_failures_and_closes_again(
    harness: ProviderHarness, fake_brv: FakeBrv, caplog: pytest.LogCaptureFixture
) -> None:
    fake_brv.set("fail")
    with caplog.at_level(logging.INFO):
        for _ in range(THRESHOLD):
            assert error_of(query(harness))
        before = len(fake_brv.calls())
        paused = error_of(query(harness))
        assert "paused" in paused, paused
        assert len(fake_brv.calls()) == before, "an open breaker must not start brv"
        assert harness.prefetch("Which editor do I like best?") is None
        assert len(fake_brv.calls()) == before
        opened = [r for r in caplog.records if "circuit breaker open" in r.getMessage()]
        assert len(opened) == 1
        fake_brv.set("ok")
        time.sleep(COOLDOWN + 0.1)
        assert not error_of(query(harness))
    assert [r for r in caplog.records if "circuit breaker closed" in r.getMessage()]


def test_a_refused_request_does_not_count_towards_the_breaker(
    harness: ProviderHarness, fake_brv: FakeBrv
) -> None:
    provider = harness.provider
    assert isinstance(provider, ByteRoverProvider)
    for _ in range(THRESHOLD + 1):
        provider_error = error_of(harness.session.call_tool("brv_curate", {"content": " "}))
        assert "required" in provider_error
    breaker = provider.breaker  # None: a refused request never even started brv
    assert breaker is None or breaker.state == "closed"


def test_missing_binary_names_the_setting_and_the_install(hermes_home: Path) -> None:
    harness = ProviderHarness(ByteRoverProvider, hermes_home, {"brv_path": "/nonexistent/brv"})
    try:
        provider = harness.provider
        assert not provider.is_available()
        reason = provider.unavailable_reason()
        assert "brv_path" in reason and "npm install -g byterover-cli" in reason
        error = error_of(query(harness))
        assert "brv_path" in error and "npm install -g byterover-cli" in error
    finally:
        harness.close()


@crossover
def test_two_users_never_share(
    harness: ProviderHarness, fake_brv: FakeBrv, fact: str, query: str, expect: str
) -> None:
    ask = query
    owner = harness.session
    owner.before_turn(fact)
    owner.after_turn(fact, "Noted.")
    assert harness.host.flush(10)
    other = harness.host.session(source="test", user_id="someone-else")
    try:
        assert expect not in other.before_turn(ask)
        assert expect not in other.call_tool("brv_query", {"query": ask})
        assert expect in owner.before_turn(ask)
        assert expect in owner.call_tool("brv_query", {"query": ask})
    finally:
        other.close()
    dirs = {c["cwd"] for c in fake_brv.calls()}
    assert len(dirs) == 2, dirs
    assert all("byterover-users" in d for d in dirs)


class TestByteRoverOnTheFrame(ServiceFrameChecks):
    """The service frame's checks (hermes_core.testing.service_frame) against the fake brv:
    ``fail`` mode makes every brv call crash."""

    provider_class = ByteRoverProvider
    probe_tool = ("brv_query", {"query": "Which editor do I like?"})
    breaker_threshold = THRESHOLD

    @pytest.fixture
    def service_harness(self, harness: ProviderHarness) -> ProviderHarness:
        return harness

    def fail_service(self, harness: ProviderHarness, request: pytest.FixtureRequest) -> None:
        request.getfixturevalue("fake_brv").set("fail")
