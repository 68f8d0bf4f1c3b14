"""Expiry dates of provider memories (hermes_core.providers.expiry), the optional inspector
capabilities (hermes_core.providers.inspect) and the per-day skip counts."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from hermes_core.errors import HermesError
from hermes_core.providers import recall_skips
from hermes_core.providers.expiry import ExpiryLedger, drop_expired, parse_date
from hermes_core.providers.inspect import (
    ProviderMemory,
    expiring,
    inspectable,
    is_expired,
)


def test_dates_are_kept_per_user_and_expire_at_their_moment(tmp_path: Path) -> None:
    ledger = ExpiryLedger(tmp_path, "notebook")
    assert ledger.expiries("alice") == {} and not ledger.path.exists()  # reading creates nothing
    ledger.set_date("alice", "m1", 1000.0)
    ledger.set_date("alice", "m2", 3000.0)
    ledger.set_date("bob", "m1", 5000.0)
    assert ledger.expiries("alice") == {"m1": 1000.0, "m2": 3000.0}
    assert ledger.expired("alice", now=2000.0) == {"m1"}
    assert ledger.expired("alice", now=3000.0) == {"m1", "m2"}  # the moment itself is expired
    assert ledger.expired("bob", now=2000.0) == set()  # bob's m1 is another memory
    ledger.set_date("alice", "m1", None)
    assert ledger.expiries("alice") == {"m2": 3000.0}
    ledger.set_date("alice", "m2", 9000.0)  # a new date replaces the old one
    assert ledger.expiries("alice") == {"m2": 9000.0}
    assert stat.S_IMODE(ledger.path.stat().st_mode) == 0o600


def test_forgetting_drops_dates(tmp_path: Path) -> None:
    ledger = ExpiryLedger(tmp_path, "notebook")
    for memory_id in ("a", "b", "c"):
        ledger.set_date("alice", memory_id, 1.0)
    ledger.set_date("bob", "a", 1.0)
    ledger.forget("alice", ["a", "zz"])
    assert set(ledger.expiries("alice")) == {"b", "c"}
    ledger.forget_user("alice")
    assert ledger.expiries("alice") == {} and ledger.expiries("bob") == {"a": 1.0}


def test_a_ledger_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    ledger = ExpiryLedger(tmp_path, "notebook")
    ledger.path.parent.mkdir()
    os.symlink(tmp_path / "elsewhere.db", ledger.path)
    with pytest.raises(HermesError, match="not a regular file"):
        ledger.set_date("alice", "m1", 1.0)
    with pytest.raises(HermesError, match="cannot name"):
        ExpiryLedger(tmp_path, "../evil")


def test_drop_expired_keeps_order_and_everything_else() -> None:
    hits = [("m3", 0.9), ("m1", 0.8), ("m2", 0.7), (4, 0.6)]
    assert drop_expired(hits, {"m1", "4"}, lambda h: h[0]) == [("m3", 0.9), ("m2", 0.7)]
    assert drop_expired(hits, set(), lambda h: h[0]) == hits


def test_parse_date() -> None:
    assert parse_date("") is None and parse_date("  ") is None
    moment = parse_date("2027-01-31")
    assert moment is not None and time.localtime(moment)[:5] == (2027, 1, 31, 0, 0)
    for bad in ("31/01/2027", "2027-02-30", "soon", "明天"):
        with pytest.raises(HermesError, match="YYYY-MM-DD"):
            parse_date(bad)


def test_is_expired() -> None:
    assert not is_expired(ProviderMemory("a", "x"), 10.0)
    assert is_expired(ProviderMemory("a", "x", expires_at=10.0), 10.0)
    assert not is_expired(ProviderMemory("a", "x", expires_at=11.0), 10.0)


class _Lister:
    supported = True

    def inspect_users(self) -> list[str]:
        return []

    def inspect_memories(self, user_id: str) -> list[ProviderMemory]:
        return []

    def inspect_forget(self, user_id: str, memory_ids: object) -> int:
        return 0

    def inspect_forget_user(self, user_id: str) -> int:
        return 0

    def inspect_supported(self) -> bool:
        return self.supported


class _Expiring(_Lister):
    def inspect_set_expiry(self, user_id: str, memory_id: str, expires_at: float | None) -> bool:
        return True


def test_capabilities_are_optional_and_can_be_off_at_run_time() -> None:
    lister, keeper = _Lister(), _Expiring()
    assert inspectable(lister) is lister and expiring(lister) is None
    assert expiring(keeper) is keeper
    keeper.supported = False  # e.g. mem0 in a remote mode
    assert inspectable(keeper) is None and expiring(keeper) is None
    assert inspectable(object()) is None and expiring(None) is None


def test_skips_are_counted_per_utc_day(tmp_path: Path) -> None:
    day = 86400.0
    base = 1_780_000_000.0 - (1_780_000_000.0 % day)  # a UTC midnight
    recall_skips.record(tmp_path, "chroma", "timeout", "slow", now=base + 10)
    recall_skips.record(tmp_path, "chroma", "busy", "busy", now=base + 20)
    recall_skips.record(tmp_path, "mem0", "failed", "boom", now=base + day + 5)
    first, second = (time.strftime("%Y-%m-%d", time.gmtime(base + d)) for d in (0, day))
    assert recall_skips.per_day(tmp_path) == {first: 2, second: 1}
    assert recall_skips.load(tmp_path)["chroma"]["timeout"] == 1  # totals unchanged
    for n in range(recall_skips.KEEP_DAYS + 5):
        recall_skips.record(tmp_path, "chroma", "timeout", "slow", now=base + (n + 2) * day)
    days = recall_skips.load(tmp_path)["chroma"]["days"]
    assert len(days) == recall_skips.KEEP_DAYS and first not in days
