"""The LLM the layers may use: an OpenAI-compatible chat client over httpx (``client``), its
errors (``errors``), token estimates and usage tracking (``tokens``). With no model
configured, every caller falls back to deterministic behaviour."""
