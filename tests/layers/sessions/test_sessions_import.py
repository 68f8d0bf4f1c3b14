"""``hermes-memory sessions import``: validated before anything is written (line + field), one
transaction per file (a process killed mid-way leaves nothing), re-runs import nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from hermes_core.layers.sessions.db import ALL_USERS, DB_FILE, SessionDB
from hermes_core.layers.sessions.store import open_configured
from hermes_core.layers.sessions.transfer import TransferError, import_groups, read_import


def _invoke(cli: click.Group, *args: str) -> Any:
    return CliRunner().invoke(cli, ["sessions", *args])


def _counts(home: Path) -> tuple[int, int]:
    db = open_configured(home)
    try:
        return db.count_sessions(user_id=None), int(db.read("SELECT COUNT(*) FROM messages")[0][0])
    finally:
        db.close()


def _export_lines(n_sessions: int, per_session: int, *, words: str = "") -> str:
    lines = []
    for s in range(n_sessions):
        lines.append(
            json.dumps(
                {"type": "session", "id": f"imp-{s:04d}", "source": "cli", "started_at": 1.7e9}
            )
        )
        for m in range(per_session):
            role = "user" if m % 2 == 0 else "assistant"
            text = f"第{m}条消息 message {m} of session {s} {words}"
            lines.append(
                json.dumps(
                    {"type": "message", "role": role, "content": text, "timestamp": 1.7e9 + m},
                    ensure_ascii=False,
                )
            )
    return "\n".join(lines) + "\n"


def test_invalid_values_are_listed_with_line_and_field_and_nothing_is_written(
    cli: click.Group, home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    rows = [
        {"type": "session", "id": "ok-1", "started_at": "yesterday"},
        {"type": "message", "role": "user", "content": "好的 fine"},
        {"type": "message", "role": "user", "content": "x", "timestamp": "NaN"},
        {"type": "message", "role": "robot", "content": "who"},
        {"type": "message", "role": "tool", "content": "r", "token_count": -1},
        {"type": "message", "role": "assistant", "content": 42, "tool_calls": "call it"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    out = _invoke(cli, "import", str(path))
    assert out.exit_code == 1 and "Traceback" not in out.output
    for expected in (
        "bad.jsonl:1: field 'started_at'",
        "bad.jsonl:3: field 'timestamp'",
        "bad.jsonl:4: field 'role'",
        "bad.jsonl:5: field 'token_count'",
        "bad.jsonl:6: field 'content'",
        "bad.jsonl:6: field 'tool_calls'",
        "nothing was imported",
    ):
        assert expected in out.output
    assert not (home / DB_FILE).exists() or _counts(home) == (0, 0)


def test_nan_in_a_json_array_is_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(
        '[\n  {"role": "user", "content": "你好"},\n\n  {"role": "assistant",\n'
        '   "content": "hi", "timestamp": NaN}\n]\n',
        encoding="utf-8",
    )
    with pytest.raises(TransferError, match=r"chat\.json:4: field 'timestamp'"):
        read_import(path)
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(
        '{"model": "x",\n "messages": [\n  {"role": "user", "content": "hi"},\n'
        '  {"role": "user", "content": "again", "name": 5}\n]}',
        encoding="utf-8",
    )
    with pytest.raises(TransferError, match=r"wrapped\.json:4: field 'name'"):
        read_import(wrapped)


@pytest.mark.parametrize(
    "text",
    [
        "\ufeff",  # only a BOM
        '{"type": "session", "id": "cut"}\n',  # a session line without messages
        '[{"role": "user", "content": "hi"}, "just a string"]',
        "[" * 5000 + "]" * 5000,  # nested too deeply for JSON
        '{"type": "message", "role": "user", "content": "orphan 孤儿"}\n'.replace(
            '"type": "message", ', '"type": "message", "x": 1, '
        )
        + "{oops\n",
    ],
)
def test_bad_files_are_clear_errors_never_tracebacks(
    cli: click.Group, home: Path, tmp_path: Path, text: str
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(text, encoding="utf-8")
    out = _invoke(cli, "import", str(path))
    assert out.exit_code == 1, out.output
    assert "Traceback" not in out.output and "Error:" in out.output
    assert not (home / DB_FILE).exists() or _counts(home) == (0, 0)


def test_a_file_is_one_transaction(home: Path, tmp_path: Path) -> None:
    """A failure while the second session is written rolls the first one back too."""
    path = tmp_path / "two.jsonl"
    path.write_text(_export_lines(2, 4, words="事务 transaction"), encoding="utf-8")
    groups = read_import(path)
    calls: list[int] = []

    def interrupted(n: int) -> None:
        calls.append(n)
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C while the second session is being written

    db = open_configured(home)
    with pytest.raises(KeyboardInterrupt):
        import_groups(db, groups, progress=interrupted)
    assert db.count_sessions(user_id=ALL_USERS) == 0
    assert db.read("SELECT COUNT(*) FROM messages")[0][0] == 0
    assert [r.status for r in import_groups(db, groups)] == ["imported", "imported"]
    db.close()
    assert _counts(home) == (2, 8)


def test_rerun_imports_nothing_and_reports_it(cli: click.Group, home: Path, tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text(_export_lines(3, 6, words="重复 rerun"), encoding="utf-8")
    first = json.loads(_invoke(cli, "import", str(path), "--json").output)
    assert [r["status"] for r in first] == ["imported"] * 3
    second = _invoke(cli, "import", str(path))
    assert second.exit_code == 0 and second.output.count("already imported") == 3
    assert _counts(home) == (3, 18)
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "无编号 no id"}]), encoding="utf-8")
    a = json.loads(_invoke(cli, "import", str(chat), "--json").output)
    b = json.loads(_invoke(cli, "import", str(chat), "--json").output)
    assert a[0]["status"] == "imported" and b[0]["status"] == "already imported"
    assert a[0]["session_id"] == b[0]["session_id"]
    assert _counts(home) == (4, 19)


@pytest.mark.sqlite_only  # watches the WAL file grow to kill the import mid-transaction
def test_killed_mid_import_leaves_nothing(home: Path, tmp_path: Path) -> None:
    """A real ``hermes-memory sessions import`` process, SIGKILLed while it is writing."""
    path = tmp_path / "big.jsonl"
    path.write_text(_export_lines(250, 80, words="长文本 long text " * 8), encoding="utf-8")
    SessionDB.open(home).close()  # the archive exists before the import starts
    wal = Path(str(home / DB_FILE) + "-wal")
    env = {**os.environ, "HERMES_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes_core", "sessions", "import", str(path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    start_size = wal.stat().st_size if wal.exists() else 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if wal.exists() and wal.stat().st_size > start_size + 1_500_000:
            break  # pages of the open transaction are spilling into the WAL
        time.sleep(0.005)
    assert proc.poll() is None, "the import finished before it could be killed; grow the file"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert _counts(home) == (0, 0)
    # the archive is healthy afterwards and a complete run imports everything once
    done = subprocess.run(
        [sys.executable, "-m", "hermes_core", "sessions", "import", str(path), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert _counts(home) == (250, 20_000)
