"""YAML read without alias bombs: the one loader for every YAML file hermes-core reads.

Contract: :func:`safe_yaml_load` is ``yaml.safe_load`` that refuses (ValueError) a document
whose node graph, with every alias (``*name``) expanded at each use, holds more than
``max_nodes`` values, and any recursive alias, before constructing anything; so a few
hundred bytes of ``&a [*b, *b, …]`` can never cost minutes or print hundreds of MB.
:func:`read_yaml_file` reads the file through :func:`hermes_core.fsutil.read_regular_text`
(regular file, size cap) first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from hermes_core.fsutil import read_regular_text

MAX_YAML_NODES = 100_000
"""Nodes a YAML document may expand to, aliases counted at every use (alias bombs)."""


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """How many nodes ``root`` stands for once every alias is expanded; stops (returning a
    number over ``limit``) as soon as the count passes it. Shared nodes are sized once, so
    the work is linear in the number of distinct nodes. A node that contains itself counts
    as over the limit."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    active: set[int] = set()
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes and not children_done:
            continue
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        if children_done:
            active.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[key] > limit:
                return sizes[key]
            continue
        if key in active:
            return limit + 1  # recursive alias
        active.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in active:
                return limit + 1
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes.get(id(root), 0)


def safe_yaml_load(text: str, *, max_nodes: int = MAX_YAML_NODES) -> Any:
    """``yaml.safe_load`` that refuses alias bombs and recursive aliases (ValueError) before
    constructing anything: the composed node graph is sized with every alias expanded."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded_size(node, max_nodes)
        if size > max_nodes:
            raise ValueError(
                f"the document expands to more than {max_nodes:,} values through YAML aliases "
                "(&anchor / *alias); remove the aliases or write the values out"
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def read_yaml_file(path: Path, *, max_bytes: int, what: str = "YAML file") -> Any:
    """The parsed YAML of ``path``: a regular file of at most ``max_bytes`` (else
    :class:`hermes_core.fsutil.UnsafeFileError`), no alias bomb (else ValueError), valid
    YAML (else ``yaml.YAMLError``)."""
    return safe_yaml_load(read_regular_text(path, max_bytes=max_bytes, what=what))


__all__ = ["MAX_YAML_NODES", "read_yaml_file", "safe_yaml_load"]
