"""The provider page over HTTP with a third-party provider that opts into listing, expiry and
scores (``notebook``, tests/ui/provider_kit.py) and one that opts into nothing (``plain``):
status codes, CSRF, read-only refusal, user separation, expiry leaving recall, the per-item
scores of the recall trace and the per-day recall charts."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from provider_kit import NotebookProvider, PlainProvider
from starlette.testclient import TestClient

from hermes_core import MemoryHost
from hermes_core.providers import recall_skips
from hermes_core.ui.app import create_app
from hermes_core.ui.guard import Guard

BASE = "http://127.0.0.1:8765"
ALICE_NOTE = "Alice flies to Zanzibar in May"
BOB_NOTE = "Bob sails to Zanzibar in June"


def serve(
    home: Path, provider: type, *, read_only: bool = False
) -> Iterator[tuple[TestClient, Guard, MemoryHost]]:
    guard = Guard(home=home, read_only=read_only)
    with MemoryHost.open(home, load_entrypoints=False) as host:
        host.registry.activate_class(provider, {})
        with TestClient(create_app(host, guard), base_url=BASE, follow_redirects=False) as client:
            yield client, guard, host


@pytest.fixture
def notebook(ui_home: Path) -> Iterator[tuple[TestClient, Guard, MemoryHost]]:
    for client, guard, host in serve(ui_home, NotebookProvider):
        provider = host.provider
        assert isinstance(provider, NotebookProvider)
        provider.add("alice", ALICE_NOTE)
        provider.add("alice", "Alice drinks tea")
        provider.add("bob", BOB_NOTE)
        yield client, guard, host


def _recalled(host: MemoryHost, user: str) -> str:
    with host.session(user_id=user) as s:
        return s.before_turn("when does anyone go to Zanzibar?")


def test_the_page_lists_each_users_memories_only(
    notebook: tuple[TestClient, Guard, MemoryHost],
) -> None:
    client, _, _ = notebook
    alice = client.get("/provider", params={"u": "alice"})
    assert alice.status_code == 200
    assert ALICE_NOTE in alice.text and BOB_NOTE not in alice.text
    assert 'name="date"' in alice.text  # expiry is offered
    bob = client.get("/provider", params={"u": "bob"}).text
    assert BOB_NOTE in bob and ALICE_NOTE not in bob
    filtered = client.get("/provider", params={"u": "alice", "q": "tea"}).text
    assert "Alice drinks tea" in filtered and ALICE_NOTE not in filtered


def test_an_expiry_set_from_the_page_shows_and_leaves_recall(
    notebook: tuple[TestClient, Guard, MemoryHost],
) -> None:
    client, guard, host = notebook
    assert ALICE_NOTE in _recalled(host, "alice")
    data = {"u": "alice", "id": "n1", "csrf": guard.csrf}
    r = client.post("/provider/expire", data={**data, "date": "2001-01-01"})
    assert r.status_code == 303 and "ok=1" in r.headers["location"]
    assert "expired — left recall" in client.get("/provider", params={"u": "alice"}).text
    assert ALICE_NOTE not in _recalled(host, "alice")
    assert BOB_NOTE in _recalled(host, "bob")  # bob's n1 is another memory
    assert "expired" not in client.get("/provider", params={"u": "bob"}).text.split("<main>")[1]
    r = client.post("/provider/expire", data={**data, "date": "2999-01-01"})
    assert "expires 2999-01-01" in client.get("/provider", params={"u": "alice"}).text
    assert ALICE_NOTE in _recalled(host, "alice")
    r = client.post("/provider/expire", data={**data, "date": ""})
    assert "ok=1" in r.headers["location"] and "expiry+cleared" in r.headers["location"]


def test_bad_expiry_requests_are_refused(notebook: tuple[TestClient, Guard, MemoryHost]) -> None:
    client, guard, host = notebook
    data = {"u": "alice", "id": "n1", "csrf": guard.csrf}
    r = client.post("/provider/expire", data={**data, "date": "next week"})
    assert r.status_code == 303 and "ok=0" in r.headers["location"]
    assert "YYYY-MM-DD" in r.headers["location"]
    r = client.post("/provider/expire", data={**data, "id": "n9", "date": "2001-01-01"})
    assert "ok=0" in r.headers["location"]
    assert client.post("/provider/expire", data={"u": "alice", "id": "n1"}).status_code == 403
    r = client.post("/provider/expire", data={**data, "csrf": "wrong", "date": "2001-01-01"})
    assert r.status_code == 403
    assert ALICE_NOTE in _recalled(host, "alice")  # nothing was expired


def test_read_only_refuses_expiry_and_forget(ui_home: Path) -> None:
    for client, guard, host in serve(ui_home, NotebookProvider, read_only=True):
        provider = host.provider
        assert isinstance(provider, NotebookProvider)
        provider.add("alice", ALICE_NOTE)
        page = client.get("/provider", params={"u": "alice"}).text
        assert ALICE_NOTE in page and 'name="date"' not in page
        for path in ("/provider/expire", "/provider/forget"):
            r = client.post(
                path, data={"u": "alice", "id": "n1", "date": "2001-01-01", "csrf": guard.csrf}
            )
            assert r.status_code == 403, path
        assert provider.expiry.expiries("alice") == {} and provider.notes("alice")


def test_forget_one_memory_for_its_owner_only(
    notebook: tuple[TestClient, Guard, MemoryHost],
) -> None:
    client, guard, host = notebook
    provider = host.provider
    assert isinstance(provider, NotebookProvider)
    provider.expiry.set_date("alice", "n1", 1.0)
    r = client.post("/provider/forget", data={"u": "bob", "id": "n2", "csrf": guard.csrf})
    assert "ok=0" in r.headers["location"]  # bob has no n2; alice's n2 stays
    assert "Alice drinks tea" in provider.notes("alice").values()
    r = client.post("/provider/forget", data={"u": "alice", "id": "n1", "csrf": guard.csrf})
    assert "ok=1" in r.headers["location"]
    assert ALICE_NOTE not in client.get("/provider", params={"u": "alice"}).text
    assert provider.expiry.expiries("alice") == {}  # the date went with the memory
    assert BOB_NOTE in client.get("/provider", params={"u": "bob"}).text


def test_a_provider_without_the_capabilities_says_so(ui_home: Path) -> None:
    for client, _, _ in serve(ui_home, PlainProvider):
        page = client.get("/provider", params={"u": "alice"})
        assert page.status_code == 200
        assert "plain cannot list its memories" in page.text


def test_the_trace_shows_each_recalled_memorys_score(
    notebook: tuple[TestClient, Guard, MemoryHost],
) -> None:
    client, _, host = notebook
    with host.session(user_id="alice") as s:
        s.before_turn("Alice flies to Zanzibar")
    page = client.get("/trace", params={"u": "alice"}).text
    table = re.search(r'<table class="scored">.*?</table>', page, re.S)
    assert table, page
    rows = re.findall(r"<td>([\d.]+)</td><td><pre>([^<]*)</pre>", table.group())
    assert rows == [("4.000", ALICE_NOTE), ("1.000", "Alice drinks tea")]
    # a provider returning plain text (no scores) still shows its block
    for client2, _, host2 in serve(host.home, PlainProvider):
        _recalled(host2, "bob")
        bob = client2.get("/trace", params={"u": "bob"}).text
        assert "the plain provider&#x27;s note" in bob and "scored" not in bob


def test_recall_latency_and_skips_per_day_charts(
    notebook: tuple[TestClient, Guard, MemoryHost],
) -> None:
    client, _, host = notebook
    _recalled(host, "alice")
    day_ago = time.time() - 86400
    recall_skips.record(host.home, "notebook", "timeout", "slow", now=day_ago)
    recall_skips.record(host.home, "notebook", "busy", "busy", now=day_ago)
    recall_skips.record(host.home, "notebook", "timeout", "slow")
    page = client.get("/provider", params={"u": "alice"}).text
    assert "Recall latency per day" in page and "Recall skips per day" in page
    skips = page.split("Recall skips per day")[-1]
    for day, count in recall_skips.per_day(host.home).items():
        assert re.search(rf">{day}</text>.*?>{count}</text>", skips, re.S), (day, count)
    assert sorted(recall_skips.per_day(host.home).values()) == [1, 2]
