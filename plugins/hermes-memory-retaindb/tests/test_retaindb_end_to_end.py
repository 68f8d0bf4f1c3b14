"""setup → available → prefetch → sync → tools → session end, through `hermes-memory memory setup`
and the Session API, against the loopback double."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_memory_retaindb import RetainDBProvider
from retaindb_double import RetainDBDouble

from hermes_core.host import MemoryHost
from hermes_core.testing.setup_cli import CLEAR_LINE, run_setup


def test_setup_then_a_whole_session(hermes_home: Path, double: RetainDBDouble) -> None:
    run = run_setup(
        hermes_home, "retaindb", ["rdb-test-key", CLEAR_LINE + double.server.base_url, "acme"]
    )
    assert run.exit_code == 0, run.output
    assert "Get yours at https://www.retaindb.com" in run.output
    assert "available ✓" in run.output
    assert run.config["memory"]["provider"] == "retaindb"
    assert run.provider_config("retaindb") == {
        "base_url": double.server.base_url,
        "project": "acme",
    }, "only the asked fields are written; the key goes to .env"
    assert "RETAINDB_API_KEY=rdb-test-key" in run.env
    assert double.server.requests == [], "setup makes no call"

    host = MemoryHost.open(hermes_home)
    try:
        provider = host.provider
        assert isinstance(provider, RetainDBProvider) and provider.is_available()
        with host.session(source="cli", user_id="alice") as s:
            assert s.before_turn("Remember: I deploy with Ansible on Fridays.") == ""
            s.after_turn("Remember: I deploy with Ansible on Fridays.", "Noted.")
            assert host.flush(10)
            block = s.before_turn("When do I deploy with Ansible?")
            assert "<memory-context>" in block and "Fridays" in block
            s.after_turn("When do I deploy with Ansible?", "On Fridays.")
            found = json.loads(s.call_tool("retaindb_search", {"query": "Ansible"}))
            assert found["success"] and found["count"] >= 1
        assert host.flush(10)
    finally:
        host.close()
    routes = [r.route for r in double.server.requests]
    assert "/v1/memory/ingest/session" in routes and "/v1/memory/search" in routes
    assert all(
        r.json.get("project") == "acme" for r in double.server.requests if isinstance(r.json, dict)
    )
