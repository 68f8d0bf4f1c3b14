"""setup → available → prefetch → sync → tools → session end, through `hermes-memory memory setup`
and the Session API, against the loopback double."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_memory_hindsight import HindsightProvider
from hindsight_double import HindsightDouble

from hermes_core.host import MemoryHost
from hermes_core.testing.setup_cli import (
    CLEAR_LINE,
    a_whole_session,
    check_service_setup,
    run_setup,
)


def test_setup_then_a_whole_session(hermes_home: Path, double: HindsightDouble) -> None:
    run = run_setup(
        hermes_home, "hindsight", ["hs-test-key", double.server.base_url, CLEAR_LINE + "team"]
    )
    check_service_setup(
        run,
        "hindsight",
        signup_url="https://ui.hindsight.vectorize.io",
        written={"api_url": double.server.base_url, "bank_id": "team"},
        key_line="HINDSIGHT_API_KEY=hs-test-key",
    )
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
        session_id = a_whole_session(host, "hindsight_recall", prompt_has="team-alice")
    finally:
        host.close()
    assert {f.document_id for f in double.facts("team-alice")} >= {
        session_id + "-t1",
        session_id + "-t2",
    }
