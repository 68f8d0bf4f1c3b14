"""The test kit's embedded PostgreSQL: a real server, a fresh database per test."""

from __future__ import annotations

import psycopg
import pytest

from hermes_core.testing.postgres import PostgresServer


def test_each_test_gets_an_empty_database_with_the_search_extensions(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        names = {r[0] for r in conn.execute("SELECT extname FROM pg_extension")}
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        stem = conn.execute("SELECT to_tsvector('english', 'running deployments')::text").fetchone()
    assert {"pg_trgm", "vector"} <= names
    assert tables == (0,)
    assert stem is not None and "'deploy'" in stem[0] and "'run'" in stem[0]


def test_databases_are_separate_and_dropped(postgres_server: PostgresServer) -> None:
    first = postgres_server.create_database()
    second = postgres_server.create_database()
    assert first != second
    with psycopg.connect(first, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (x int)")
    with psycopg.connect(second) as conn:
        assert conn.execute("SELECT to_regclass('public.t')").fetchone() == (None,)
    postgres_server.drop_database(first)
    postgres_server.drop_database(second)
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(first).close()
