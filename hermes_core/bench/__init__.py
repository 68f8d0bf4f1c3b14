"""hermes_core.bench."""
