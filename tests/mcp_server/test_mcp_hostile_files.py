"""A real `hermes-memory mcp serve --transport http` on 127.0.0.1 whose files turn hostile (a FIFO
or a huge sparse file in place of the token file, a FIFO MEMORY.md of one user): it keeps
answering every other request, recovers when the file is restored, and stops on SIGTERM
within 2 s while the hostile file is still there. The token commands and the stdio server
refuse a hostile token file or config with a message naming it, instead of hanging."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from mcp_helpers import SERVE, HttpServer, hermes, server_env
from test_mcp_http import ACCEPT, INIT

from hermes_core.mcp.tokens import TOKENS_FILE, TokenStore


def _status(url: str, token: str) -> int:
    with httpx.Client(timeout=30) as raw:
        answer = raw.post(
            url, content=json.dumps(INIT), headers={**ACCEPT, "authorization": f"Bearer {token}"}
        )
        return answer.status_code


def _stops_on_sigterm_within_2s(server: HttpServer) -> None:
    server.proc.send_signal(signal.SIGTERM)
    stopped = time.monotonic()
    server.proc.wait(timeout=10)
    assert time.monotonic() - stopped < 2.0, server.log


def _make_fifo(path: Path) -> None:
    aside = path.with_name(path.name + ".good")
    os.replace(path, aside)
    os.mkfifo(path)


def _restore(path: Path) -> None:
    path.unlink()
    os.replace(path.with_name(path.name + ".good"), path)


@pytest.mark.parametrize("hostile", ["fifo", "huge"])
def test_http_server_survives_a_hostile_token_file_and_stops_on_sigterm(
    mcp_home: Path, hostile: str
) -> None:
    store = TokenStore(mcp_home)
    alice, bob = store.add("alice").token, store.add("bob").token
    server = HttpServer(mcp_home)
    try:
        assert _status(server.url, alice) == 200
        path = mcp_home / TOKENS_FILE
        if hostile == "fifo":
            _make_fifo(path)
        else:
            os.replace(path, path.with_name(path.name + ".good"))
            with open(path, "wb") as handle:
                handle.truncate(3 * 1024**3)  # 3 GB, sparse: instant to make, slow to read
        started = time.monotonic()
        for token in (alice, bob, alice):  # every request is answered, and quickly
            assert _status(server.url, token) == 200
        assert time.monotonic() - started < 20
        assert _status(server.url, "hmcp_000000000000_" + "x" * 30) == 401
        _restore(path)
        assert _status(server.url, bob) == 200  # the restored file is read again
        if hostile == "fifo":
            _make_fifo(path)
        _stops_on_sigterm_within_2s(server)
    finally:
        server.stop()


def test_http_server_keeps_serving_others_when_one_users_memory_file_is_a_fifo(
    mcp_home: Path,
) -> None:
    store = TokenStore(mcp_home)
    alice, bob = store.add("alice").token, store.add("bob").token
    server = HttpServer(mcp_home)
    try:
        users = mcp_home / "memories" / "users"
        users.mkdir(parents=True, exist_ok=True)
        from hermes_core.scope import user_key

        alice_dir = users / user_key("alice")
        alice_dir.mkdir(exist_ok=True)
        os.mkfifo(alice_dir / "MEMORY.md")
        assert _status(server.url, alice) in (200, 500)
        assert _status(server.url, bob) == 200
        _stops_on_sigterm_within_2s(server)
    finally:
        server.stop()


def test_token_commands_refuse_a_fifo_token_file_naming_it(mcp_home: Path) -> None:
    os.mkfifo(mcp_home / TOKENS_FILE)
    for args in (("mcp", "token", "list"), ("mcp", "token", "list", "--json")):
        result = hermes(mcp_home, *args)  # a hang would raise TimeoutExpired
        assert result.returncode != 0
        assert TOKENS_FILE in result.stderr and "FIFO" in result.stderr


def test_stdio_server_refuses_a_fifo_config_naming_it(mcp_home: Path) -> None:
    os.mkfifo(mcp_home / "config.yaml")
    result = subprocess.run(
        [*SERVE],
        env=server_env(mcp_home),
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert "config.yaml" in result.stderr and "FIFO" in result.stderr
