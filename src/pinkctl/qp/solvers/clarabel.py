"""Clarabel: one persistent solver updated in place, then the active-set polish."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import QPSolveError
from ..problem import DAQP_INFINITY, QPWorkspace
from .base import POLISH_OPTION, QPSolver, upper_triangle_csc_indices

__all__ = ["ClarabelSolver"]


class ClarabelSolver(QPSolver):
    """One persistent Clarabel solver updated in place (re-created when the pattern changes).

    Constraint rows, in cone order: ``A_eq x + s = b`` (zero cone), then ``x + s = ub`` (finite
    upper bounds), ``-x + s = -lb`` (finite lower bounds), ``G x + s = h`` (non-negative cone).
    """

    name = "clarabel"
    exact = True

    def __init__(self, n: int, options: dict[str, Any]) -> None:
        import clarabel  # noqa: PLC0415
        import scipy.sparse as spa  # noqa: PLC0415

        self._clarabel = clarabel
        self._spa = spa
        super().__init__(options)
        self._polish = bool(options.get(POLISH_OPTION, True))  # exact once polished
        self._n = n
        self._P_indptr, self._P_indices, self._P_flat = upper_triangle_csc_indices(n)
        self._Px = np.zeros(self._P_flat.size)
        self._key: tuple[Any, ...] | None = None
        self._solver: Any = None

    def _build(self, ws: QPWorkspace, finite_upper: np.ndarray, finite_lower: np.ndarray) -> None:
        clarabel = self._clarabel
        spa = self._spa
        n = self._n
        n_eq, n_ineq = ws.n_eq, ws.n_ineq
        n_up, n_low = finite_upper.size, finite_lower.size
        n_rows = n_eq + n_up + n_low + n_ineq
        dense = np.zeros((n_rows, n))
        pattern = np.zeros((n_rows, n), dtype=bool)
        pattern[:n_eq] = True
        dense[n_eq + np.arange(n_up), finite_upper] = 1.0
        pattern[n_eq + np.arange(n_up), finite_upper] = True
        offset = n_eq + n_up
        dense[offset + np.arange(n_low), finite_lower] = -1.0
        pattern[offset + np.arange(n_low), finite_lower] = True
        pattern[offset + n_low :] = True
        columns, rows = np.nonzero(pattern.T)  # column-major traversal = CSC order
        self._A_flat = (rows * n + columns).astype(np.intp)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(columns, minlength=n), out=indptr[1:])
        self._dense = dense
        self._eq_rows = slice(0, n_eq)
        self._ineq_rows = slice(offset + n_low, n_rows)
        self._b = np.zeros(n_rows)
        self._finite_upper = finite_upper
        self._finite_lower = finite_lower
        self._fill(ws)
        P = spa.csc_matrix((self._Px.copy(), self._P_indices, self._P_indptr), shape=(n, n))
        A = spa.csc_matrix(
            (np.take(dense.reshape(-1), self._A_flat), rows.astype(np.int64), indptr),
            shape=(n_rows, n),
        )
        cones = []
        if n_eq:
            cones.append(clarabel.ZeroConeT(n_eq))
        if n_rows - n_eq:
            cones.append(clarabel.NonnegativeConeT(n_rows - n_eq))
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.presolve_enable = False
        for key, value in self._options.items():
            setattr(settings, key, value)
        self._solver = clarabel.DefaultSolver(P, ws.c.copy(), A, self._b.copy(), cones, settings)
        self._updatable = bool(self._solver.is_data_update_allowed())

    def _fill(self, ws: QPWorkspace) -> None:
        np.take(ws.H.reshape(-1), self._P_flat, out=self._Px)
        dense = self._dense
        b = self._b
        n_eq = ws.n_eq
        n_up = self._finite_upper.size
        n_low = self._finite_lower.size
        if n_eq:
            dense[self._eq_rows] = ws.A
            b[:n_eq] = ws.b
        b[n_eq : n_eq + n_up] = ws.ub[self._finite_upper]
        b[n_eq + n_up : n_eq + n_up + n_low] = -ws.lb[self._finite_lower]
        if ws.n_ineq:
            dense[self._ineq_rows] = ws.G
            b[self._ineq_rows] = ws.h

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        # the constraint pattern: row counts and which bounds are finite
        key = (
            ws.n_eq,
            ws.n_ineq,
            (ws.ub < DAQP_INFINITY).tobytes(),
            (ws.lb > -DAQP_INFINITY).tobytes(),
        )
        if self._solver is None or key != self._key or not self._updatable:
            finite_upper = np.flatnonzero(ws.ub < DAQP_INFINITY)
            finite_lower = np.flatnonzero(ws.lb > -DAQP_INFINITY)
            self._build(ws, finite_upper, finite_lower)
            self._key = key
        else:
            self._fill(ws)
            update: dict[str, Any] = {"P": self._Px, "q": ws.c, "b": self._b}
            if ws.n_eq or ws.n_ineq:
                update["A"] = np.take(self._dense.reshape(-1), self._A_flat)
            self._solver.update(**update)
        result = self._solver.solve()
        if result.status != self._clarabel.SolverStatus.Solved:
            raise QPSolveError(f"clarabel: {result.status}", solver=self.name, status=result.status)
        x = np.array(result.x, dtype=np.float64)
        return self._polished(ws, x, lambda: self._active_guess(ws, result))

    def _active_guess(self, ws: QPWorkspace, result: Any) -> tuple[np.ndarray, np.ndarray]:
        """The polish's first guess ``(upper, lower)``: row r is active when its slack is
        below its multiplier."""
        active = np.asarray(result.s) < np.asarray(result.z)
        n, n_eq = self._n, ws.n_eq
        n_up, n_low = self._finite_upper.size, self._finite_lower.size
        upper = np.zeros(n + ws.n_ineq, dtype=bool)
        lower = np.zeros(n, dtype=bool)
        upper[self._finite_upper] = active[n_eq : n_eq + n_up]
        lower[self._finite_lower] = active[n_eq + n_up : n_eq + n_up + n_low]
        upper[n:] = active[n_eq + n_up + n_low :]
        return upper, lower
