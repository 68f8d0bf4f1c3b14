"""ProviderContract against the fake brv (a real subprocess per call)."""

from __future__ import annotations

from typing import Any, ClassVar

from hermes_memory_byterover import ByteRoverProvider

from hermes_core.testing.contract import ProviderContract


class TestByteRoverContract(ProviderContract):
    provider_class = ByteRoverProvider
    settings: ClassVar[dict[str, Any]] = {}


class TestByteRoverContractWaitingCurate(ProviderContract):
    """The same checks with curation waiting for brv (``curate_detach: false``) and recall
    through ``brv search``."""

    provider_class = ByteRoverProvider
    settings: ClassVar[dict[str, Any]] = {"curate_detach": False, "recall_command": "search"}
