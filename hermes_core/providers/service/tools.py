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
* :func:`memory_tool` and :func:`param` — a tool declared as data on its handler: the
  frame (:meth:`ServiceProvider.register_tools`) builds its :class:`ToolSpec`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

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


@dataclass(frozen=True)
class Param:
    """One tool argument: its JSON schema and whether the tool requires it."""

    schema: Mapping[str, Any]
    required: bool = False


def param(kind: str, *, required: bool = False, **schema: Any) -> Param:
    """A tool argument of JSON type ``kind`` (``"string"``, ``"integer"``…) with more JSON
    schema keywords, e.g. ``param("integer", minimum=1, maximum=50)``; its description is
    its line in the handler's docstring (see :func:`memory_tool`)."""
    return Param({"type": kind, **schema}, required)


@dataclass(frozen=True)
class DeclaredTool:
    """What :func:`memory_tool` records on a handler: the tool's name, description,
    arguments (their schemas with their descriptions) and whether it only reads."""

    name: str
    description: str
    params: Mapping[str, Param]
    read_only: bool

    def parameters(self) -> dict[str, Any]:
        """The tool's JSON-schema ``parameters`` object."""
        body: dict[str, Any] = {
            "type": "object",
            "properties": {key: dict(p.schema) for key, p in self.params.items()},
        }
        required = [key for key, p in self.params.items() if p.required]
        if required:
            body["required"] = required
        return body


F = TypeVar("F", bound=Callable[..., str])
_MARK = "__memory_tool__"


def memory_tool(name: str, /, *, read_only: bool = False, **params: Param) -> Callable[[F], F]:
    """Declare the decorated provider method ``(self, args, ctx) -> str`` as the memory tool
    ``name`` with the arguments ``params`` (in order; see :func:`param`). Its docstring says
    what the model reads: the first paragraph is the tool's description, and a later line
    ``<argument>: <text>`` (continued on the lines below it) describes that argument::

        @memory_tool("example_search", read_only=True, query=param("string", required=True))
        def _tool_search(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
            \"\"\"Search the user's notes.

            query: What to look for.
            \"\"\"

    A :class:`ServiceProvider` offers its declared tools in the order they are defined
    (:meth:`ServiceProvider.register_tools`). Raises TypeError for a handler without a
    docstring."""

    def mark(fn: F) -> F:
        doc = inspect.getdoc(fn)
        if not doc:
            raise TypeError(f"tool {name!r}: its handler needs a docstring (the description)")
        summary, _, rest = doc.partition("\n\n")
        described = _described(rest, params)
        args = {
            key: Param({**p.schema, **described.get(key, {})}, p.required)
            for key, p in params.items()
        }
        setattr(fn, _MARK, DeclaredTool(name, " ".join(summary.split()), args, read_only))
        return fn

    return mark


def _described(text: str, params: Mapping[str, Param]) -> dict[str, dict[str, str]]:
    """``{argument: {"description": text}}`` from the ``<argument>: <text>`` lines of
    ``text`` (a line that names no argument continues the one before)."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        key, sep, rest = line.strip().partition(": ")
        if sep and key in params:
            current = found[key] = [rest]
        elif current is not None and line.strip():
            current.append(line.strip())
    return {key: {"description": " ".join(" ".join(words).split())} for key, words in found.items()}


def declared_tools(cls: type) -> list[tuple[str, DeclaredTool]]:
    """``(method name, declaration)`` of every :func:`memory_tool` of ``cls``, base classes'
    first, each in definition order (a subclass's method replaces the base's)."""
    found: dict[str, DeclaredTool | None] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            if callable(value):
                found[attr] = getattr(value, _MARK, None)
    return [(attr, decl) for attr, decl in found.items() if decl is not None]


__all__ = [
    "DeclaredTool",
    "Param",
    "ToolRefused",
    "declared_tools",
    "memory_tool",
    "number_arg",
    "param",
    "required_text",
    "screened_ok",
    "text_arg",
    "tool_error",
    "tool_json",
    "tool_ok",
]
