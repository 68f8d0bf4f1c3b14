"""An example hermes-core memory provider: remembers turns in a JSON file."""

from hermes_memory_example.provider import ExampleProvider

__all__ = ["ExampleProvider"]
