"""The provider against a REAL ``brv`` (byterover-cli 3.x), when one is given.

byterover-cli 3.14.0 does not run offline (its daemon exits at start-up: "Unable to connect
to ByteRover servers"), so this module is skipped unless ``HERMES_TEST_REAL_BRV`` names a
working ``brv`` (on a machine with network access, logged in or with a provider connected).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hermes_memory_byterover import ByteRoverProvider

from hermes_core.testing.harness import ProviderHarness

REAL_BRV = os.environ.get("HERMES_TEST_REAL_BRV", "")

pytestmark = pytest.mark.skipif(
    not REAL_BRV,
    reason="no real brv: byterover-cli 3.14.0 needs ByteRover's servers to start its daemon; "
    "set HERMES_TEST_REAL_BRV=/path/to/brv where it can run",
)


def test_status_curate_and_search_with_the_real_brv(hermes_home: Path) -> None:
    harness = ProviderHarness(
        ByteRoverProvider,
        hermes_home,
        {
            "brv_path": REAL_BRV,
            "recall_command": "search",
            "timeout_query": 60,
            "timeout_status": 60,
        },
    )
    try:
        status = json.loads(harness.session.call_tool("brv_status", {}))
        assert status["success"] is True, status
        curated = json.loads(
            harness.session.call_tool(
                "brv_curate", {"content": "The staging database listens on port 5433."}
            )
        )
        assert curated["success"] is True, curated
        context = harness.prefetch("Which port does the staging database listen on?")
        assert context is not None and "5433" in context.text
    finally:
        harness.close()
