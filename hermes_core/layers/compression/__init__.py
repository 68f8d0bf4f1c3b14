"""Built-in layer: compression of a long conversation into a handoff summary.

``prune``, ``boundaries`` and ``messages`` (what is kept), ``summarizer`` and ``fallback``
(the summary, with or without an LLM), ``compressor`` (the steps), ``metrics``, ``plugin``
(the hooks; registered from ``hermes_core.plugins.BUILTIN_PLUGINS``).
"""
