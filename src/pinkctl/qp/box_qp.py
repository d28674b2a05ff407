"""Box-constrained QPs in the native kernel, DAQP's fast path.

The common arm tick (:mod:`pinkctl.qp.assembly`) and any tick whose limits are all simple
bounds solve

.. math::

    \\min_x \\tfrac12 x^T H x + c^T x \\quad \\text{s.t.} \\quad lb \\le x \\le ub

with ``H`` positive definite and a handful of variables: DAQP's Python call costs more than
its arithmetic. :class:`NativeBoxQP` solves it in ``pinkctl/_native/_kernel.c`` with an exact
primal-dual active-set method warm-started from the previous tick's active set (usually one
Cholesky factorisation), and reports when it cannot (a Hessian too close to singular, an
empty box, cycling) so that the caller falls back to DAQP. Both are exact active-set
methods: their minimisers agree to rounding (``tests/test_native.py``).
"""

from __future__ import annotations

import numpy as np

from .._native import kernel_module, native_available
from .problem import QPWorkspace

__all__ = ["NativeBoxQP", "native_available"]


class NativeBoxQP:
    """The box QP of a :class:`~pinkctl.qp.problem.QPWorkspace` without rows, in C.

    Raises:
        RuntimeError: When the native kernel is not available.
    """

    def __init__(self) -> None:
        self._solve = kernel_module().box_qp
        self._workspace: QPWorkspace | None = None
        self._generation = -1
        self._pointers: tuple[int, ...] = ()

    def _bind(self, ws: QPWorkspace) -> None:
        n = ws.n
        self._x = np.zeros(n)
        self._state = np.zeros(n, dtype=np.intc)  # 0 free, -1 at lb, +1 at ub: the warm start
        self._work = np.zeros(n * n + n)
        self._pointers = tuple(
            array.ctypes.data
            for array in (ws.H, ws.c, ws.lb, ws.ub, self._x, self._state, self._work)
        )
        self._workspace = ws
        self._generation = ws.generation

    def solve(self, ws: QPWorkspace) -> np.ndarray | None:
        """The minimiser (a new array, inside the box), or None when DAQP must solve it."""
        if ws is not self._workspace or ws.generation != self._generation:
            self._bind(ws)
        if self._solve(ws.n, *self._pointers) == 0:
            self._state.fill(0)  # no warm start from a failed solve
            return None
        return self._x.copy()
