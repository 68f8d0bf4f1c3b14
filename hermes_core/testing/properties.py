"""Property-test pieces (hypothesis) the provider suites share: two users' interleaved
writes for isolation properties, settings for a property test that takes function-scoped
fixtures, and CI's replayable profile. Needs ``hypothesis`` (in every provider's ``[test]``
extra and in ``hermes-memory-core[dev]``)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

Write = tuple[str, int, str]
"""``(who, word index, way)``: user ``"A"`` or ``"B"`` writes word ``index`` through ``way``."""


def two_user_writes(
    words: int, ways: Sequence[str], *, max_size: int
) -> st.SearchStrategy[list[Write]]:
    """Non-empty lists of up to ``max_size`` :data:`Write` s, word indices below ``words``,
    ways drawn from ``ways`` (a provider's write paths: ``"tool"``, ``"mirror"``...)."""
    one = st.tuples(
        st.sampled_from(["A", "B"]), st.integers(0, words - 1), st.sampled_from(list(ways))
    )
    return st.lists(one, min_size=1, max_size=max_size)


def with_fixtures(max_examples: int) -> settings:
    """Settings for a property test that takes pytest's function-scoped fixtures (shared
    across examples on purpose) and may be slow per example (no deadline)."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )


def load_ci_profile() -> None:
    """Under CI (``CI`` set) replay the same examples every run: a failure there is a real,
    reproducible one, never a lucky draw; local runs keep exploring new examples. Call it
    from a conftest."""
    if os.environ.get("CI"):
        settings.register_profile("ci", derandomize=True, print_blob=True)
        settings.load_profile("ci")


__all__ = ["Write", "load_ci_profile", "two_user_writes", "with_fixtures"]
