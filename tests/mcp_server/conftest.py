"""Fixtures of the MCP server tests (helpers live in ``mcp_helpers``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp_helpers import HttpServer


@pytest.fixture
def mcp_home(tmp_path: Path) -> Path:
    home = tmp_path / "hermes-home"
    home.mkdir(mode=0o700)
    return home


@pytest.fixture
def http_server(mcp_home: Path) -> Iterator[HttpServer]:
    server = HttpServer(mcp_home)
    yield server
    server.stop()
