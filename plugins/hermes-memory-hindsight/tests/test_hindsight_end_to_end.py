"""A new user's path with Hindsight: `hermes-memory memory setup hindsight` (key, URL, bank),
then a whole session through the host, its turns retained in the user's bank on the double."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_memory_hindsight import HindsightProvider
from hindsight_double import HindsightDouble

from hermes_core.testing.setup_cli import CLEAR_LINE, a_whole_session_in, run_service_setup


def test_setup_then_a_whole_session(hermes_home: Path, double: HindsightDouble) -> None:
    url = double.server.base_url
    run_service_setup(
        hermes_home,
        "hindsight",
        ["hs-test-key", url, CLEAR_LINE + "team"],
        signup_url="https://ui.hindsight.vectorize.io",
        written={"api_url": url, "bank_id": "team"},
        key_line="HINDSIGHT_API_KEY=hs-test-key",
    )
    assert double.server.requests == [], "setup makes no call"
    # a server without an LLM builds no observations: recall raw facts too
    (hermes_home / "hindsight").mkdir()
    (hermes_home / "hindsight" / "config.json").write_text(
        json.dumps({"recall_types": "world,experience,observation"}), encoding="utf-8"
    )
    session_id = a_whole_session_in(
        hermes_home, HindsightProvider, "hindsight_recall", prompt_has="team-alice"
    )
    documents = {f.document_id for f in double.facts("team-alice")}
    assert documents >= {session_id + "-t1", session_id + "-t2"}
