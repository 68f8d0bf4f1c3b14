"""Built-in layer: compression of a long conversation into a handoff summary.

``prune``, ``boundaries`` and ``messages`` (what is kept), ``summarizer`` and ``fallback``
(the summary, with or without an LLM), ``compressor`` (the steps), ``metrics``, ``plugin``
(the hooks; registered from ``hermes_core.plugins.BUILTIN_PLUGINS``).

The layer's public face is ``__all__`` below: code outside the layers (cli/, mcp/, compat/,
agent/, bench/, host.py, hooks.py) imports these names from ``hermes_core.layers.compression`` and
nothing from its modules (tests/test_layer_boundaries.py). Names load on first use, so
importing the package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.lazy import lazy_names

if TYPE_CHECKING:
    from .compressor import (
        MERGED_MARKER_KEY,
        CompressionState,
        Cut,
        compress_messages,
        cut_transcript,
        fallback_sheet,
        model_summary,
    )
    from .messages import SUMMARY_MARKER_KEY, content_text

_HOME: dict[str, str] = {
    "compress_messages": "compressor",
    "CompressionState": "compressor",
    "content_text": "messages",
    "Cut": "compressor",
    "cut_transcript": "compressor",
    "fallback_sheet": "compressor",
    "MERGED_MARKER_KEY": "compressor",
    "model_summary": "compressor",
    "SUMMARY_MARKER_KEY": "messages",
}
"""Public name -> the module of this layer that defines it."""


__getattr__ = lazy_names(__name__, _HOME)

__all__ = [
    "MERGED_MARKER_KEY",
    "SUMMARY_MARKER_KEY",
    "CompressionState",
    "Cut",
    "compress_messages",
    "content_text",
    "cut_transcript",
    "fallback_sheet",
    "model_summary",
]
