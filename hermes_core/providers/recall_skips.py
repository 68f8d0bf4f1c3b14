"""The ledger of skipped provider recalls: recall is never lost silently.

A provider's ``prefetch`` that does not answer within ``memory.prefetch_timeout`` (still
opening its store or loading its model, or stuck), is still busy with an earlier call, or
raises, is skipped for that turn. The facade logs one line and calls :func:`record`, which
counts the skip per provider and kind in ``$HERMES_HOME/recall-skips.json`` (0600, written
atomically under a lock, so several processes may share a home). ``hermes-memory memory status``
and ``hermes-memory doctor`` read it back (:func:`load`, :func:`health_check`). Each entry also
counts skips per UTC day (``days``: the last :data:`KEEP_DAYS` days), which the provider page
of ``hermes-memory ui`` charts (:func:`per_day`).
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any, Literal

from hermes_core.fsutil import atomic_write_text, file_lock, read_regular_text
from hermes_core.types import HealthCheck

log = logging.getLogger(__name__)

LEDGER = "recall-skips.json"
RECENT_SECONDS = 24 * 3600.0
"""Skips younger than this make the doctor's check fail; older ones are history."""

KEEP_DAYS = 60
"""Days of per-day counts kept per provider."""

SkipKind = Literal["timeout", "busy", "failed"]
KINDS: tuple[SkipKind, ...] = ("timeout", "busy", "failed")


def record(
    home: Path, provider: str, kind: SkipKind, detail: str, *, now: float | None = None
) -> None:
    """Count one skipped recall of ``provider``. Never raises (a read-only home is logged)."""
    path = home / LEDGER
    try:
        with file_lock(path):
            data = load(home)
            entry = data.setdefault(provider, {k: 0 for k in KINDS})
            entry[kind] = int(entry.get(kind, 0)) + 1
            entry["last_at"] = time.time() if now is None else now
            day = time.strftime("%Y-%m-%d", time.gmtime(entry["last_at"]))
            stored = entry.get("days")
            days: dict[str, Any] = dict(stored) if isinstance(stored, dict) else {}
            days[day] = int(days.get(day, 0)) + 1
            entry["days"] = dict(sorted(days.items())[-KEEP_DAYS:])
            entry["last_kind"] = kind
            entry["last_detail"] = detail
            atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    except OSError as exc:
        log.warning("could not record a skipped recall in %s: %s", path, exc)


def load(home: Path) -> dict[str, dict[str, Any]]:
    """``{provider: {"timeout": n, "busy": n, "failed": n, "last_at": epoch, "last_kind":
    kind, "last_detail": text}}``; empty when nothing was ever skipped (or unreadable)."""
    try:
        data = json.loads(read_regular_text(home / LEDGER, max_bytes=1 << 20, what="ledger"))
    except (OSError, ValueError):
        return {}
    return (
        {str(k): dict(v) for k, v in data.items() if isinstance(v, dict)}
        if isinstance(data, dict)
        else {}
    )


def total(entry: dict[str, Any]) -> int:
    """Skips of one provider, all kinds."""
    return sum(int(entry.get(kind, 0)) for kind in KINDS)


def per_day(home: Path) -> dict[str, int]:
    """Skipped recalls per UTC day (``YYYY-MM-DD``), all providers together, oldest first."""
    counts: dict[str, int] = {}
    for entry in load(home).values():
        days = entry.get("days")
        for day, count in days.items() if isinstance(days, dict) else ():
            try:
                counts[str(day)] = counts.get(str(day), 0) + int(count)
            except (TypeError, ValueError):
                continue
    return dict(sorted(counts.items()))


def describe(entry: dict[str, Any]) -> str:
    """``"3 skipped (timeout 2, busy 1, failed 0); last 2026-12-02 07:01 UTC: timeout ..."``"""
    counts = ", ".join(f"{kind} {int(entry.get(kind, 0))}" for kind in KINDS)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(float(entry.get("last_at", 0))))
    last = f"{entry.get('last_kind', '?')}: {entry.get('last_detail', '')}".rstrip(": ")
    return f"{total(entry)} skipped ({counts}); last {when}: {last}"


def health_check(home: Path, *, now: float | None = None) -> list[HealthCheck]:
    """One check per provider that ever skipped a recall; failing while a skip is recent."""
    at = time.time() if now is None else now
    checks = []
    for provider, entry in sorted(load(home).items()):
        recent = at - float(entry.get("last_at", 0)) < RECENT_SECONDS
        checks.append(
            HealthCheck(
                f"recall: {provider}",
                not recent,
                describe(entry),
                f"raise memory.prefetch_timeout (now too short for {provider} to answer) or "
                f"check `hermes-memory doctor` for {provider}'s own checks; the count lives in "
                f"{home / LEDGER}",
            )
        )
    return checks


__all__ = [
    "KEEP_DAYS",
    "KINDS",
    "LEDGER",
    "SkipKind",
    "describe",
    "health_check",
    "load",
    "per_day",
    "record",
    "total",
]
