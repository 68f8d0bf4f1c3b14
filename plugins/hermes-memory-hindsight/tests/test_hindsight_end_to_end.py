"""setup → available → prefetch → sync → tools → session end, through `hermes-memory memory setup`
and the Session API, against the loopback double."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner
from hermes_memory_hindsight import HindsightProvider
from hindsight_double import HindsightDouble
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from hermes_core.cli.main import cli
from hermes_core.host import MemoryHost

CLEAR_LINE = "\x15"  # ctrl-u: drop the pre-filled default


def test_setup_then_a_whole_session(hermes_home: Path, double: HindsightDouble) -> None:
    answers = ["hs-test-key", double.server.base_url, CLEAR_LINE + "team"]
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("".join(a + "\r" for a in answers))
        result = CliRunner().invoke(cli, ["memory", "setup", "hindsight"])
    assert result.exit_code == 0, result.output
    assert "Get yours at https://ui.hindsight.vectorize.io" in result.output
    assert "available ✓" in result.output
    config = yaml.safe_load((hermes_home / "config.yaml").read_text(encoding="utf-8"))
    assert config["memory"]["provider"] == "hindsight"
    assert config["memory"]["providers"]["hindsight"] == {
        "api_url": double.server.base_url,
        "bank_id": "team",
    }, "only the asked fields are written; the key goes to .env"
    assert "HINDSIGHT_API_KEY=hs-test-key" in (hermes_home / ".env").read_text(encoding="utf-8")
    assert double.server.requests == [], "setup makes no call"
    # a server without an LLM builds no observations: recall raw facts too
    (hermes_home / "hindsight").mkdir()
    (hermes_home / "hindsight" / "config.json").write_text(
        json.dumps({"recall_types": "world,experience,observation"}), encoding="utf-8"
    )

    host = MemoryHost.open(hermes_home)
    try:
        provider = host.provider
        assert isinstance(provider, HindsightProvider) and provider.is_available()
        with host.session(source="cli", user_id="alice") as s:
            assert "team-alice" in s.system_prompt()
            assert s.before_turn("Remember: I deploy with Ansible on Fridays.") == ""
            s.after_turn("Remember: I deploy with Ansible on Fridays.", "Noted.")
            assert host.flush(10)
            block = s.before_turn("When do I deploy with Ansible?")
            assert "<memory-context>" in block and "Fridays" in block
            s.after_turn("When do I deploy with Ansible?", "On Fridays.")
            found = json.loads(s.call_tool("hindsight_recall", {"query": "Ansible"}))
            assert found["success"] and found["count"] >= 1
        assert host.flush(10)
    finally:
        host.close()
    assert {f.document_id for f in double.facts("team-alice")} >= {s.id + "-t1", s.id + "-t2"}
