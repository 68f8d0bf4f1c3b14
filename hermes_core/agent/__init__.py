"""hermes_core.agent."""
