"""Outbox: in-order, keep-while-down delivery of idempotent writes, through a real
ServiceClient and loopback server."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_core.providers.service import ServiceClient, ServiceRequestError, ServiceSettings
from hermes_core.providers.service.outbox import Outbox
from hermes_core.testing.loopback import LoopbackRequest, LoopbackServer, reply

NAMES = ServiceSettings(service="Example", url_setting="EXAMPLE_URL")


@pytest.fixture
def server() -> Iterator[tuple[LoopbackServer, list[Any]]]:
    stored: list[Any] = []
    made = LoopbackServer(name="example")

    def put(req: LoopbackRequest) -> Any:
        if req.json.get("bad"):
            return reply({"detail": "bad item"}, 422)
        stored.append(req.json["n"])
        return {"ok": True}

    made.route("PUT", "/items/{n}", put)
    with made:
        yield made, stored


def client(server: LoopbackServer, **kw: Any) -> ServiceClient:
    return ServiceClient(server.base_url, settings=NAMES, retries=0, timeout=2, **kw)


def writer(c: ServiceClient, n: int, **extra: Any) -> Any:
    return lambda: c.put(f"/items/{n}", json_body={"n": n, **extra})


def test_writes_wait_while_the_service_is_down_and_keep_their_order(
    server: tuple[LoopbackServer, list[Any]], caplog: pytest.LogCaptureFixture
) -> None:
    srv, stored = server
    c = client(srv, failure_threshold=2, cooldown=0)
    box = Outbox("Example")
    srv.fault(status=503)
    with caplog.at_level(logging.INFO, logger="hermes_core.providers.service"):
        assert box.send("1", writer(c, 1)) is False
        assert box.send("2", writer(c, 2)) is False
        assert box.send("2", writer(c, 2)) is False  # a re-send replaces, never duplicates
        assert box.pending == 2 and stored == []
        srv.clear_faults()
        assert box.send("3", writer(c, 3)) is True
    assert stored == [1, 2, 3] and box.pending == 0
    warnings = [r for r in caplog.records if "not taking writes" in r.getMessage()]
    assert len(warnings) == 1, "one warning per outage, not one per write"
    assert any("takes writes again" in r.getMessage() for r in caplog.records)


def test_a_refused_write_raises_and_a_refused_queued_write_is_dropped(
    server: tuple[LoopbackServer, list[Any]],
) -> None:
    srv, stored = server
    c = client(srv)
    box = Outbox("Example")
    with pytest.raises(ServiceRequestError):
        box.send("bad", writer(c, 9, bad=True))
    assert box.pending == 0
    srv.fault(status=503)
    assert box.send("1", writer(c, 1)) is False
    assert box.send("bad", writer(c, 9, bad=True)) is False  # queued behind 1
    srv.clear_faults()
    assert box.flush() is True  # 1 delivered; "bad" refused when its turn came, and dropped
    assert stored == [1] and box.pending == 0


def test_the_outbox_is_bounded(server: tuple[LoopbackServer, list[Any]]) -> None:
    srv, stored = server
    c = client(srv)
    box = Outbox("Example", limit=2)
    srv.fault(status=503)
    for n in range(4):
        box.send(str(n), writer(c, n))
    assert box.pending == 2 and box.dropped == 2
    srv.clear_faults()
    assert box.flush() and stored == [2, 3]
    with pytest.raises(ValueError):
        Outbox("Example", limit=0)
