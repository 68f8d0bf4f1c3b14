"""hermes_core.homefiles: who wrote state.db, and which file our tables go to (never writes)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from hermes_core.homefiles import OWN_DB, inspect_state_db, own_db_path
from hermes_core.layers.memory.archive import db_path as memory_db
from hermes_core.layers.sessions.db import SessionDB


def _agent_like(home: Path) -> Path:
    """A state.db shaped like Hermes Agent's (its marker tables and columns, schema 22)."""
    path = home / "state.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            PRAGMA journal_mode=WAL;
            CREATE TABLE schema_version (version INTEGER NOT NULL);
            INSERT INTO schema_version VALUES (22);
            CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT,
                session_key TEXT, billing_provider TEXT, title TEXT, parent_session_id TEXT,
                started_at REAL NOT NULL, ended_at REAL);
            CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT,
                role TEXT, content TEXT, timestamp REAL);
            CREATE TABLE gateway_routing (scope TEXT, session_key TEXT, entry_json TEXT);
            INSERT INTO sessions (id, source, title, started_at) VALUES ('a', 'cli', '笔记', 1.0);
            """
        )
    conn.close()
    return path


def test_missing_and_ours(tmp_path: Path) -> None:
    assert inspect_state_db(tmp_path).owner == "missing"
    assert own_db_path(tmp_path) == tmp_path / "state.db"
    SessionDB.open(tmp_path).close()
    found = inspect_state_db(tmp_path)
    assert found.owner == "hermes-core" and found.schema is not None
    assert own_db_path(tmp_path) == tmp_path / "state.db"


def test_a_hermes_agent_state_db_is_described_and_never_written(tmp_path: Path) -> None:
    path = _agent_like(tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    found = inspect_state_db(tmp_path)
    assert found.is_hermes_agent and found.schema == 22 and found.sessions == 1
    assert found.describe() == "this state.db was written by Hermes Agent, schema 22, 1 session(s)"
    assert own_db_path(tmp_path) == tmp_path / OWN_DB
    assert memory_db(tmp_path) == tmp_path / OWN_DB  # every layer asks the same helper
    db = SessionDB.open(tmp_path)
    assert db.path == tmp_path / OWN_DB and not db.read_only
    db.close()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    # once ours exists it stays the answer, even if state.db is moved away for a while
    path.rename(tmp_path / "elsewhere.db")
    assert own_db_path(tmp_path) == tmp_path / OWN_DB


def test_another_owner_and_garbage(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "state.db") as conn:
        conn.execute("CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("INSERT INTO state_meta VALUES ('owner', 'someone-else')")
    conn.close()
    found = inspect_state_db(tmp_path)
    assert found.owner == "other" and "someone-else" in found.describe()
    assert own_db_path(tmp_path) == tmp_path / OWN_DB
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "state.db").write_bytes(b"not a database at all" * 10)
    assert inspect_state_db(junk).owner == "unreadable"
