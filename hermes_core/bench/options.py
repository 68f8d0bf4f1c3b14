"""Reading the options of ``hermes-memory bench`` commands and building what they name, so the
bench CLI only parses and prints.

Contract: a value that cannot be read raises :class:`BenchOptionError` (the message shows the
accepted form; the CLI reports it as a bad parameter); something that cannot be built (a
retriever, a PostgreSQL archive without a URL) raises :class:`BenchSetupError` naming the fix.
Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from hermes_core.errors import HermesError

from .retrievers import BuiltinRetriever, Retriever, load_provider_retriever

ARCHIVE_BACKENDS = ("sqlite", "postgresql")
"""Backends a session-archive benchmark runs on."""


class BenchOptionError(HermesError, ValueError):
    """A bench option's value cannot be read; the message shows the accepted form."""


class BenchSetupError(HermesError):
    """What a bench option names cannot be built; the message names the fix."""


def parse_cutoffs(text: str) -> tuple[int, ...]:
    """``"5,10"`` → ``(5, 10)``: sorted, unique, positive cut-offs."""
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise BenchOptionError("use comma-separated integers, e.g. 5,10") from None
    if not ks or min(ks) < 1:
        raise BenchOptionError("use comma-separated positive integers, e.g. 5,10")
    return ks


def parse_message_counts(text: str) -> tuple[int, ...]:
    """``"10k,100k,1m"`` → ``(10000, 100000, 1000000)`` in the given order; each at least
    100 messages."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            continue
        mult = {"k": 1000, "m": 1_000_000}.get(part[-1:], 1)
        try:
            out.append(int(part.rstrip("km")) * mult)
        except ValueError:
            raise BenchOptionError("use sizes like 10k,100k,1m") from None
    if not out or min(out) < 100:
        raise BenchOptionError("use sizes of at least 100 messages, e.g. 10k,100k")
    return tuple(out)


def parse_backends(text: str) -> tuple[str, ...]:
    """``"sqlite,postgresql"`` → the named archive backends, unique, in order."""
    out = tuple(dict.fromkeys(p.strip().lower() for p in text.split(",") if p.strip()))
    bad = [b for b in out if b not in ARCHIVE_BACKENDS]
    if bad or not out:
        raise BenchOptionError(
            f"unknown backend(s) {', '.join(bad) or '(none)'}: use sqlite, postgresql or "
            "sqlite,postgresql"
        )
    return out


def archive_url(backends: Iterable[str], url: str | None, home: Path) -> str | None:
    """``url``, or (when a backend is PostgreSQL and ``url`` is empty) ``sessions.url`` of
    ``home``; raises :class:`BenchSetupError` when neither names a database."""
    if "postgresql" not in backends or url:
        return url
    from hermes_core.settings.base import load_settings

    configured = load_settings(home).sessions.url
    if configured is None:
        raise BenchSetupError(
            "--backend postgresql needs a database: pass --url postgresql://… or set "
            "HERMES_SESSIONS__URL in $HERMES_HOME/.env"
        )
    return configured.get_secret_value()


def is_retriever_spec(spec: str) -> bool:
    """True for ``builtin``, ``provider`` and ``provider:NAME``."""
    kind, _, _name = spec.partition(":")
    return spec == "builtin" or kind == "provider"


def build_retriever(
    spec: str,
    workdir: Path,
    *,
    home: Path,
    default_provider: str | None = None,
    backend: str = "sqlite",
    url: str | None = None,
) -> Retriever:
    """The retriever ``spec`` names, in the scratch directory ``workdir``: ``builtin`` (the
    session archive on ``backend``; PostgreSQL at ``url`` or ``sessions.url``), ``provider``
    (the active provider of ``home``, or ``default_provider``) or ``provider:NAME``. Raises
    :class:`BenchOptionError` for another spec, :class:`BenchSetupError` when it cannot be
    built."""
    if not is_retriever_spec(spec):
        raise BenchOptionError(f"{spec!r}: use builtin, provider or provider:NAME")
    if spec == "builtin":
        url = archive_url((backend,), url, home)
        try:
            return BuiltinRetriever(workdir, backend=backend, url=url)
        except Exception as exc:
            raise BenchSetupError(f"cannot build the builtin retriever: {exc}") from exc
    name = spec.partition(":")[2]
    try:
        return load_provider_retriever(home, workdir, name or default_provider)
    except Exception as exc:
        raise BenchSetupError(f"cannot build the retriever {spec!r}: {exc}") from exc


__all__ = [
    "ARCHIVE_BACKENDS",
    "BenchOptionError",
    "BenchSetupError",
    "archive_url",
    "build_retriever",
    "is_retriever_spec",
    "parse_backends",
    "parse_cutoffs",
    "parse_message_counts",
]
