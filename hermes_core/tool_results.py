"""The one shape of a tool result, for every tool: the layers', the providers', MCP's.

A tool handler returns a JSON object as a string. Success carries ``"success": true`` and
the tool's own fields; failure carries ``"success": false`` and an ``"error"`` string that
names the fix. Callers decide success by ``success is False`` and nothing else (the MCP
server reports such a result to its client as an error; see :func:`reports_failure`).

* :func:`tool_ok` / :func:`tool_error` — the JSON string a handler returns;
* :func:`ok_payload` / :func:`error_payload` — the same as a dict, for code that adds
  fields before serialising (the layers' ``Outcome`` payloads);
* :func:`tool_json` — any payload as JSON, non-ASCII (Chinese) kept as is;
* :func:`reports_failure` — whether a tool's text is a failure;
* :func:`check_result_shape` — the contract: a failure says ``"success": false`` with a
  string ``error``; an ``error`` never rides on a result that does not say it failed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def tool_json(payload: Mapping[str, Any]) -> str:
    """``payload`` as the JSON string a tool returns (``ensure_ascii=False``; a value JSON
    cannot hold, such as a datetime, as its ``str``)."""
    return json.dumps(dict(payload), ensure_ascii=False, default=str)


def ok_payload(**data: Any) -> dict[str, Any]:
    """``{"success": True, **data}``."""
    return {"success": True, **data}


def error_payload(message: str, **data: Any) -> dict[str, Any]:
    """``{"success": False, "error": message, **data}``."""
    return {"success": False, "error": message, **data}


def tool_ok(**data: Any) -> str:
    """The JSON a tool returns on success: ``{"success": true, ...data}``."""
    return tool_json(ok_payload(**data))


def tool_error(message: str, **data: Any) -> str:
    """The JSON a tool returns on failure: ``{"success": false, "error": message, ...}``."""
    return tool_json(error_payload(message, **data))


def _parsed(result: str | Mapping[str, Any]) -> Any:
    if isinstance(result, Mapping):
        return result
    try:
        return json.loads(result)
    except (ValueError, RecursionError):
        return None


def reports_failure(result: str | Mapping[str, Any]) -> bool:
    """True when ``result`` (a tool's JSON text or payload) is an object with
    ``"success": false``."""
    payload = _parsed(result)
    return isinstance(payload, Mapping) and payload.get("success") is False


def check_result_shape(result: str | Mapping[str, Any], *, tool: str = "tool") -> None:
    """Raise AssertionError unless ``result`` is a JSON object in the one shape: a failure
    (``success`` false) carries a string ``error``; a result with an ``error`` says
    ``"success": false`` (an ``{"error": ...}`` alone reads as a success to MCP clients)."""
    payload = _parsed(result)
    if not isinstance(payload, Mapping):
        raise AssertionError(f"{tool} returned {str(result)[:200]!r}, not a JSON object")
    if "error" in payload and payload.get("success") is not False:
        raise AssertionError(
            f'{tool} returned an error without "success": false (use tool_error): '
            f"{str(result)[:200]}"
        )
    if payload.get("success") is False and not isinstance(payload.get("error"), str):
        raise AssertionError(f"{tool} failed without an 'error' message: {str(result)[:200]}")


__all__ = [
    "check_result_shape",
    "error_payload",
    "ok_payload",
    "reports_failure",
    "tool_error",
    "tool_json",
    "tool_ok",
]
