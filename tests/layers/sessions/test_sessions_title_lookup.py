"""The title lookup of discovery (``SessionDB.sessions_titled``) reads the user's titled
sessions only, not every session of the archive (issue 22: selective search at 1M messages).

Pinned without timing: the SQLite virtual-machine steps of one lookup at two archive sizes
(progress handler, as in test_sessions_bounded.py). Untitled sessions are what grows here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.records import ALL_USERS, UserScope


def _archive(path: Path, untitled: int) -> SessionDB:
    db = SessionDB.open(path)
    with db.transaction():
        for n in range(untitled):
            for user in (None, "alice"):
                sid = f"{user or 'anon'}-{n:05d}"
                db.create_session(sid, user_id=user, started_at=1_700_000_000.0 + n)
                db.append_messages(sid, [{"role": "user", "content": f"note {n}"}], user_id=user)
    for user, title in ((None, "Dark mode rollout"), ("alice", "Dark mode 深色模式 plan")):
        for k in range(2):
            sid = f"{user or 'anon'}-titled-{k}"
            db.create_session(sid, user_id=user, started_at=1_800_000_000.0 + k)
            db.append_messages(sid, [{"role": "user", "content": "theme"}], user_id=user)
            db.set_title(sid, f"{title} {k}")
    return db


def _steps(db: SessionDB, words: list[str], user: UserScope) -> tuple[int, list[str]]:
    steps = 0

    def tick() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn = db._conn()
    conn.set_progress_handler(tick, 10)
    try:
        found = db.sessions_titled(words, user_id=user)
    finally:
        conn.set_progress_handler(None, 10)
    return steps, [sid for sid, _ in found]


@pytest.mark.parametrize(
    ("user", "words", "expected"),
    [
        (None, ["dark", "mode"], ["anon-titled-1", "anon-titled-0"]),
        ("alice", ["dark", "mode"], ["alice-titled-1", "alice-titled-0"]),
        ("alice", ["深色"], ["alice-titled-1", "alice-titled-0"]),
        ("bob", ["dark"], []),
    ],
)
def test_title_lookup_does_not_grow_with_untitled_sessions(
    tmp_path: Path, user: str | None, words: list[str], expected: list[str]
) -> None:
    costs = []
    for size in (50, 500):
        db = _archive(tmp_path / str(size), size)
        try:
            steps, found = _steps(db, words, user)
            assert found == expected  # each user sees their own titled sessions only
            costs.append(steps)
        finally:
            db.close()
    small, large = costs
    assert large <= small + 5


def test_the_step_count_sees_a_scan(tmp_path: Path) -> None:
    """Across all users the lookup still walks every session: the counter shows it grow."""
    costs = []
    for size in (50, 500):
        db = _archive(tmp_path / str(size), size)
        try:
            steps, found = _steps(db, ["dark", "mode"], ALL_USERS)
            assert len(found) == 4
            costs.append(steps)
        finally:
            db.close()
    assert costs[1] > 5 * costs[0]
