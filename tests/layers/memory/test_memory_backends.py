"""``memory.store`` picks one :class:`StorageBackend`; every storage decision is its method."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from hermes_core.errors import ConfigError
from hermes_core.layers.memory.backends import (
    FilesBackend,
    PostgresBackend,
    backend,
    describe,
    open_pending,
    open_store,
)
from hermes_core.layers.memory.pending import PendingStore
from hermes_core.layers.memory.pgpending import PostgresPendingStore
from hermes_core.layers.memory.pgstore import PostgresMemoryStore
from hermes_core.layers.memory.store import MemoryStore
from hermes_core.settings.models import MemorySettings


def test_files_backend(tmp_path: Path) -> None:
    settings = MemorySettings(store="files")
    chosen = backend(tmp_path, settings)
    assert isinstance(chosen, FilesBackend)
    store = open_store(tmp_path, settings, "user", 1375, "用户-1")
    assert type(store) is MemoryStore
    assert type(open_pending(tmp_path, settings, "u1")) is PendingStore
    assert describe(tmp_path, settings) == f"files in {tmp_path / 'memories'}"
    assert chosen.user_ids() == [] and chosen.pending_users() == []


def test_postgres_backend_without_a_url_says_what_to_set(tmp_path: Path) -> None:
    settings = MemorySettings(store="postgresql")
    assert isinstance(backend(tmp_path, settings), PostgresBackend)
    assert describe(tmp_path, settings) == "postgresql (no memory.url configured)"
    with pytest.raises(ConfigError, match="HERMES_MEMORY__URL"):
        open_store(tmp_path, settings, "memory", 2200, None)
    with pytest.raises(ConfigError, match="HERMES_MEMORY__URL"):
        open_pending(tmp_path, settings, None)


def test_postgres_backend(tmp_path: Path, postgres_url: str) -> None:
    settings = MemorySettings(store="postgresql", url=SecretStr(postgres_url))
    store = open_store(tmp_path, settings, "memory", 2200, "u1")
    assert type(store) is PostgresMemoryStore
    assert type(open_pending(tmp_path, settings, "u1")) is PostgresPendingStore
    shown = describe(tmp_path, settings)
    assert shown.startswith("postgresql at postgresql://")
    password = postgres_url.split("://", 1)[1].split("@", 1)[0].partition(":")[2]
    assert not password or password not in shown


def test_a_refused_restore_carries_its_reason_and_the_hint_follows_it(tmp_path: Path) -> None:
    from hermes_core.layers.memory import MemoryEngine, Outcome, restore_hint

    outcome = MemoryEngine(tmp_path, MemorySettings(), "用户 1").restore_archived(424242)
    assert not outcome.success and outcome.refusal == "missing"
    assert "refusal" not in outcome.payload  # the tool payload is unchanged
    assert (
        restore_hint(outcome, "用户 1")
        == "list them with `hermes-memory memory archive --user '用户 1'`"
    )
    assert restore_hint(Outcome({"success": False}, refusal="blocked"), None) == "nothing to do"
    assert restore_hint(Outcome({"success": False}, refusal="restored"), None) == "nothing to do"
    assert restore_hint(Outcome({"success": False}), "u1").startswith(
        "free room with `hermes-memory memory edit --user u1`"
    )
