"""The provider contract: every check hermes-core asks of a provider, inherited."""

from typing import Any, ClassVar

from hermes_core.testing.contract import ProviderContract

from hermes_memory_example.provider import ExampleProvider


class TestExampleContract(ProviderContract):
    provider_class = ExampleProvider
    settings: ClassVar[dict[str, Any]] = {"path": "example-memories.json"}
