"""A real ``chroma run`` server for the tests: the ``chroma`` command that ships with the
chromadb package, on a free 127.0.0.1 port, waited for by its heartbeat."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from hermes_core.testing.loopback import free_port


def chroma_cli() -> str:
    """The ``chroma`` command of the chromadb package installed next to this Python."""
    beside = Path(sys.executable).with_name("chroma")
    found = str(beside) if beside.is_file() else shutil.which("chroma")
    if not found:
        raise RuntimeError(
            "the `chroma` command of the chromadb package is missing: reinstall chromadb "
            "(`pip install hermes-memory-chroma[test]`)"
        )
    return found


@dataclass
class ChromaServer:
    """A ``chroma run`` process on 127.0.0.1."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def heartbeat(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/api/v2/heartbeat", timeout=2) as reply:
                return int(reply.status) == 200
        except OSError:
            return False

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)


def start_chroma_server(
    data: Path, log: Path, *, port: int | None = None, wait: float = 90.0
) -> ChromaServer:
    """Start ``chroma run --path data`` on ``port`` (a free one by default) and wait for its
    heartbeat."""
    port = port or free_port()
    with log.open("ab") as out:
        process = subprocess.Popen(
            [chroma_cli(), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"},
        )
    server = ChromaServer(f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + wait
    while not server.heartbeat():
        if process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(
                f"`chroma run` did not answer on {server.url}; its log:\n"
                + log.read_text(errors="replace")[-3000:]
            )
        time.sleep(0.2)
    return server


__all__ = ["ChromaServer", "chroma_cli", "free_port", "start_chroma_server"]
