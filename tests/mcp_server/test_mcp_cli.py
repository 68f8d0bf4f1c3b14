"""`hermes-memory mcp serve` refuses what it cannot do with a message that names the fix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mcp_helpers import hermes, server_env


def test_binding_beyond_loopback_warns_loudly_and_a_failed_bind_names_the_fix(
    mcp_home: Path,
) -> None:
    # 192.0.2.1 (TEST-NET-1) is never a local address: the bind fails, nothing listens
    result = hermes(mcp_home, "mcp", "serve", "--transport", "http", "--host", "192.0.2.1")
    assert result.returncode != 0
    assert "WARNING" in result.stderr and "reachable from other machines" in result.stderr
    assert "cannot listen on 192.0.2.1" in result.stderr and "--port" in result.stderr
    assert "no tokens yet" in result.stderr and "token add" in result.stderr


def test_user_flag_is_for_stdio(mcp_home: Path) -> None:
    result = hermes(mcp_home, "mcp", "serve", "--transport", "http", "--user", "alice")
    assert result.returncode == 2 and "bearer token" in result.stderr


def test_without_the_sdk_the_message_names_the_extra(mcp_home: Path) -> None:
    code = (
        "import sys; sys.modules['mcp'] = None; "
        "from hermes_core.cli.main import main; main(['mcp', 'serve'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=server_env(mcp_home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    assert "pip install 'hermes-memory-core[mcp]'" in result.stderr
    assert "Traceback" not in result.stderr
