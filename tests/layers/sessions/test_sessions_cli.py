"""``hermes-memory sessions ...`` through click's CliRunner on a tiny group calling register()."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from hermes_core.layers.sessions.store import open_configured
from hermes_core.scope import ALL_USERS


@pytest.fixture
def filled(home: Path, add_session: Any) -> Path:
    db = open_configured(home)
    add_session(
        db,
        "s-old",
        [("user", "archive the invoices"), ("assistant", "done, 12 invoices archived")],
        started_at=time.time() - 200 * 86400,
        title="Invoices",
    )
    call = {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
    db.create_session("s-new", source="telegram", title="部署 服务")
    db.append_messages(
        "s-new",
        [
            {"role": "user", "content": "部署新的服务到生产环境"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "name": "terminal", "content": "deployed"},
            {"role": "assistant", "content": "已部署 deployed", "finish_reason": "stop"},
        ],
        user_id=ALL_USERS,
    )
    db.record_system_prompt("s-new", "You are Hermes.")
    db.close()
    return home


def run(cli: click.Group, *args: str, input: str | None = None) -> Any:
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    return result


def test_list_table_and_json(cli: click.Group, filled: Path) -> None:
    out = run(cli, "sessions", "list")
    assert out.exit_code == 0 and "s-new" in out.output and "Invoices" in out.output
    rows = json.loads(run(cli, "sessions", "list", "--json").output)
    assert [r["id"] for r in rows] == ["s-new", "s-old"]
    only = json.loads(run(cli, "sessions", "list", "--json", "--source", "telegram").output)
    assert [r["id"] for r in only] == ["s-new"]


def test_show(cli: click.Group, filled: Path) -> None:
    out = run(cli, "sessions", "show", "部署 服务")
    assert out.exit_code == 0 and "部署新的服务" in out.output and "terminal" in out.output
    data = json.loads(run(cli, "sessions", "show", "s-new", "--json").output)
    assert data["session"]["system_prompt"] == "You are Hermes."
    assert len(data["messages"]) == 4
    missing = CliRunner().invoke(cli, ["sessions", "show", "nope"])
    assert missing.exit_code != 0 and "hermes-memory sessions list" in missing.output


def test_search(cli: click.Group, filled: Path) -> None:
    out = run(cli, "sessions", "search", "部署")
    assert out.exit_code == 0 and "s-new" in out.output
    data = json.loads(run(cli, "sessions", "search", "invoice", "--json").output)
    assert [r["session_id"] for r in data["results"]] == ["s-old"]
    none = run(cli, "sessions", "search", "zebra")
    assert "No matching sessions" in none.output
    data = json.loads(
        run(cli, "sessions", "search", "deployed", "--tool", "terminal", "--json").output
    )
    assert [r["session_id"] for r in data["results"]] == ["s-new"]


def test_export_import_round_trip(
    cli: click.Group, filled: Path, tmp_path: Path, homes: Any
) -> None:
    dump = tmp_path / "s.jsonl"
    assert (
        run(cli, "sessions", "export", "s-new", "--format", "jsonl", "-o", str(dump)).exit_code == 0
    )
    md = run(cli, "sessions", "export", "s-new", "--format", "md").output
    assert md.startswith("# 部署 服务") and "called `terminal`" in md
    original = open_configured(filled)
    before = original.get_messages_as_conversation("s-new")
    before_messages = original.get_messages("s-new")
    rec = original.get_session("s-new", user_id=ALL_USERS)
    original.close()

    other = homes.new()  # a second, empty archive on the same backend
    report = json.loads(run(cli, "sessions", "import", str(dump), "--json").output)
    assert report == [
        {"session_id": "s-new", "messages": 4, "renamed_from": None, "status": "imported"}
    ]
    copy = open_configured(other)
    assert copy.get_messages_as_conversation("s-new") == before
    new_rec = copy.get_session("s-new", user_id=ALL_USERS)
    assert new_rec is not None and rec is not None
    assert (new_rec.title, new_rec.source, new_rec.system_prompt, new_rec.started_at) == (
        rec.title,
        rec.source,
        rec.system_prompt,
        rec.started_at,
    )
    assert [m.timestamp for m in copy.get_messages("s-new")] == [
        m.timestamp for m in before_messages
    ]
    copy.close()
    # importing again creates no second copy
    again = json.loads(run(cli, "sessions", "import", str(dump), "--json").output)
    assert again[0]["status"] == "already imported" and again[0]["session_id"] == "s-new"
    assert json.loads(run(cli, "sessions", "stats", "--json").output)["sessions"] == 1
    # a different session under a taken id does not clobber: a new id is used
    changed = tmp_path / "changed.jsonl"
    changed.write_text(dump.read_text(encoding="utf-8").replace("已部署", "未部署"), "utf-8")
    other_copy = json.loads(run(cli, "sessions", "import", str(changed), "--json").output)
    assert other_copy[0]["renamed_from"] == "s-new" and other_copy[0]["session_id"] != "s-new"
    # into the archive it was exported from: the same transcript is already there
    homes.use(filled)
    home_again = json.loads(run(cli, "sessions", "import", str(dump), "--json").output)
    assert home_again[0]["status"] == "already imported"


def test_import_openai_messages(cli: click.Group, home: Path, tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "What is the capital of France?"},
                    {"role": "assistant", "content": "Paris."},
                ]
            }
        ),
        encoding="utf-8",
    )
    out = run(cli, "sessions", "import", str(path), "--title", "Geography", "--json")
    sid = json.loads(out.output)[0]["session_id"]
    db = open_configured(home)
    assert [m["content"] for m in db.get_messages_as_conversation(sid)][1:] == [
        "What is the capital of France?",
        "Paris.",
    ]
    assert db.get_session(sid, user_id=ALL_USERS).title == "Geography"  # type: ignore[union-attr]
    db.close()
    data = json.loads(run(cli, "sessions", "search", "capital France", "--json").output)
    assert data["results"][0]["session_id"] == sid


def test_import_rejects_bad_files(cli: click.Group, home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "ok"}\nnot json\n', encoding="utf-8")
    out = CliRunner().invoke(cli, ["sessions", "import", str(bad)])
    assert out.exit_code != 0 and "bad.jsonl:2" in out.output
    norole = tmp_path / "norole.json"
    norole.write_text('[{"content": "x"}]', encoding="utf-8")
    out = CliRunner().invoke(cli, ["sessions", "import", str(norole)])
    assert out.exit_code != 0 and "role" in out.output
    db = open_configured(home)
    assert db.count_sessions(user_id=ALL_USERS) == 0  # nothing half-imported
    db.close()


def test_prune(cli: click.Group, filled: Path) -> None:
    dry = json.loads(
        run(cli, "sessions", "prune", "--older-than", "90d", "--dry-run", "--json").output
    )
    assert dry["session_ids"] == ["s-old"] and dry["messages_deleted"] == 0
    out = run(cli, "sessions", "prune", "--older-than", "90d", "--yes")
    assert out.exit_code == 0 and "deleted 1 session" in out.output
    rows = json.loads(run(cli, "sessions", "list", "--json").output)
    assert [r["id"] for r in rows] == ["s-new"]
    bad = CliRunner().invoke(cli, ["sessions", "prune", "--older-than", "soon"])
    assert bad.exit_code != 0 and "90d" in bad.output


@pytest.mark.sqlite_only  # the SQLite file itself
def test_stats(cli: click.Group, filled: Path) -> None:
    db = open_configured(filled)
    db.write(
        lambda c: c.execute(
            "CREATE TABLE compression_events (id INTEGER PRIMARY KEY, session_id TEXT, "
            "created_at REAL, tokens_before INT, tokens_after INT, summary_tokens INT, "
            "fallback_used INT, aborted INT, error TEXT)"
        )
    )
    db.write(
        lambda c: c.execute(
            "INSERT INTO compression_events(session_id, created_at, tokens_before, tokens_after,"
            " summary_tokens, fallback_used, aborted) VALUES ('s-new', 1, 5000, 1200, 300, 1, 0)"
        )
    )
    db.close()
    data = json.loads(run(cli, "sessions", "stats", "--json").output)
    assert data["sessions"] == 2 and data["messages"] == 6 and data["tool_calls"] == 1
    assert data["compression"]["events"] == 1 and data["compression"]["fallback_used"] == 1
    text = run(cli, "sessions", "stats").output
    assert "compressions" in text and "5000 → 1200" in text


def test_reindex(cli: click.Group, filled: Path) -> None:
    out = run(cli, "sessions", "reindex")
    assert out.exit_code == 0 and "indexed 6 messages" in out.output
    data = json.loads(run(cli, "sessions", "search", "invoices", "--json").output)
    assert data["count"] == 1


def test_title(cli: click.Group, filled: Path) -> None:
    out = run(cli, "sessions", "title", "s-new", "  Invoices\u200b ")
    assert out.exit_code == 0 and "Invoices #2" in out.output  # s-old already has it
    bad = CliRunner().invoke(cli, ["sessions", "title", "s-new", "\u200b"])
    assert bad.exit_code != 0 and "printable" in bad.output


def test_show_and_search_print_stored_text_not_rich_markup(
    cli: click.Group, home: Path, add_session: Any
) -> None:
    """Transcripts are full of brackets ("[/INST]", "[bold]"); rich must not parse them."""
    db = open_configured(home)
    call = {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
    db.create_session("s-mark", source="cli", title="[red]标题")
    db.append_messages(
        "s-mark",
        [
            {"role": "user", "content": "[INST] 你好 [/INST] keep [bold]this[/bold] literal"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
        ],
        user_id=ALL_USERS,
    )
    db.close()
    out = run(cli, "sessions", "show", "s-mark")
    assert out.exit_code == 0, out.output
    assert "[/INST]" in out.output and "[bold]this[/bold]" in out.output
    assert "[called: terminal]" in out.output and "[red]标题" in out.output
    found = run(cli, "sessions", "search", "literal")
    assert found.exit_code == 0 and "[/INST]" in found.output
    listed = run(cli, "sessions", "list")
    assert "[red]标题" in listed.output


def test_import_refuses_empty_lists_and_unknown_roles(
    cli: click.Group, home: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    out = CliRunner().invoke(cli, ["sessions", "import", str(empty)])
    assert out.exit_code != 0 and "nothing to import" in out.output
    wizard = tmp_path / "wizard.json"
    wizard.write_text(
        json.dumps([{"role": "user", "content": "你好"}, {"role": "wizard", "content": "x"}]),
        encoding="utf-8",
    )
    out = CliRunner().invoke(cli, ["sessions", "import", str(wizard)])
    assert out.exit_code != 0 and "'wizard'" in out.output and "assistant" in out.output
    db = open_configured(home)
    assert db.count_sessions(user_id=ALL_USERS) == 0  # no empty or half-valid session left behind
    db.close()


def test_prune_json_without_yes_deletes_nothing(cli: click.Group, filled: Path) -> None:
    out = CliRunner().invoke(cli, ["sessions", "prune", "--older-than", "90d", "--json"])
    assert out.exit_code != 0 and "--yes" in out.output and "--dry-run" in out.output
    rows = json.loads(run(cli, "sessions", "list", "--json").output)
    assert sorted(r["id"] for r in rows) == ["s-new", "s-old"]
    done = json.loads(
        run(cli, "sessions", "prune", "--older-than", "90d", "--json", "--yes").output
    )
    assert done["session_ids"] == ["s-old"] and done["messages_deleted"] == 2


def test_search_json_error_exits_nonzero(cli: click.Group, filled: Path) -> None:
    out = CliRunner().invoke(cli, ["sessions", "search", "部署", "--after", "明天", "--json"])
    assert out.exit_code == 1
    data = json.loads(out.output)
    assert data["success"] is False and "ISO date" in data["error"]


@pytest.mark.sqlite_only  # the SQLite file itself
def test_corrupt_state_db_is_a_clear_error_and_kept(cli: click.Group, home: Path) -> None:
    (home / "state.db").write_text("这不是数据库 not a database " * 50, encoding="utf-8")
    for args in (["list"], ["stats"], ["search", "部署"]):
        out = CliRunner().invoke(cli, ["sessions", *args])
        assert out.exit_code == 1 and "Traceback" not in out.output
        assert "not a readable SQLite database" in out.output and "state.db.bad" in out.output
    assert (home / "state.db").read_text(encoding="utf-8").startswith("这不是数据库")


def test_import_stores_object_tool_arguments_as_json_strings(
    cli: click.Group, home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "ollama.json"
    call = {"id": "c1", "function": {"name": "read_file", "arguments": {"path": "/etc/主机"}}}
    path.write_text(
        json.dumps(
            [
                {"role": "user", "content": "读一下主机文件"},
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "127.0.0.1 localhost"},
            ],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    sid = json.loads(run(cli, "sessions", "import", str(path), "--json").output)[0]["session_id"]
    db = open_configured(home)
    stored = db.get_messages_as_conversation(sid)[1]["tool_calls"][0]["function"]["arguments"]
    db.close()
    assert isinstance(stored, str) and json.loads(stored) == {"path": "/etc/主机"}
    found = json.loads(
        run(cli, "sessions", "search", "主机", "--tool", "read_file", "--json").output
    )
    assert [r["session_id"] for r in found["results"]] == [sid]


@pytest.mark.sqlite_only  # the SQLite file itself
def test_a_newer_archive_is_listed_but_never_written(cli: click.Group, filled: Path) -> None:
    import sqlite3

    from hermes_core.layers.sessions.db import SCHEMA_VERSION

    with sqlite3.connect(filled / "state.db") as conn:
        conn.execute("UPDATE schema_version SET version=?", (SCHEMA_VERSION + 5,))
    rows = json.loads(run(cli, "sessions", "list", "--json").output)
    assert sorted(r["id"] for r in rows) == ["s-new", "s-old"]
    stats = json.loads(run(cli, "sessions", "stats", "--json").output)
    assert "newer" in stats["read_only"]
    for args in (["title", "s-new", "新标题"], ["prune", "--older-than", "1d", "--yes"]):
        out = CliRunner().invoke(cli, ["sessions", *args])
        assert out.exit_code == 1 and "read-only" in out.output and "Traceback" not in out.output
    db = open_configured(filled)
    assert db.get_session("s-new", user_id=ALL_USERS).title == "部署 服务"  # type: ignore[union-attr]
    db.close()


def test_prune_by_source_keeps_other_sources(
    cli: click.Group, filled: Path, add_session: Any
) -> None:
    db = open_configured(filled)
    old = time.time() - 300 * 86400
    add_session(db, "s-cron", [("user", "nightly 备份 job")], source="cron", started_at=old)
    db.close()
    dry = json.loads(
        run(
            cli,
            "sessions",
            "prune",
            "--older-than",
            "90d",
            "--source",
            "cron",
            "--dry-run",
            "--json",
        ).output
    )
    assert dry["session_ids"] == ["s-cron"]  # s-old (source cli) is as old but kept
    out = run(cli, "sessions", "prune", "--older-than", "90d", "--source", "cron", "--yes")
    assert "deleted 1 session" in out.output
    rows = {r["id"] for r in json.loads(run(cli, "sessions", "list", "--json").output)}
    assert rows == {"s-old", "s-new"}


def test_export_all_round_trips_through_import(
    cli: click.Group, filled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "all.jsonl"
    result = run(cli, "sessions", "export", "--all", "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "archive the invoices" in text and "部署新的服务到生产环境" in text
    md = run(cli, "sessions", "export", "--all", "--format", "md").output
    assert "Invoices" in md and "部署" in md and "---" in md
    only = run(cli, "sessions", "export", "--all", "--source", "telegram").output
    assert "部署新的服务" in only and "invoices" not in only
    other_home = tmp_path / "other-home"
    monkeypatch.setenv("HERMES_HOME", str(other_home))
    imported = run(cli, "sessions", "import", str(out), "--json")
    assert imported.exit_code == 0, imported.output
    assert len(json.loads(imported.output)) == 2
    assert CliRunner().invoke(cli, ["sessions", "export"]).exit_code != 0  # SESSION or --all
    empty = CliRunner().invoke(cli, ["sessions", "export", "--all", "--user", "nobody"])
    assert empty.exit_code == 0 and "no sessions to export" in empty.output


def test_set_title_on_a_missing_session_reports_failure(home: Path) -> None:
    db = open_configured(home)
    try:
        assert db.set_title("no-such-session", "标题") is None
        assert db.get_session("no-such-session", user_id=ALL_USERS) is None
        db.create_session("s1", source="cli")
        assert db.set_title("s1", "部署 notes") == "部署 notes"
    finally:
        db.close()
