"""ProxQP's dense solver on persistent buffers, then the active-set polish."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import InputError
from ..errors import QPSolveError
from ..problem import QPWorkspace
from .base import QPSolver

__all__ = ["ProxqpSolver"]


class ProxqpSolver(QPSolver):
    """ProxQP's dense ``solve`` called directly on persistent row buffers.

    The simple bounds are rows of ProxQP's inequality block, ``[G; I] x`` between
    ``[-inf; lb]`` and ``[h; ub]`` (as qpsolvers poses them, minus its per-call conversions).
    The one-shot ``proxqp.dense.solve`` is used rather than a persistent ``proxqp.dense.QP``:
    with the same settings the latter stalled for tens of thousands of iterations on some
    self-collision ticks that the one-shot solve finishes in three. Multipliers
    ``z = [z_rows, z_box]`` guide the active-set polish (positive: upper side active).
    """

    name = "proxqp"
    exact = False

    def __init__(self, n: int, options: dict[str, Any]) -> None:
        from proxsuite import proxqp  # noqa: PLC0415

        super().__init__(options)
        self._solve = proxqp.dense.solve
        try:  # reject unknown or mistyped options here, not on the first control tick
            self._solve(np.eye(1), np.zeros(1), None, None, None, None, None, **self._options)
        except TypeError as exc:
            first_line = str(exc).splitlines()[0]
            raise InputError(f"invalid ProxQP options {self._options}: {first_line}") from exc
        self._n = n
        self._rows = -1
        statuses = proxqp.QPSolverOutput
        self._solved = statuses.PROXQP_SOLVED
        #: Stopped before the tolerance or at the closest feasible point: the polish may
        #: still find the exact solution.
        self._unfinished = (
            statuses.PROXQP_MAX_ITER_REACHED,
            statuses.PROXQP_SOLVED_CLOSEST_PRIMAL_FEASIBLE,
        )

    def _resize(self, rows: int) -> None:
        n = self._n
        self._rows = rows
        self._C = np.zeros((rows + n, n))
        self._C[rows:] = np.eye(n)
        self._l = np.full(rows + n, -np.inf)
        self._u = np.zeros(rows + n)

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        results = self._run(ws)
        status = results.info.status
        failure = None
        if status != self._solved:
            failure = QPSolveError(f"proxqp: {status.name}", solver=self.name, status=status)
            if status not in self._unfinished:
                raise failure
        x = np.array(results.x, dtype=np.float64)
        return self._polished(ws, x, lambda: _active_guess(self._n, ws.n_ineq, results.z), failure)

    def _run(self, ws: QPWorkspace) -> Any:
        """ProxQP's dense solve of the workspace's problem, its rows ``[G; I]`` between
        ``[-inf; lb]`` and ``[h; ub]``.

        Raises:
            QPSolveError: ProxQP's own failure on this data (``ValueError``, ``RuntimeError``).
        """
        rows = ws.n_ineq
        if rows != self._rows:
            self._resize(rows)
        C, lower, upper = self._C, self._l, self._u
        if rows:
            C[:rows] = ws.G
            upper[:rows] = ws.h
        lower[rows:] = ws.lb
        upper[rows:] = ws.ub
        A, b = (ws.A, ws.b) if ws.n_eq else (None, None)
        try:
            return self._solve(ws.H, ws.c, A, b, C, lower, upper, **self._options)
        except (ValueError, RuntimeError) as exc:
            raise QPSolveError(f"proxqp: {exc}", solver=self.name) from exc


def _active_guess(n: int, rows: int, z: Any) -> tuple[np.ndarray, np.ndarray]:
    """The polish's first guess of the active set ``(upper, lower)`` from ProxQP's
    multipliers ``z = [rows, box]`` (positive: upper side active)."""
    z = np.asarray(z)
    hint = np.empty(n + rows, dtype=bool)
    np.greater(z[rows:], 0.0, out=hint[:n])
    np.greater(z[:rows], 0.0, out=hint[n:])
    return hint, z[rows:] < 0.0
