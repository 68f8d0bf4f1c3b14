"""tests/compat: hermes-core next to a real Hermes Agent (``hermes-agent==0.19.0``).

These tests drive Hermes Agent's own code, so they need it installed: the ``hermes-agent``
tox env installs it from the registry and sets ``HERMES_TEST_HERMES_AGENT=1``, which turns a
missing package into a failure. Elsewhere (the core ``py311`` env) they are not collected.
"""

from __future__ import annotations

import importlib.util
import os

if importlib.util.find_spec("hermes_state") is None:
    if os.environ.get("HERMES_TEST_HERMES_AGENT"):
        raise RuntimeError(
            "HERMES_TEST_HERMES_AGENT is set but hermes-agent is not installed: "
            "pip install hermes-agent==0.19.0 (the `tox -e hermes-agent` env does this)"
        )
    collect_ignore_glob = ["test_*.py"]
