"""``hermes_core/pg.py``: URL redaction, advisory keys, migrations and the unreachable-server
error, against the real embedded PostgreSQL."""

from __future__ import annotations

import socket
import threading

import psycopg
import pytest

from hermes_core.errors import HermesError
from hermes_core.pg import (
    VERSIONS_TABLE,
    DatabaseUnavailable,
    PoolOptions,
    advisory_key,
    close_pool,
    connection,
    get_pool,
    is_postgres_url,
    migrate,
    redact_url,
    unavailable,
)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://hermes:s3cret@db:5432/mem", "postgresql://hermes:***@db:5432/mem"),
        ("postgres://u:p%40ss@h/db?sslmode=require", "postgres://u:***@h/db?sslmode=require"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("postgresql:///db?host=/tmp/sock", "postgresql:///db?host=/tmp/sock"),
        ("postgresql://h/db?password=s3cret&user=u", "postgresql://h/db?password=***&user=u"),
        ("host=db user=u password=s3cret dbname=m", "host=db user=u password=*** dbname=m"),
        ("host=db password='s3 cret' dbname=m", "host=db password=*** dbname=m"),
        # urlsplit rejects these (unclosed IPv6 bracket): the password must still be masked
        ("postgresql://hermes:s3cret@[::1/db", "postgresql://hermes:***@[::1/db"),
        ("postgresql://u:s3cret@[::1]:x]/db", "postgresql://u:***@[::1]:x]/db"),
    ],
)
def test_redact_url_never_shows_the_password(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "s3cret" not in redact_url(url) and "p%40ss" not in redact_url(url)


def test_is_postgres_url() -> None:
    assert is_postgres_url("postgresql://h/db") and is_postgres_url(" POSTGRES://h/db")
    assert not is_postgres_url("mysql://h/db") and not is_postgres_url("/tmp/state.db")


def test_advisory_keys_are_stable_signed_and_distinct() -> None:
    key = advisory_key("hermes-memory", "alice", "user")
    assert key == advisory_key("hermes-memory", "alice", "user")
    assert -(2**63) <= key < 2**63
    keys = {
        advisory_key("m", "ab", "c"),
        advisory_key("m", "a", "bc"),
        advisory_key("m", "alice", "memory"),
        advisory_key("m", "alice", "user"),
        advisory_key("m", "张三", "user"),
    }
    assert len(keys) == 5


def test_migrate_applies_each_step_once_under_concurrent_callers(postgres_url: str) -> None:
    steps = [
        "CREATE TABLE t_migrate (n INTEGER)",
        "INSERT INTO t_migrate VALUES (1)",
        "INSERT INTO t_migrate VALUES (2)",
    ]
    versions: list[int] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with psycopg.connect(postgres_url, autocommit=True) as conn:
                versions.append(migrate(conn, "testing", steps))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and versions == [3] * 8
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert conn.execute("SELECT n FROM t_migrate ORDER BY n").fetchall() == [(1,), (2,)]
        row = conn.execute(
            f"SELECT version FROM {VERSIONS_TABLE} WHERE component = 'testing'"
        ).fetchone()
        assert row == (3,)
        # a later release adds a step: only that one runs
        assert migrate(conn, "testing", [*steps, "INSERT INTO t_migrate VALUES (4)"]) == 4
        assert conn.execute("SELECT count(*) FROM t_migrate").fetchone() == (3,)
        # an older release never downgrades the recorded version
        assert migrate(conn, "testing", steps[:1]) == 4


def test_an_unreachable_server_is_one_clear_error_without_the_password() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://hermes:hunter2-secret@127.0.0.1:{port}/mem"
    with (
        pytest.raises(DatabaseUnavailable) as caught,
        connection(
            url, setting="memory.url", options=PoolOptions(timeout=1.0), fallback="Or use files."
        ),
    ):
        pass  # pragma: no cover - never reached
    message = str(caught.value)
    assert isinstance(caught.value, HermesError)
    assert "hunter2" not in message and "hermes:***@127.0.0.1" in message
    assert "unreachable" in message and "memory.url" in message and message.endswith("files.")
    assert "refused" in caught.value.reason.lower()


def test_a_pooled_connection_runs_queries_with_a_statement_timeout(postgres_url: str) -> None:
    options = PoolOptions(timeout=5.0, statement_timeout=0.5)
    with connection(postgres_url, setting="x.url", options=options) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("SELECT pg_sleep(3)")


_CONFIGURED: list[int] = []


def _remember_backend(conn: psycopg.Connection) -> None:
    row = conn.execute("SELECT pg_backend_pid()").fetchone()
    assert row is not None
    _CONFIGURED.append(int(row[0]))


def test_pool_settings_and_configure_apply_to_every_connection(postgres_url: str) -> None:
    options = PoolOptions(
        settings=(("search_path", "hermes_nowhere,public"),), configure=_remember_backend
    )
    _CONFIGURED.clear()
    with connection(postgres_url, setting="x.url", options=options) as conn:
        assert conn.execute("SHOW search_path").fetchone() == ("hermes_nowhere,public",)
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
        assert row is not None and [row[0]] == _CONFIGURED
    assert get_pool(postgres_url, options) is get_pool(postgres_url, options)  # reused
    with pytest.raises(ValueError, match="plain words"):
        PoolOptions(settings=(("search_path", "x; DROP TABLE y"),))


def test_close_pool_releases_its_connections_and_the_next_use_opens_a_new_one(
    postgres_url: str,
) -> None:
    options = PoolOptions(application_name="hermes-close-pool-test")

    def backends() -> int:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            row = admin.execute(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = %s",
                (options.application_name,),
            ).fetchone()
        assert row is not None
        return int(row[0])

    first = get_pool(postgres_url, options)
    with connection(postgres_url, setting="x.url", options=options) as conn:
        conn.execute("SELECT 1")
    assert backends() == 1  # idle in the pool
    close_pool(postgres_url, options)
    assert backends() == 0
    close_pool(postgres_url, options)  # idempotent
    with connection(postgres_url, setting="x.url", options=options) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert get_pool(postgres_url, options) is not first
    close_pool(postgres_url, options)


def test_a_badly_percent_encoded_password_is_a_bad_url_not_an_unreachable_server() -> None:
    url = "postgresql://me:pw-%zz@127.0.0.1:1/db"
    with pytest.raises(DatabaseUnavailable) as caught, connection(url, setting="x.url"):
        pass
    assert "x.url is not a valid connection URL" in str(caught.value)
    assert "pw-" not in str(caught.value) and "pw-" not in caught.value.reason


def test_a_url_the_driver_cannot_parse_is_reported_without_its_password() -> None:
    """The driver quotes the whole URL in its error; urlsplit rejects it too."""
    url = "postgresql://hermes:hunter2-secret@[::1/mem"
    with pytest.raises(psycopg.ProgrammingError) as parse_error:
        psycopg.conninfo.conninfo_to_dict(url)
    assert "hunter2" in str(parse_error.value)  # the driver's own words carry it
    error = unavailable(url, parse_error.value, setting="memory.url")
    assert "hunter2" not in str(error) and "hunter2" not in error.reason
    assert "hunter2" not in error.url and "hermes:***@" in str(error)


def test_a_refused_server_costs_one_pool_checkout_not_one_per_attempt() -> None:
    """A direct connection confirms the server is down, so the other attempts (each a full
    pool timeout) are not waited out: the pool sees a single checkout request."""
    from hermes_core.pg import get_pool

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://hermes:hunter2-secret@127.0.0.1:{port}/mem"
    options = PoolOptions(timeout=1.0)
    with (
        pytest.raises(DatabaseUnavailable) as caught,
        connection(url, setting="memory.url", options=options, attempts=3),
    ):
        pass  # pragma: no cover - never reached
    assert "refused" in caught.value.reason.lower()
    assert get_pool(url, options).get_stats().get("requests_num") == 1


@pytest.mark.parametrize(
    ("change", "expected", "fix"),
    [
        ({"dbname": "no_such_db"}, "has no such database", "createdb"),
        ({"user": "no_such_role"}, "refused the login", "Fix the user or password"),
        ({"port": "notaport"}, "not a valid connection URL", "Fix it in"),
    ],
)
def test_a_server_that_answers_no_is_not_called_unreachable(
    postgres_url: str, change: dict[str, str], expected: str, fix: str
) -> None:
    """A wrong database, user or URL reaches the server (or never tries): 'unreachable,
    start the server' would send the user the wrong way."""
    params = psycopg.conninfo.conninfo_to_dict(postgres_url) | change
    url = psycopg.conninfo.make_conninfo("", **params) + " password=hunter2-secret"
    with (
        pytest.raises(DatabaseUnavailable) as caught,
        connection(url, setting="memory.url", options=PoolOptions(timeout=1.0)),
    ):
        pass  # pragma: no cover - never reached
    message = str(caught.value)
    assert expected in message and fix in message and "memory.url" in message
    assert "unreachable" not in message and "hunter2" not in message


def test_a_server_that_answers_garbage_is_unreachable_not_a_bad_url() -> None:
    """Something else listens on the port (seen here: 'received invalid response to SSL
    negotiation'): the URL parses fine, so the fix is the server or the address."""
    reason = (
        'connection failed: connection to server at "10.0.0.9", port 5432 failed: '
        "received invalid response to SSL negotiation: H"
    )
    error = unavailable(
        "postgresql://u:pw@10.0.0.9/db", psycopg.OperationalError(reason), setting="memory.url"
    )
    assert "is unreachable" in str(error) and "not a valid connection URL" not in str(error)
