"""Small helpers shared by service providers' tool handlers and shutdown.

* :func:`tool_ok` / :func:`tool_error` / :func:`tool_json` — re-exported from
  :mod:`hermes_core.tool_results` (the one tool-result shape).
* :func:`text_arg` — a required/optional string argument, stripped; ``None`` when missing,
  not a string, or blank.
* :func:`guard_tool` — runs a handler body so that it never raises: a
  :class:`ServiceError` becomes its message, anything else ``"<Type>: <message>"`` (logged
  with its traceback).
* :func:`stop_background` — the end of a provider's ``shutdown``: cancels a background
  executor's queued work and closes the service API client, never raising.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from typing import Any, Protocol

from hermes_core.providers.service.errors import ServiceError, ServiceNotFound
from hermes_core.tool_results import tool_error, tool_json, tool_ok


class Closable(Protocol):
    """Anything with ``close()`` (a service API wrapper, a :class:`ServiceClient`)."""

    def close(self) -> None: ...


def text_arg(args: Mapping[str, Any], name: str) -> str | None:
    """``args[name]`` stripped, or ``None`` when ``args`` is not a mapping or the value is
    missing, not a string, or only white space."""
    value = args.get(name) if isinstance(args, Mapping) else None
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()


def required_text(args: Mapping[str, Any], name: str, what: str, limit: int | None = None) -> str:
    """:func:`text_arg` that must be there: raises
    :class:`~hermes_core.providers.service.provider.ToolRefused` ("'name' is required:
    <what>", or too long past ``limit`` characters)."""
    from hermes_core.providers.service.provider import ToolRefused

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
    from hermes_core.providers.service.provider import ToolRefused

    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        kind = "an integer" if isinstance(default, int) else "a number"
        raise ToolRefused(f"'{name}' must be {kind} between {low:g} and {high:g}")
    return float(value)


def guard_tool(
    fn: Callable[[], str],
    *,
    log: logging.Logger,
    name: str,
    not_found_prefix: bool = False,
) -> str:
    """``fn()``, or a :func:`tool_error` instead of any exception: a tool handler never
    raises. With ``not_found_prefix`` a :class:`ServiceNotFound` reads ``"not found: ..."``.
    Unexpected exceptions are logged as ``"<name> tool failed"`` with their traceback."""
    try:
        return fn()
    except ServiceNotFound as exc:
        return tool_error(f"not found: {exc}" if not_found_prefix else str(exc))
    except ServiceError as exc:
        return tool_error(str(exc))
    except Exception as exc:  # a handler never raises
        log.exception("%s tool failed", name)
        return tool_error(f"{type(exc).__name__}: {exc}")


def stop_background(
    executor: Executor | None, api: Closable | None, *, log: logging.Logger, name: str
) -> None:
    """Cancel ``executor``'s queued work without waiting, then close ``api``; a failing
    close is logged at debug level as ``"<name> client close failed"``, never raised."""
    if executor is not None:
        executor.shutdown(wait=False, cancel_futures=True)
    if api is not None:
        try:
            api.close()
        except Exception:
            log.debug("%s client close failed", name, exc_info=True)


__all__ = [
    "Closable",
    "guard_tool",
    "number_arg",
    "required_text",
    "stop_background",
    "text_arg",
    "tool_error",
    "tool_json",
    "tool_ok",
]
