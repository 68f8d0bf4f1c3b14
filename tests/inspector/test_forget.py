"""Forget a subject / a user: preview, delete, proof; no byte of the phrase left in the home."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspector_kit import PHRASE_EN, PHRASE_ZH, raw_hits

from hermes_core import MemoryHost
from hermes_core.errors import HermesError
from hermes_core.inspector import forget
from hermes_core.layers.sessions.store import open_configured
from hermes_core.scope import ensure_scope_dir


@pytest.mark.parametrize("phrase", [PHRASE_EN, PHRASE_ZH])
def test_forget_a_subject_leaves_no_trace(seeded: Path, backend: str, phrase: str) -> None:
    home = seeded
    with MemoryHost.open(home, load_entrypoints=False) as host:
        preview = forget.find_subject(host, "alice", phrase.lower())
        assert preview.counts["memory"] == 1
        assert preview.counts["archive"] >= 1  # the question (and, in English, the reply)
        assert preview.counts["trace"] == 1
        assert "no memory provider" in preview.provider_note
        # a preview changes nothing
        assert forget.find_subject(host, "alice", phrase).total == preview.total
        # bob's data is not alice's
        assert forget.find_subject(host, "bob", phrase).total == 0
        report = forget.forget_subject(host, "alice", phrase)
    assert report.removed.total == preview.total
    assert report.proof.clean, report.proof.to_dict()
    assert report.proof.raw.scanned > 0
    assert raw_hits(home, phrase) == []
    # what was not about the subject stays
    with MemoryHost.open(home, load_entrypoints=False) as host:
        assert forget.find_subject(host, "alice", "prefers tea").counts["memory"] == 1
        assert forget.find_subject(host, "alice", "buy milk").counts["archive"] == 2
        assert forget.find_subject(host, "bob", "围棋").counts["memory"] == 1
    store = open_configured(home)
    try:  # the full-text index no longer finds it either
        assert store.fts_count(phrase.split()[0]) == 0 or phrase == PHRASE_ZH
    finally:
        store.close()


def test_the_raw_scan_sees_what_the_stores_do_not(seeded: Path, backend: str) -> None:
    stray = seeded / "notes.txt"
    stray.write_text(f"left behind: {PHRASE_EN}\n")
    with MemoryHost.open(seeded, load_entrypoints=False) as host:
        report = forget.forget_subject(host, "alice", PHRASE_EN)
    assert not report.proof.clean
    assert report.proof.raw.found == ["notes.txt"]


def test_drift_backups_and_staged_writes_are_found_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "h"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    (home / "config.yaml").write_text("memory:\n  write_approval: true\n")
    with MemoryHost.open(home, load_entrypoints=False) as host, host.session(user_id="u") as s:
        s.call_tool(
            "memory", {"action": "add", "target": "memory", "content": f"{PHRASE_EN} is secret"}
        )
        matches = forget.find_subject(host, "u", PHRASE_EN)
        assert [h.store for h in matches.memory] == ["pending"]
        user_dir = ensure_scope_dir(home / "memories", "u")
        (user_dir / "MEMORY.md.bak.1").write_text(f"old copy: {PHRASE_EN}")
        assert sorted(h.store for h in forget.find_subject(host, "u", PHRASE_EN).memory) == [
            "copy",
            "pending",
        ]
        report = forget.forget_subject(host, "u", PHRASE_EN)
    assert report.proof.clean, report.proof.to_dict()
    assert raw_hits(home, PHRASE_EN) == []


@pytest.mark.parametrize("phrase", ["", " a ", "x" * 201, "two\nlines"])
def test_unusable_phrases_are_refused(phrase: str) -> None:
    with pytest.raises(HermesError):
        forget.check_phrase(phrase)


def test_forget_a_user_entirely(seeded: Path, backend: str) -> None:
    with MemoryHost.open(seeded, load_entrypoints=False) as host:
        report = forget.forget_user(host, "alice")
        assert report.removed["memory"] == 3
        assert report.removed["sessions"] == 1
        assert report.removed["trace"] == 1
        assert forget.find_subject(host, "alice", "Alice").total == 0
        assert forget.find_subject(host, "bob", "Bob").counts["memory"] == 1
        with pytest.raises(HermesError):
            forget.forget_user(host, "")
    assert raw_hits(seeded, "prefers tea") == []
    assert raw_hits(seeded, PHRASE_ZH) == []
