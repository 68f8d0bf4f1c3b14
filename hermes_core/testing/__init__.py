"""hermes_core.testing."""
