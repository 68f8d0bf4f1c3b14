"""setup → available → prefetch → sync → tools → session end, through `hermes-memory memory setup`
and the Session API, against the loopback double."""

from __future__ import annotations

from pathlib import Path

from hermes_memory_retaindb import RetainDBProvider
from retaindb_double import RetainDBDouble

from hermes_core.host import MemoryHost
from hermes_core.testing.setup_cli import (
    CLEAR_LINE,
    a_whole_session,
    check_service_setup,
    run_setup,
)


def test_setup_then_a_whole_session(hermes_home: Path, double: RetainDBDouble) -> None:
    run = run_setup(
        hermes_home, "retaindb", ["rdb-test-key", CLEAR_LINE + double.server.base_url, "acme"]
    )
    check_service_setup(
        run,
        "retaindb",
        signup_url="https://www.retaindb.com",
        written={"base_url": double.server.base_url, "project": "acme"},
        key_line="RETAINDB_API_KEY=rdb-test-key",
    )
    assert double.server.requests == [], "setup makes no call"

    host = MemoryHost.open(hermes_home)
    try:
        provider = host.provider
        assert isinstance(provider, RetainDBProvider) and provider.is_available()
        a_whole_session(host, "retaindb_search")
    finally:
        host.close()
    routes = [r.route for r in double.server.requests]
    assert "/v1/memory/ingest/session" in routes and "/v1/memory/search" in routes
    assert all(
        r.json.get("project") == "acme" for r in double.server.requests if isinstance(r.json, dict)
    )
