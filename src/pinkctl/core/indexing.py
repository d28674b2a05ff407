"""Index helpers shared by the state maps and the QP layer."""

from __future__ import annotations

import numpy as np

__all__ = ["as_index"]


def as_index(indices: np.ndarray) -> slice | np.ndarray:
    """Return a slice equivalent to ``indices`` when they form a contiguous ascending range.

    Args:
        indices: 1-D integer array.

    Returns:
        ``slice(start, stop)`` if ``indices == arange(start, stop)`` (and non-empty), else a
        read-only copy of ``indices`` as ``np.intp``.
    """
    idx = np.asarray(indices, dtype=np.intp).reshape(-1)
    if idx.size > 0 and np.array_equal(idx, np.arange(idx[0], idx[0] + idx.size)):
        return slice(int(idx[0]), int(idx[0]) + int(idx.size))
    out = idx.copy()
    out.setflags(write=False)
    return out
