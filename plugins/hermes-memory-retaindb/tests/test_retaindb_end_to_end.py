"""A new user's path with RetainDB: `hermes-memory memory setup retaindb` (key, URL, project),
then a whole session through the host; every call to the double names the project."""

from __future__ import annotations

from pathlib import Path

from hermes_memory_retaindb import RetainDBProvider
from retaindb_double import RetainDBDouble

from hermes_core.testing.setup_cli import CLEAR_LINE, a_whole_session_in, run_service_setup


def test_setup_then_a_whole_session(hermes_home: Path, double: RetainDBDouble) -> None:
    url = double.server.base_url
    run_service_setup(
        hermes_home,
        "retaindb",
        ["rdb-test-key", CLEAR_LINE + url, "acme"],
        signup_url="https://www.retaindb.com",
        written={"base_url": url, "project": "acme"},
        key_line="RETAINDB_API_KEY=rdb-test-key",
    )
    assert double.server.requests == [], "setup makes no call"
    a_whole_session_in(hermes_home, RetainDBProvider, "retaindb_search")
    requests = double.server.requests
    routes = [r.route for r in requests]
    assert "/v1/memory/ingest/session" in routes and "/v1/memory/search" in routes
    assert all(r.json.get("project") == "acme" for r in requests if isinstance(r.json, dict))
