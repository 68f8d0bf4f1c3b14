"""A slow provider is never a silent pause (issue 27, point 5): what it is doing is visible
while a UI waits (``hermes-memory chat``'s spinner), and a shutdown that cannot finish says so in
one
plain line naming the provider, what it was doing and the setting, with no ERROR log."""

from __future__ import annotations

import io
import logging
import time
from pathlib import Path

import pytest
from providers_for_tests import SlowSavingProvider
from rich.console import Console

from hermes_core import activity
from hermes_core.cli.chat import EventPrinter, _Waiting, print_shutdown_notes
from hermes_core.host import MemoryHost
from hermes_core.settings import load_settings


def _host(home: Path, **memory: float) -> tuple[MemoryHost, SlowSavingProvider]:
    settings = load_settings(home, memory=memory)
    host = MemoryHost.open(home, settings=settings, load_entrypoints=False)
    provider = host.registry.activate_class(SlowSavingProvider)
    assert isinstance(provider, SlowSavingProvider)
    return host, provider


def _wait_for(predicate: object, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.01)


def test_describe_names_the_provider_what_and_how_long() -> None:
    assert activity.describe() == ""
    with activity.track("mem0", "sync"):
        started = time.monotonic()
        assert activity.describe(started + 3.2) == "mem0: saving the last turn (3 s)"
        activity.note("asking its local model   for facts")
        assert activity.describe(started) == "mem0: asking its local model for facts (0 s)"
        assert activity.running()[0]["hook"] == "sync"
    assert activity.describe() == "" and activity.running() == []
    activity.note("outside any call")  # no-op
    assert activity.describe() == ""


def test_a_slow_background_save_is_visible_while_it_runs(hermes_home: Path) -> None:
    host, provider = _host(hermes_home)
    try:
        session = host.session()
        session.before_turn("what do I drink?")
        session.after_turn("I drink oolong tea", "Noted.")
        assert provider.saving.wait(5)
        assert "slowsave: saving the last turn (" in activity.describe()
        rendered = io.StringIO()
        Console(file=rendered, width=200, color_system=None).print(_Waiting("closing …"))
        assert "closing … — slowsave: saving the last turn (" in rendered.getvalue()
        provider.release.set()
        assert host.flush(5)
        assert activity.describe() == ""
    finally:
        provider.release.set()
        host.close()


def test_a_shutdown_that_cannot_finish_explains_itself_without_an_error_log(
    hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host, provider = _host(hermes_home, shutdown_timeout=0.3, provider_timeout=0.3)
    try:
        session = host.session()
        session.after_turn("remember: the deploy is on Friday", "Noted.")
        assert provider.saving.wait(5)
        with caplog.at_level(logging.INFO):
            report = host.close()
        assert not report.completed
        assert report.notes == host.shutdown_notes and len(report.notes) == 2
        drain, stop = report.notes
        assert drain.startswith("slowsave: stopped waiting after 0.3 s while it was saving")
        assert "memory.shutdown_timeout" in drain and "sync turn 1" in drain
        assert stop.startswith("slowsave: its shutdown did not finish within 0.3 s")
        assert "memory.provider_timeout" in stop
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
        out = io.StringIO()
        print_shutdown_notes(Console(file=out, width=300, color_system=None), report.notes)
        assert out.getvalue().splitlines() == [f"⚠ {drain}", f"⚠ {stop}"]
    finally:
        provider.release.set()


def test_a_recall_note_reaches_the_spinner(hermes_home: Path) -> None:
    """A provider can say what its call is doing; the spinner's text re-reads it."""
    host, provider = _host(hermes_home)
    try:
        host.session().before_turn("what do I drink?")
    finally:
        provider.release.set()
        host.close()
    assert provider.seen_activity.startswith("slowsave: searching its local model's memories (")


def test_the_printer_spinner_shows_the_activity(hermes_home: Path) -> None:
    buffer = io.StringIO()
    printer = EventPrinter(
        Console(file=buffer, width=200, force_terminal=True, color_system=None), spinner=True
    )
    with activity.track("chroma", "on_session_end"):
        printer.start_waiting("closing the session")
        time.sleep(0.2)  # a refresh or two of the live spinner
        printer.stop_waiting()
    assert "closing the session … — chroma: closing the session (0 s)" in buffer.getvalue()
