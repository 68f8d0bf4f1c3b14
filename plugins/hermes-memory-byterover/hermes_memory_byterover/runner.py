"""Run ``brv`` commands: a subprocess per call, with a timeout, behind the kit's circuit breaker.

Each call starts ``brv <args>`` in the user's working directory, in a new process group,
with stdin closed. When the timeout passes, the whole group is killed (SIGKILL): ``brv``
is a Node program that may spawn helpers, and none of them may outlive the call. Output is
read as brv's ``--format json`` lines (one JSON object per line, the last one is the
answer); ``{"success": false}`` answers are errors even when brv exits 0.

Errors are the kit's :class:`~hermes_core.providers.service.ServiceError` family, each
naming the setting that fixes it: a missing binary or a crash or a timeout is
:class:`ServiceUnavailable` (counted by the breaker), a non-JSON answer
:class:`ServiceBadResponse` (counted), a refused request (empty query) :class:`ServiceRequestError`
(not counted).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.providers.service.breaker import CircuitBreaker
from hermes_core.providers.service.errors import (
    ServiceBadResponse,
    ServiceRequestError,
    ServiceUnavailable,
)

log = logging.getLogger(__name__)

SERVICE = "ByteRover"
INSTALL = "npm install -g byterover-cli"
PATH_SETTING = "memory.providers.byterover.brv_path"
_TAIL = 300


@dataclass(frozen=True, slots=True)
class BrvAnswer:
    """The final JSON object brv printed (``data``), every earlier event, and the exit code."""

    data: Mapping[str, Any]
    events: tuple[Mapping[str, Any], ...]
    returncode: int


def resolve(binary: str) -> str | None:
    """The executable ``binary`` names (a path, or a name on PATH); None when missing."""
    if os.sep in binary or (os.altsep and os.altsep in binary):
        path = Path(binary).expanduser()
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(binary)


def _tail(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _TAIL else "..." + text[-_TAIL:]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


class BrvRunner:
    """Runs brv for one provider instance; thread-safe (one subprocess per call)."""

    def __init__(
        self,
        binary: str,
        *,
        breaker: CircuitBreaker,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.binary = binary
        self.breaker = breaker
        self.env = dict(env or {})

    def run(self, args: Sequence[str], *, cwd: Path, timeout: float, setting: str) -> BrvAnswer:
        """Run ``brv *args`` in ``cwd`` for at most ``timeout`` s. ``setting`` names the
        timeout setting a timeout message points at. Raises ServiceError."""
        return self.breaker.call(lambda: self._run(list(args), cwd, timeout, setting))

    def _run(self, args: list[str], cwd: Path, timeout: float, setting: str) -> BrvAnswer:
        command = args[0] if args else ""
        path = resolve(self.binary)
        if path is None:
            raise ServiceUnavailable(
                f"brv CLI not found ({self.binary!r}): install it with `{INSTALL}` (Node.js "
                f"20+) or set {PATH_SETTING}",
                service=SERVICE,
                method=command,
            )
        cwd.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **self.env}
        try:
            proc = subprocess.Popen(
                [path, *args],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise ServiceUnavailable(
                f"cannot start brv ({path}): {exc}; reinstall it (`{INSTALL}`) or fix "
                f"{PATH_SETTING}",
                service=SERVICE,
                method=command,
            ) from exc
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            try:
                proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                log.warning("brv %s: process group did not exit after SIGKILL", command)
            raise ServiceUnavailable(
                f"brv {command} did not finish within {timeout:g} s (killed); raise {setting} "
                "if brv is just slow",
                service=SERVICE,
                method=command,
            ) from None
        return self._answer(
            command, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), proc.returncode
        )

    def _answer(self, command: str, out: str, err: str, code: int) -> BrvAnswer:
        events: list[Mapping[str, Any]] = []
        junk = False
        for line in out.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except ValueError:
                junk = True
                continue
            if isinstance(value, dict):
                events.append(value)
        if not events:
            if code != 0:
                raise ServiceUnavailable(
                    f"brv {command} failed (exit {code}): {_tail(err or out) or 'no output'}",
                    service=SERVICE,
                    method=command,
                )
            what = "malformed output (not JSON)" if junk else "no output"
            raise ServiceBadResponse(
                f"brv {command} printed {what}: {_tail(out)!r}; is {self.binary!r} "
                f"byterover-cli 3.x? (`brv --version`)",
                service=SERVICE,
                method=command,
            )
        final = events[-1]
        data = final.get("data")
        data = data if isinstance(data, Mapping) else {}
        if final.get("success") is False or data.get("status") == "error":
            message = str(data.get("error") or data.get("message") or "unknown error")
            if "required" in message.lower():
                raise ServiceRequestError(
                    f"brv {command} refused the request: {message}",
                    service=SERVICE,
                    method=command,
                )
            raise ServiceUnavailable(
                f"brv {command} failed: {_tail(message)}", service=SERVICE, method=command
            )
        return BrvAnswer(data=data, events=tuple(events[:-1]), returncode=code)


__all__ = ["INSTALL", "SERVICE", "BrvAnswer", "BrvRunner", "resolve"]
