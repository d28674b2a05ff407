"""quadprog's ``solve_qp`` called directly."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import QPSolveError
from ..problem import DAQP_INFINITY, QPWorkspace
from .base import QPSolver

__all__ = ["QuadprogSolver"]


class QuadprogSolver(QPSolver):
    """quadprog's ``solve_qp`` called directly (constraints ``C^T x >= b``).

    Columns of ``C``: equality rows, finite lower bounds (``x >= lb``), finite upper bounds
    (``-x >= -ub``), then ``-G x >= -h``. The identity columns are kept between ticks while the
    pattern (row counts, which bounds are finite) does not change.
    """

    name = "quadprog"
    exact = True

    def __init__(self, options: dict[str, Any]) -> None:
        import quadprog  # noqa: PLC0415

        super().__init__(options)
        self._solve = quadprog.solve_qp
        self._key: tuple[Any, ...] = ()

    def _layout(self, ws: QPWorkspace, finite_lower: np.ndarray, finite_upper: np.ndarray) -> None:
        n = ws.n
        n_eq = ws.n_eq
        lower = np.flatnonzero(finite_lower)
        upper = np.flatnonzero(finite_upper)
        columns = n_eq + lower.size + upper.size + ws.n_ineq
        C = np.zeros((n, columns))
        C[lower, n_eq + np.arange(lower.size)] = 1.0
        C[upper, n_eq + lower.size + np.arange(upper.size)] = -1.0
        self._C = C
        self._b = np.empty(columns)
        all_lower = lower.size == n
        all_upper = upper.size == n
        self._lower_index: slice | np.ndarray = slice(None) if all_lower else lower
        self._upper_index: slice | np.ndarray = slice(None) if all_upper else upper
        self._lower_slots = slice(n_eq, n_eq + lower.size)
        self._upper_slots = slice(n_eq + lower.size, n_eq + lower.size + upper.size)
        self._row_slots = slice(n_eq + lower.size + upper.size, columns)

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        finite_lower = ws.lb > -DAQP_INFINITY
        finite_upper = ws.ub < DAQP_INFINITY
        key = (ws.n, ws.n_eq, ws.n_ineq, finite_lower.tobytes(), finite_upper.tobytes())
        if key != self._key:
            self._layout(ws, finite_lower, finite_upper)
            self._key = key
        C = self._C
        b = self._b
        n_eq = ws.n_eq
        if n_eq:
            C[:, :n_eq] = ws.A.T
            b[:n_eq] = ws.b
        b[self._lower_slots] = ws.lb[self._lower_index]
        np.negative(ws.ub[self._upper_index], out=b[self._upper_slots])
        if ws.n_ineq:
            np.negative(ws.G.T, out=C[:, self._row_slots])
            np.negative(ws.h, out=b[self._row_slots])
        try:
            x = self._solve(ws.H, np.negative(ws.c), C, b, n_eq, **self._options)[0]
        except ValueError as exc:
            message = str(exc)
            if "inconsistent" in message:
                reason = "quadprog: primal infeasible (constraints are inconsistent)"
            else:
                reason = f"quadprog: {message}"
            raise QPSolveError(reason, solver=self.name, status=message) from exc
        return np.asarray(x, dtype=np.float64)
