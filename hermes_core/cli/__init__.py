"""hermes_core.cli."""
