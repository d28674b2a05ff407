"""Pink's task weight matrix ``W``, cached per task."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["RowWeights"]

#: Marker for "no cached vector cost" (never the identity of a user's cost).
_NO_SOURCE = object()


class RowWeights:
    """Diagonal of pink's weight matrix ``W`` for a task of dimension ``k``, cached.

    pink's rule: identity when ``cost`` is None, ``cost * I`` for a ``float`` cost,
    ``diag(cost)`` for a vector cost. After :meth:`update`, ``uniform`` holds the common weight
    when every entry is equal (then the caller can use scalar arithmetic), else None and
    ``vector`` holds the weights. A vector cost is re-read only when its bytes change, which
    costs one ``tobytes`` per tick.
    """

    def __init__(self, k: int) -> None:
        self.k = k
        self.vector = np.ones(k)
        self.column = self.vector.reshape(k, 1)
        self.uniform: float | None = 1.0
        #: The vector cost read last (identity) and its bytes, for the unchanged-cost fast path.
        self.source: Any = _NO_SOURCE
        self.source_bytes = b""

    def update(self, cost: Any) -> bool:
        """Read ``cost``; False when pink's formula would not apply (int, wrong length...)."""
        if cost is self.source and cost.tobytes() == self.source_bytes:
            return True  # the same vector cost as last tick, unchanged
        if cost is None or isinstance(cost, float):
            self.uniform = 1.0 if cost is None else cost
            self.source = _NO_SOURCE
            return True
        if isinstance(cost, np.ndarray):
            return self._read_array(cost)
        return self._read_sequence(cost)

    def _read_array(self, cost: np.ndarray) -> bool:
        """A vector cost: ``k`` numbers (kept as the source of the unchanged-cost check)."""
        if cost.shape != (self.k,) or not np.issubdtype(cost.dtype, np.number):
            return False
        self._store(cost.astype(np.float64))
        self.source = cost
        self.source_bytes = cost.tobytes()
        return True

    def _read_sequence(self, cost: Any) -> bool:
        """A list or tuple of ``k`` numbers; False for anything else."""
        if not isinstance(cost, (list, tuple)) or len(cost) != self.k:
            return False
        try:
            values = np.asarray(cost, dtype=np.float64)
        except (TypeError, ValueError):
            return False
        self._store(values)
        self.source = _NO_SOURCE
        return True

    def _store(self, values: np.ndarray) -> None:
        np.copyto(self.vector, values)
        first = float(values[0]) if values.size else 1.0
        self.uniform = first if bool(np.all(values == first)) else None
