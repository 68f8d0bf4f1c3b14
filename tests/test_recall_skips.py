"""Warm-up at session start, and no silent loss of recall: every skipped provider recall is
logged once and counted where `hermes-memory memory status` and `hermes-memory doctor` show it."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from providers_for_tests import SleepyProvider, WarmingProvider

from hermes_core import MemoryHost
from hermes_core.cli.main import cli
from hermes_core.errors import HermesError
from hermes_core.providers import recall_skips
from hermes_core.settings import load_settings


def _host(home: Path, timeout: float) -> MemoryHost:
    settings = load_settings(home, memory={"prefetch_timeout": timeout})
    return MemoryHost.open(home, settings=settings, load_entrypoints=False)


def test_warm_up_starts_with_the_first_session_and_a_recall_not_ready_is_skipped_and_counted(
    hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = _host(hermes_home, 0.2)
    provider = host.registry.activate_class(WarmingProvider)
    assert isinstance(provider, WarmingProvider)
    try:
        session = host.session()
        assert provider.started.wait(5)  # began in the background at session start
        with caplog.at_level(logging.WARNING, logger="hermes_core.hooks"):
            assert session.before_turn("what did we decide about the schema?") == ""
        lines = [r.getMessage() for r in caplog.records if "recall skipped" in r.getMessage()]
        assert len(lines) == 1 and "still warming up" in lines[0]
        assert host.facade.recall_skips == {"memory-provider:warming:timeout": 1}
        ledger = recall_skips.load(hermes_home)
        assert ledger["warming"]["timeout"] == 1 and ledger["warming"]["busy"] == 0
        provider.release.set()
        deadline = time.monotonic() + 5
        while host.facade._bounded.is_stuck("memory-provider:warming"):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        block = session.before_turn("and what about the indexes? 索引呢？")
        assert provider.ready and "warm recall for and what about the indexes" in block
        assert recall_skips.load(hermes_home)["warming"]["timeout"] == 1  # nothing new
    finally:
        provider.release.set()
        host.close()


def test_configured_provider_warms_up_on_activation(
    hermes_home: Path, fake_distribution: Any
) -> None:
    fake_distribution(
        "hermes-memory-warming", providers={"warming": "providers_for_tests:WarmingProvider"}
    )
    (hermes_home / "config.yaml").write_text("memory:\n  provider: warming\n")
    host = MemoryHost.open(hermes_home)
    provider = host.provider
    try:
        assert isinstance(provider, WarmingProvider)
        assert provider.started.wait(5)  # before any session was opened
    finally:
        if isinstance(provider, WarmingProvider):
            provider.release.set()
        host.close()


def test_busy_and_failing_recalls_are_counted_by_kind(hermes_home: Path) -> None:
    host = _host(hermes_home, 0.2)
    provider = host.registry.activate_class(SleepyProvider)
    assert isinstance(provider, SleepyProvider)
    try:
        session = host.session()
        session.before_turn("first question about the roadmap")
        session.before_turn("第二个问题：路线图怎么样？")
        counts = recall_skips.load(hermes_home)["sleepy"]
        assert (counts["timeout"], counts["busy"], counts["failed"]) == (1, 1, 0)
        assert counts["last_kind"] == "busy"
    finally:
        provider.release.set()
        host.close()


def test_doctor_and_memory_status_show_the_skips(hermes_home: Path) -> None:
    now = time.time()
    recall_skips.record(hermes_home, "chroma", "timeout", "no answer within 8.0s", now=now)
    recall_skips.record(hermes_home, "chroma", "busy", "still busy", now=now)
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    check = next(c for c in json.loads(result.output) if c["name"] == "recall: chroma")
    assert not check["ok"] and "2 skipped (timeout 1, busy 1, failed 0)" in check["detail"]
    assert "prefetch_timeout" in check["fix"]
    assert result.exit_code == 1
    status = CliRunner().invoke(cli, ["memory", "status"]).output
    assert "Skipped recalls" in status and "chroma: 2 skipped" in status
    data = json.loads(CliRunner().invoke(cli, ["memory", "status", "--json"]).output)
    assert data["recall_skips"]["chroma"]["timeout"] == 1


def test_old_skips_stay_counted_but_no_longer_fail_the_doctor(hermes_home: Path) -> None:
    long_ago = time.time() - 2 * recall_skips.RECENT_SECONDS
    recall_skips.record(hermes_home, "chroma", "failed", "RuntimeError: boom", now=long_ago)
    [check] = recall_skips.health_check(hermes_home)
    assert check.ok and check.detail.startswith("1 skipped")


def test_an_unwritable_home_does_not_break_the_turn(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "ro"
    home.mkdir()
    (home / recall_skips.LEDGER).mkdir()  # the ledger path cannot be written
    with caplog.at_level(logging.WARNING):
        recall_skips.record(home, "chroma", "timeout", "x")
    assert any("could not record" in r.getMessage() for r in caplog.records)
    assert recall_skips.load(home) == {}


class _DownProvider(WarmingProvider):
    """Its server is down: warm_up raises the provider's own error naming the fix."""

    name = "down"

    def warm_up(self) -> None:
        self.started.set()
        raise HermesError("the server at http://127.0.0.1:9 is unreachable: start it")


def test_a_warm_up_that_fails_is_one_log_line_without_a_traceback(
    hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`hermes-memory chat` with a provider's server down printed ~60 traceback lines to the
    terminal before the turn; the reason (which names the fix) is enough."""
    host = _host(hermes_home, 0.2)
    provider = host.registry.activate_class(_DownProvider)
    assert isinstance(provider, _DownProvider)
    try:
        with caplog.at_level(logging.INFO, logger="hermes_core.hooks"):
            host.session()
            assert provider.started.wait(5)
            host.facade._warming["memory-provider:down"].join(5)
        lines = [r for r in caplog.records if "warm up" in r.getMessage()]
        assert len(lines) == 1 and lines[0].exc_info is None
        assert "unreachable: start it" in lines[0].getMessage()
    finally:
        host.close()
