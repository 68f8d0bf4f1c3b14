"""hermes_core.llm."""
