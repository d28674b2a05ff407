"""Controlled tangent columns: which velocity coordinates are decision variables of the QP.

The differential-IK QP of :func:`pinkctl.qp.compile_qp` is written over the displacement
:math:`\\Delta q_c = \\Delta q[c]` of the controlled tangent coordinates ``c`` only; every other
coordinate is held (its velocity is zero). Restricting pink's problem

.. math::

    \\min_{\\Delta q} \\tfrac12 \\Delta q^T P \\Delta q + p^T \\Delta q
    \\quad \\text{s.t.} \\quad G \\Delta q \\le h

to those coordinates (the others fixed at zero) gives
:math:`P_{cc} = P[c, c]`, :math:`p_c = p[c]`, :math:`G_c = G[:, c]`.

A :class:`ColumnSelection` holds ``c`` and picks, once at construction, the cheapest way of
extracting those columns: a slice (a view, no copy) when ``c`` is a contiguous ascending
range, a fancy index otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.indexing import as_index
from ..errors import InputError

__all__ = ["ColumnSelection", "as_index"]


def _index_array(controlled_v_indices: Any) -> np.ndarray:
    """``controlled_v_indices`` as a non-empty 1-D ``intp`` array (integral floats accepted).

    Raises:
        ValueError: Not 1-D, not integers, or empty.
    """
    raw = np.asarray(controlled_v_indices)
    if raw.ndim != 1:
        raise InputError(
            f"controlled_v_indices must be a 1-D sequence of integers, got shape {raw.shape}"
        )
    if (
        raw.size > 0
        and not np.issubdtype(raw.dtype, np.integer)
        and not (np.all(np.isfinite(raw)) and np.all(raw == np.round(raw)))
    ):
        raise InputError(f"controlled_v_indices must be integers, got {controlled_v_indices!r}")
    idx = raw.astype(np.intp)
    if idx.size == 0:
        raise InputError("controlled_v_indices must not be empty")
    return idx


class ColumnSelection:
    """Controlled tangent coordinates ``c`` of a model with ``nv`` velocity coordinates.

    Attributes:
        indices: Controlled tangent indices, in the QP's variable order (read-only).
        nv: Dimension of the model's tangent space.
        size: Number of controlled coordinates (QP variables).
        index: ``indices`` as a slice when contiguous, else as an index array.
        is_full: True when ``indices == arange(nv)`` (every coordinate is controlled).
        position: Array of length ``nv``: the QP variable of each tangent coordinate, ``-1``
            for held coordinates (read-only).
    """

    indices: np.ndarray
    nv: int
    size: int
    index: slice | np.ndarray
    is_full: bool
    position: np.ndarray

    def __init__(self, nv: int, controlled_v_indices: Any) -> None:
        """Validate and store the controlled tangent indices.

        Args:
            nv: Dimension of the model's tangent space.
            controlled_v_indices: Sequence of distinct integers in ``[0, nv)``.

        Raises:
            ValueError: If the indices are not a 1-D sequence of distinct integers in range.
        """
        idx = _index_array(controlled_v_indices)
        if idx.min() < 0 or idx.max() >= nv:
            raise InputError(f"controlled_v_indices must lie in [0, nv={nv}), got {idx.tolist()}")
        if np.unique(idx).size != idx.size:
            raise InputError(f"controlled_v_indices must be unique, got {idx.tolist()}")
        idx.setflags(write=False)
        position = np.full(nv, -1, dtype=np.intp)
        position[idx] = np.arange(idx.size)
        position.setflags(write=False)
        self.indices = idx
        self.nv = int(nv)
        self.size = int(idx.size)
        self.index = as_index(idx)
        self.is_full = bool(idx.size == nv and np.array_equal(idx, np.arange(nv)))
        self.position = position
        self._ix = None if isinstance(self.index, slice) else np.ix_(self.index, self.index)

    def entries(self, vector: np.ndarray) -> np.ndarray:
        """Controlled entries ``vector[c]`` (a view when ``c`` is contiguous)."""
        return vector[self.index]

    def restrict_objective(self, H: Any, c: Any) -> tuple[np.ndarray, np.ndarray]:
        """A pink objective ``(H, c)`` over the whole tangent space as float arrays over the
        controlled coordinates: ``(H[c, c], c[c])``."""
        H = np.asarray(H, dtype=np.float64)
        c = np.asarray(c, dtype=np.float64).reshape(-1)
        if self.is_full:
            return H, c
        index = self.index
        return (H[index, index] if isinstance(index, slice) else H[self._ix]), c[index]

    def placement(self, positions: np.ndarray) -> slice | np.ndarray | None:
        """Where the QP variables ``positions`` sit: None when they are every variable in
        order, else a slice or an index array."""
        if positions.size == self.size and np.array_equal(positions, np.arange(self.size)):
            return None
        return as_index(positions)

    def map_tangent_indices(self, tangent_indices: Any) -> tuple[np.ndarray, np.ndarray]:
        """Split tangent indices into the controlled ones and where they sit in the QP.

        Args:
            tangent_indices: Tangent indices of some object (a limit, a task row set).

        Returns:
            Pair ``(k, p)`` of integer arrays: ``tangent_indices[k]`` is controlled and is the
            QP variable ``p``. Held indices are dropped.
        """
        t = np.asarray(tangent_indices, dtype=np.intp).reshape(-1)
        if t.size == 0:
            empty = np.zeros(0, dtype=np.intp)
            return empty, empty.copy()
        p = self.position[t]
        k = np.flatnonzero(p >= 0)
        return k.astype(np.intp), p[k].astype(np.intp)


def restrict_inequalities(
    G: np.ndarray, h: np.ndarray, selection: ColumnSelection
) -> tuple[np.ndarray, np.ndarray]:
    """Restrict ``G x <= h`` to the controlled columns.

    Rows whose only non-zero coefficients sit on held coordinates say nothing about the
    controlled displacement (they constrain coordinates that do not move), so they are
    dropped. Rows that are zero over every coordinate are kept, as pink keeps them.

    Args:
        G: Inequality matrix over the whole tangent space, shape (r, nv).
        h: Inequality vector, shape (r,).
        selection: Controlled columns.

    Returns:
        Pair ``(G_c, h_c)`` with ``G_c`` of shape (r', n) (a new array) and ``h_c`` (r',).
    """
    G = np.asarray(G, dtype=np.float64)
    h = np.asarray(h, dtype=np.float64).reshape(-1)
    if G.ndim == 1:
        G = G.reshape(1, -1)
    if selection.is_full:
        return G, h
    G_c = G[:, selection.index]
    if G_c.shape[0] == 0:
        return np.array(G_c), h
    involves_controlled = np.any(G_c != 0.0, axis=1)
    involves_any = np.any(G != 0.0, axis=1)
    keep = involves_controlled | ~involves_any
    if keep.all():
        return np.array(G_c), h
    return G_c[keep], h[keep]
