"""Helpers of the MCP server tests (imported as ``mcp_helpers``): a real ``hermes-memory mcp serve``
subprocess (stdio, or HTTP on 127.0.0.1 with an ephemeral port) driven by the SDK's own client.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

START_TIMEOUT = 90.0
SERVE = (sys.executable, "-m", "hermes_core", "mcp", "serve")


def server_env(home: Path, extra_path: Path | None = None) -> dict[str, str]:
    """The environment of a server subprocess: only what it needs, HERMES_HOME set."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("HERMES_") and key not in ("PYTHONPATH",)
    }
    env.update(
        {
            "HERMES_HOME": str(home),
            "MEM0_TELEMETRY": "False",
            "PYTHONIOENCODING": "utf-8",
        }
    )
    if extra_path is not None:
        env["PYTHONPATH"] = str(extra_path)
    return env


def stdio_params(home: Path, *args: str, extra_path: Path | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "hermes_core", "mcp", "serve", *args],
        env=server_env(home, extra_path),
    )


def tool_json(result: Any) -> dict[str, Any]:
    """The JSON object a tool answered (its one text block)."""
    (block,) = result.content
    payload = json.loads(block.text)
    assert isinstance(payload, dict)
    return payload


def sessions_rows(home: Path) -> list[dict[str, Any]]:
    """Every archive row (id, source, user_id, end_reason), read straight from state.db."""
    db = sqlite3.connect(home / "state.db")
    try:
        db.row_factory = sqlite3.Row
        rows = db.execute("SELECT id, source, user_id, end_reason FROM sessions").fetchall()
        return [dict(row) for row in rows]
    finally:
        db.close()


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_core", *args],
        env=server_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def add_token(home: Path, user: str) -> str:
    result = hermes(home, "mcp", "token", "add", "--user", user)
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip().splitlines()[-1]
    assert token.startswith("hmcp_")
    return token


class HttpServer:
    """``hermes-memory mcp serve --transport http --port 0`` as a subprocess; ``url`` once it
    listens."""

    def __init__(self, home: Path, *args: str, extra_path: Path | None = None) -> None:
        self.home = home
        self.proc = subprocess.Popen(
            [*SERVE, "--transport", "http", "--port", "0", *args],
            env={**server_env(home, extra_path), "COLUMNS": "300"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._found = threading.Event()
        self.url = ""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._found.wait(START_TIMEOUT):
            self.stop()
            raise AssertionError("server did not start:\n" + "".join(self.lines))

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            match = re.search(r"serving (http://\S+/mcp)", line)
            if match and not self.url:
                self.url = match.group(1)
                self._found.set()

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode


@asynccontextmanager
async def http_client(url: str, token: str | None, **kwargs: Any) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as transport,
        Client(streamable_http_client(url, http_client=transport), **kwargs) as client,
    ):
        yield client


def wait_for(predicate: Any, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return bool(predicate())
