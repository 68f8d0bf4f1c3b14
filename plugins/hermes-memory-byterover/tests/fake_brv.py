"""A fake ``brv`` for the tests: a small Python program put on PATH as ``brv``.

It speaks byterover-cli 3.x's ``--format json`` protocol (one JSON object per line; the
last line is the answer, ``{"command", "data", "success", "timestamp"}``; errors are
``success: false`` with exit code 0, as the real CLI prints them) for ``query``, ``search``,
``curate`` and ``status``, keeps the curated texts in ``.fake-brv-tree.jsonl`` inside the
working directory (brv keeps its tree per project directory), and appends every invocation
(argv, cwd, whether ``BRV_API_KEY`` was set) to a log. A control file switches it to a
failure: ``hang`` (it also starts a grandchild that writes its pid, to prove the whole
process group is killed), ``fail`` (exit 1, message on stderr), ``error_json``,
``malformed`` or ``slow``.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

SCRIPT = r"""
import itertools, json, os, re, subprocess, sys, time
from datetime import datetime, timezone

CONTROL = os.environ.get("FAKE_BRV_CONTROL", "")
LOG = os.environ.get("FAKE_BRV_LOG", "")
TREE = ".fake-brv-tree.jsonl"
WORD = re.compile(r"[a-z0-9]{2,}")
CJK = re.compile(r"[\u3400-\u9fff]")
STOP = {"the", "is", "my", "what", "which", "do", "and", "to", "of", "that", "please", "me",
        "user", "assistant"}


def tokens(text):
    words = {w for w in WORD.findall(text.lower()) if w not in STOP}
    chars = CJK.findall(text)
    return words | {a + b for a, b in itertools.pairwise(chars)}


def emit(command, data, success=True):
    print(json.dumps({"command": command, "data": data, "success": success,
                      "timestamp": datetime.now(timezone.utc).isoformat()},
                     ensure_ascii=False), flush=True)


def parse(argv):
    command, flags, words, rest = None, {}, [], False
    i = 0
    while i < len(argv):
        a = argv[i]
        if rest:
            words.append(a)
        elif a == "--":
            rest = True
        elif a == "--detach":
            flags["detach"] = True
        elif a.startswith("--"):
            flags[a[2:]] = argv[i + 1] if i + 1 < len(argv) else ""
            i += 1
        elif command is None:
            command = a
        else:
            words.append(a)
        i += 1
    return command, flags, " ".join(words)


argv = sys.argv[1:]
control = {}
if CONTROL and os.path.exists(CONTROL):
    with open(CONTROL, encoding="utf-8") as f:
        control = json.load(f)
if LOG:
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps({"argv": argv, "cwd": os.getcwd(),
                            "api_key": bool(os.environ.get("BRV_API_KEY")),
                            "at": time.time()}, ensure_ascii=False) + "\n")

if argv[:1] == ["--version"]:
    print("byterover-cli/3.14.0 linux-x64 node-v20.20.2 (fake)")
    sys.exit(0)

command, flags, text = parse(argv)
if "timeout" in flags and not (flags["timeout"].isdigit() and 10 <= int(flags["timeout"]) <= 3600):
    # byterover-cli 3.14 refuses it like this (oclif flag parsing, exit 2)
    print(" ›   Error: Parsing --timeout", file=sys.stderr)
    print(f" ›   Expected an integer greater than or equal to 10 but received: "
          f"{flags['timeout']}", file=sys.stderr)
    sys.exit(2)
mode = control.get("modes", {}).get(command, control.get("mode", "ok"))
if mode == "hang":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    if control.get("pidfile"):
        with open(control["pidfile"], "a", encoding="utf-8") as f:
            f.write(f"{child.pid}\n")
    time.sleep(300)
if mode == "slow":
    time.sleep(float(control.get("delay", 2)))
if mode == "fail":
    print("Error: the brv daemon crashed (fake)", file=sys.stderr)
    sys.exit(1)
if mode == "error_json":
    emit(command, {"error": "No provider connected. Run \"brv providers connect byterover\"",
                   "status": "error"}, success=False)
    sys.exit(0)
if mode == "malformed":
    print('{"command": "' + str(command) + '", "data": {"result": "trunc')
    sys.exit(0)

entries = []
if os.path.exists(TREE):
    with open(TREE, encoding="utf-8") as f:
        entries = [json.loads(line) for line in f if line.strip()]

if command == "curate":
    if not text.strip():
        emit("curate", {"message": "Either a context argument, file reference, or folder "
                        "reference is required.", "status": "error"}, success=False)
        sys.exit(0)
    if text not in [e["text"] for e in entries]:
        with open(TREE, "a", encoding="utf-8") as f:
            f.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
    if flags.get("detach"):
        emit("curate", {"message": "Context queued for processing", "status": "queued",
                        "taskId": "t-1", "logId": "l-1"})
    else:
        emit("curate", {"event": "completed", "message": "Context curated successfully",
                        "status": "completed", "taskId": "t-1"})
elif command in ("query", "search"):
    if not text.strip():
        emit(command, {"message": "Query argument is required.", "status": "error"},
             success=False)
        sys.exit(0)
    q = tokens(text)
    scored = sorted(((len(q & tokens(e["text"])) / max(1, len(q)), e["text"]) for e in entries),
                    reverse=True)
    hits = [(s, t) for s, t in scored if s > 0][:5]
    if command == "search":
        emit("search", {"results": [{"title": t[:40], "path": f"notes/n{i}.md", "score": s,
                                     "excerpt": t} for i, (s, t) in enumerate(hits)],
                        "totalFound": len(hits), "status": "completed"})
    else:
        result = ("Found in the context tree:\n" + "\n".join(f"- {t}" for _, t in hits)
                  if hits else "")
        if result:
            emit("query", {"content": result, "event": "response", "taskId": "t-2"})
        emit("query", {"event": "completed", "result": result, "status": "completed",
                       "taskId": "t-2", "matchedDocs": len(hits), "tier": 1})
elif command == "status":
    emit("status", {"cliVersion": "3.14.0", "projectRoot": os.getcwd(),
                    "contextTreeStatus": "ready", "entries": len(entries),
                    "authStatus": "not_logged_in"})
else:
    print(f"Error: command {command} not found", file=sys.stderr)
    sys.exit(2)
"""


class FakeBrv:
    """Install the fake into ``bin_dir`` (as ``brv``) and steer it."""

    def __init__(self, bin_dir: Path) -> None:
        bin_dir.mkdir(parents=True, exist_ok=True)
        self.path = bin_dir / "brv"
        self.path.write_text(f"#!{sys.executable}\n{SCRIPT}", encoding="utf-8")
        self.path.chmod(self.path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        self.control = bin_dir / "control.json"
        self.log = bin_dir / "invocations.jsonl"
        self.pidfile = bin_dir / "children.pid"
        self.set()

    def env(self) -> dict[str, str]:
        return {"FAKE_BRV_CONTROL": str(self.control), "FAKE_BRV_LOG": str(self.log)}

    def set(self, mode: str = "ok", *, command: str | None = None, **extra: Any) -> None:
        """Every command (or just ``command``) behaves as ``mode`` from now on."""
        data: dict[str, Any] = {"mode": "ok", "modes": {}, "pidfile": str(self.pidfile)}
        if self.control.exists():
            data.update(json.loads(self.control.read_text(encoding="utf-8")))
        if command is None:
            data["mode"] = mode
            data["modes"] = {}
        else:
            data["modes"][command] = mode
        data.update(extra)
        tmp = self.control.with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, self.control)

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def children(self) -> list[int]:
        if not self.pidfile.exists():
            return []
        return [int(p) for p in self.pidfile.read_text(encoding="utf-8").split()]


__all__ = ["SCRIPT", "FakeBrv"]
