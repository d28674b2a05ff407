"""OSQP: one persistent solver updated in place, then the active-set polish."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import QPSolveError
from ..problem import DAQP_INFINITY, QPWorkspace
from .base import QPSolver, upper_triangle_csc_indices

__all__ = ["OsqpSolver"]


class OsqpSolver(QPSolver):
    """One persistent OSQP solver updated in place (fixed sparsity pattern)."""

    name = "osqp"
    exact = False

    def __init__(self, n: int, options: dict[str, Any]) -> None:
        import osqp  # noqa: PLC0415
        import scipy.sparse as spa  # noqa: PLC0415

        self._osqp = osqp
        self._spa = spa
        super().__init__(options)
        # OSQP's own polish prints to stdout when nothing is active; we polish ourselves.
        self._options["polish"] = False
        self._n = n
        self._P_indptr, self._P_indices, self._P_flat = upper_triangle_csc_indices(n)
        self._Px = np.zeros(self._P_flat.size)
        self._rows = -1
        self._solver: Any = None

    def _setup(self, ws: QPWorkspace) -> None:
        n = self._n
        rows = ws.n_ineq + ws.n_eq
        spa = self._spa
        P = spa.csc_matrix(
            (np.take(ws.H.reshape(-1), self._P_flat), self._P_indices, self._P_indptr),
            shape=(n, n),
        )
        # A = [I; G; A_eq] with every entry of G and A_eq structurally present.
        self._A_block = np.zeros((n, 1 + rows))  # row j = column j of A (CSC data order)
        self._A_block[:, 0] = 1.0
        self._A_block[:, 1:] = ws.daqp_matrix.T
        indices = np.empty((n, 1 + rows), dtype=np.int64)
        indices[:, 0] = np.arange(n)
        indices[:, 1:] = n + np.arange(rows)
        A = spa.csc_matrix(
            (self._A_block.reshape(-1).copy(), indices.reshape(-1), np.arange(n + 1) * (1 + rows)),
            shape=(n + rows, n),
        )
        solver = self._osqp.OSQP()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            solver.setup(
                P,
                ws.c.copy(),
                A,
                ws.daqp_lower.copy(),
                ws.daqp_upper.copy(),
                **self._options,
            )
        self._solver = solver
        self._core = solver._solver  # the C solver object behind the Python wrapper
        self._rows = rows
        statuses = self._osqp.SolverStatus
        self._solved = statuses.OSQP_SOLVED
        #: Stopped before the tolerance: the polish may still recover the exact solution.
        self._unfinished = (statuses.OSQP_SOLVED_INACCURATE, statuses.OSQP_MAX_ITER_REACHED)

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        self._load(ws)
        core = self._core
        core.solve()
        info = core.info
        status = info.status_val
        failure = None
        if status != self._solved:
            failure = QPSolveError(f"osqp: {info.status}", solver=self.name, status=info.status)
            if status not in self._unfinished:
                raise failure
        solution = core.solution
        x = np.array(solution.x, dtype=np.float64)
        return self._polished(ws, x, lambda: _active_guess(ws, x, np.asarray(solution.y)), failure)

    def _load(self, ws: QPWorkspace) -> None:
        """Give OSQP the workspace's problem: a new setup when the row count changed, else
        an update of its C solver in place (the Python wrapper's update and solve rebuild
        caches and info namespaces on each call); ``l, u`` clipped to ``+-OSQP_INFTY``."""
        rows = ws.n_ineq + ws.n_eq
        if self._solver is None or rows != self._rows:
            self._setup(ws)
            self._lower = np.empty(self._n + rows)
            self._upper = np.empty(self._n + rows)
            return
        np.take(ws.H.reshape(-1), self._P_flat, out=self._Px)
        np.maximum(ws.daqp_lower, -DAQP_INFINITY, out=self._lower)
        np.minimum(ws.daqp_upper, DAQP_INFINITY, out=self._upper)
        core = self._core
        core.update_data_vec(ws.c, self._lower, self._upper)
        if rows:
            self._A_block[:, 1:] = ws.daqp_matrix.T
            core.update_data_mat(self._Px, None, self._A_block.reshape(-1), None)
        else:
            core.update_data_mat(self._Px, None, None, None)


def _active_guess(ws: QPWorkspace, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The polish's first guess of the active set ``(upper, lower)`` from OSQP's duals ``y``.

    OSQP's rule: row i is active on its upper side when ``u_i - a_i x < y_i``, on its lower
    side when ``a_i x - l_i < -y_i`` (rows: ``[I; G; A_eq]``).
    """
    n = ws.n
    ax = np.concatenate((x, ws.G @ x)) if ws.n_ineq else x
    upper = (ws.daqp_upper[: n + ws.n_ineq] - ax) < y[: n + ws.n_ineq]
    lower = (x - ws.lb) < -y[:n]
    return upper, lower
