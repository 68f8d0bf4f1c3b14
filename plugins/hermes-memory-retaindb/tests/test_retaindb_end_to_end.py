"""setup → available → prefetch → sync → tools → session end, through `hermes-memory memory setup`
and the Session API, against the loopback double."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner
from hermes_memory_retaindb import RetainDBProvider
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from retaindb_double import RetainDBDouble

from hermes_core.cli.main import cli
from hermes_core.host import MemoryHost

CLEAR_LINE = "\x15"  # ctrl-u: drop the pre-filled default


def test_setup_then_a_whole_session(hermes_home: Path, double: RetainDBDouble) -> None:
    answers = ["rdb-test-key", CLEAR_LINE + double.server.base_url, "acme"]
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("".join(a + "\r" for a in answers))
        result = CliRunner().invoke(cli, ["memory", "setup", "retaindb"])
    assert result.exit_code == 0, result.output
    assert "Get yours at https://www.retaindb.com" in result.output
    assert "available ✓" in result.output
    config = yaml.safe_load((hermes_home / "config.yaml").read_text(encoding="utf-8"))
    assert config["memory"]["provider"] == "retaindb"
    assert config["memory"]["providers"]["retaindb"] == {
        "base_url": double.server.base_url,
        "project": "acme",
    }, "only the asked fields are written; the key goes to .env"
    assert "RETAINDB_API_KEY=rdb-test-key" in (hermes_home / ".env").read_text(encoding="utf-8")
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
