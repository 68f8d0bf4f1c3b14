"""hermes_core.providers."""
