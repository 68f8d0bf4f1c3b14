"""hermes_core.security."""
