"""Small helpers shared by service providers' tool handlers.

* :func:`tool_ok` / :func:`tool_error` / :func:`tool_json` — re-exported from
  :mod:`hermes_core.tool_results` (the one tool-result shape).
* :func:`text_arg` — a required/optional string argument, stripped; ``None`` when missing,
  not a string, or blank.
* :class:`ToolRefused`, and :func:`required_text` / :func:`number_arg` — argument checks
  that raise it; a tool built with :meth:`ServiceProvider.tool` turns that (and any
  ServiceError) into a tool error.
* :func:`screened_ok` — a success result of recalled items, with the count the threat
  scanner withheld (``dropped``) when there is one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.tool_results import tool_error, tool_json, tool_ok


class ToolRefused(ValueError):
    """Raised inside a tool body: the message is returned as the tool's error, not logged
    as a failure (an argument the user may not pass, a scope the provider does not serve)."""


def text_arg(args: Mapping[str, Any], name: str) -> str | None:
    """``args[name]`` stripped, or ``None`` when ``args`` is not a mapping or the value is
    missing, not a string, or only white space."""
    value = args.get(name) if isinstance(args, Mapping) else None
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()


def required_text(args: Mapping[str, Any], name: str, what: str, limit: int | None = None) -> str:
    """:func:`text_arg` that must be there: raises
    :class:`ToolRefused` ("'name' is required:
    <what>", or too long past ``limit`` characters)."""
    value = text_arg(args, name)
    if value is None:
        raise ToolRefused(f"'{name}' is required: {what}")
    if limit is not None and len(value) > limit:
        raise ToolRefused(f"'{name}' is too long ({len(value)} chars; max {limit})")
    return value


def number_arg(
    args: Mapping[str, Any], name: str, default: float, low: float, high: float
) -> float:
    """``args[name]`` (else ``default``) as a number in ``[low, high]``; raises ToolRefused
    naming the range ("an integer" when ``default`` is an int)."""
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        kind = "an integer" if isinstance(default, int) else "a number"
        raise ToolRefused(f"'{name}' must be {kind} between {low:g} and {high:g}")
    return float(value)


def screened_ok(dropped: int, **data: Any) -> str:
    """:func:`tool_ok` of ``data``, plus ``dropped`` (recalled items the threat scanner
    withheld, from :func:`~hermes_core.providers.service.recall.screen_recalled`) when
    there are any."""
    return tool_ok(**data, **({"dropped": dropped} if dropped else {}))


__all__ = [
    "ToolRefused",
    "number_arg",
    "required_text",
    "screened_ok",
    "text_arg",
    "tool_error",
    "tool_json",
    "tool_ok",
]
