"""The HRR vectors of each user, kept in memory and updated by fact id.

:class:`FactStore` reads a user's vectors from SQLite once (on the first search that needs
them) and from then on changes this matrix row by row as facts are added, re-encoded,
re-trusted or removed: a search multiplies the query by the matrix and never re-reads it.
Rows live in a buffer that doubles when full, so an add copies nothing; a removal moves the
last row into the hole.

Another process writing the same database is noticed through SQLite's ``data_version``
(the store checks it before each search) and the cached users are dropped and re-read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class UserVectors:
    """One user's fact ids, unit vectors (rows of a float32 matrix) and trust values."""

    def __init__(self, np: Any, dim: int, capacity: int = 64) -> None:
        self.np = np
        self.dim = dim
        self.n = 0
        self._ids = np.zeros(capacity, dtype=np.int64)
        self._matrix = np.zeros((capacity, dim), dtype=np.float32)
        self._trust = np.zeros(capacity, dtype=np.float32)
        self._pos: dict[int, int] = {}

    def __len__(self) -> int:
        return self.n

    def __contains__(self, fact_id: int) -> bool:
        return fact_id in self._pos

    def _grow(self) -> None:
        np, size = self.np, max(64, 2 * len(self._ids))
        ids = np.zeros(size, dtype=np.int64)
        matrix = np.zeros((size, self.dim), dtype=np.float32)
        trust = np.zeros(size, dtype=np.float32)
        ids[: self.n] = self._ids[: self.n]
        matrix[: self.n] = self._matrix[: self.n]
        trust[: self.n] = self._trust[: self.n]
        self._ids, self._matrix, self._trust = ids, matrix, trust

    def put(self, fact_id: int, vector: Any, trust: float) -> None:
        """Insert or replace the row of ``fact_id``."""
        row = self._pos.get(fact_id)
        if row is None:
            if self.n == len(self._ids):
                self._grow()
            row = self.n
            self.n += 1
            self._pos[fact_id] = row
            self._ids[row] = fact_id
        self._matrix[row] = vector
        self._trust[row] = trust

    def set_trust(self, fact_id: int, trust: float) -> None:
        row = self._pos.get(fact_id)
        if row is not None:
            self._trust[row] = trust

    def remove(self, fact_id: int) -> None:
        row = self._pos.pop(fact_id, None)
        if row is None:
            return
        last = self.n - 1
        if row != last:
            moved = int(self._ids[last])
            self._ids[row] = moved
            self._matrix[row] = self._matrix[last]
            self._trust[row] = self._trust[last]
            self._pos[moved] = row
        self.n = last

    def row(self, fact_id: int) -> int | None:
        """The matrix row of ``fact_id`` (``None`` when it has no vector here)."""
        return self._pos.get(fact_id)

    @property
    def ids(self) -> Any:
        """Fact id of every row (a view: valid until the next write)."""
        return self._ids[: self.n]

    def scores(self, key: Any) -> Any:
        """Cosine of every row with ``key`` (``key`` must be unit length; rows are)."""
        # einsum runs numpy's own single-threaded loop: a BLAS product would start a thread
        # per core for this one matrix-vector product, which thrashes on a busy machine
        return self.np.einsum("ij,j->i", self._matrix[: self.n], key)

    def trusted(self, min_trust: float) -> Any:
        """Per row: whether its trust is ≥ ``min_trust``."""
        return self._trust[: self.n] >= self.np.float32(min_trust)

    def cosines(self, key: Any, min_trust: float) -> tuple[list[int], Any]:
        """``(fact ids, cosines with key)`` of the rows whose trust is ≥ ``min_trust``
        (``key`` must be unit length; rows are)."""
        if self.n == 0:
            return [], self.np.zeros(0, dtype=self.np.float32)
        keep = self.trusted(min_trust)
        return self.ids[keep].tolist(), self.scores(key)[keep]


class VectorCache:
    """Every loaded user's :class:`UserVectors`; counts the vector rows read from SQLite."""

    def __init__(self, np: Any, dim: int) -> None:
        self.np = np
        self.dim = dim
        self.rows_read = 0
        self._users: dict[str, UserVectors] = {}

    def get(self, user_id: str) -> UserVectors | None:
        return self._users.get(user_id)

    def load(self, user_id: str, rows: Iterable[tuple[int, bytes, float]]) -> UserVectors:
        """Build ``user_id``'s matrix from ``(fact_id, vector bytes, trust)`` rows."""
        vectors = UserVectors(self.np, self.dim)
        for fact_id, blob, trust in rows:
            self.rows_read += 1
            vectors.put(int(fact_id), self.np.frombuffer(blob, dtype=self.np.float32), trust)
        self._users[user_id] = vectors
        return vectors

    def drop(self, user_id: str | None = None) -> None:
        """Forget one user's matrix (or every user's)."""
        if user_id is None:
            self._users.clear()
        else:
            self._users.pop(user_id, None)


__all__ = ["UserVectors", "VectorCache"]
