"""Any other solver known to qpsolvers, then the active-set polish."""

from __future__ import annotations

import warnings
from math import isfinite
from typing import Any

import numpy as np
import qpsolvers

from ..errors import QPSolveError
from ..problem import DAQP_INFINITY, QPWorkspace
from .base import EXACT_SOLVERS, SOLVER_ERRORS, QPSolver

__all__ = ["QpsolversSolver"]


class QpsolversSolver(QPSolver):
    """Any solver through ``qpsolvers.solve_problem`` (infinite bounds passed as such)."""

    exact = False

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        self.name = name
        self.exact = name in EXACT_SOLVERS
        super().__init__(options)

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        has_bounds = bool(np.any(ws.lb > -DAQP_INFINITY) or np.any(ws.ub < DAQP_INFINITY))
        solution = self._solve_problem(_problem(ws, has_bounds))
        x = _finite_solution(solution)
        if x is None:
            raise self._no_solution(solution)
        # verified optimal even when the solver gave up or misreported infeasibility (ProxQP
        # does on some feasible, degenerate problems)
        failure = None if solution.found else self._no_solution(solution)
        return self._polished(ws, x, lambda: _active_guess(ws, solution, has_bounds), failure)

    def _solve_problem(self, problem: qpsolvers.Problem) -> qpsolvers.Solution:
        """``qpsolvers.solve_problem`` with this solver's options, warnings silenced.

        Raises:
            QPSolveError: The solver's own failure (:data:`SOLVER_ERRORS`): a failed tick.
        """
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return qpsolvers.solve_problem(problem, solver=self.name, **self._options)
        except SOLVER_ERRORS as exc:
            raise QPSolveError(f"{self.name}: {exc}", solver=self.name) from exc

    def _no_solution(self, solution: qpsolvers.Solution) -> QPSolveError:
        """The error of a solve that found nothing, with the solver's status if it gave one."""
        status = (solution.extras or {}).get("info", None)
        status = getattr(status, "status", status)
        return QPSolveError(
            f"{self.name}: no solution found" + (f" ({status})" if status else ""),
            solver=self.name,
            status=status,
        )


def _finite_solution(solution: qpsolvers.Solution) -> np.ndarray | None:
    """The solution's ``x`` as a float array, or None when absent or not finite."""
    if solution.x is None:
        return None
    x = np.asarray(solution.x, dtype=np.float64)
    return x if isfinite(x.dot(x)) else None


def _problem(ws: QPWorkspace, has_bounds: bool) -> qpsolvers.Problem:
    """A copy of the workspace's problem for qpsolvers (absent parts as None)."""
    G, h = (ws.G.copy(), ws.h.copy()) if ws.n_ineq else (None, None)
    A, b = (ws.A.copy(), ws.b.copy()) if ws.n_eq else (None, None)
    lb, ub = (ws.lb.copy(), ws.ub.copy()) if has_bounds else (None, None)
    return qpsolvers.Problem(ws.H.copy(), ws.c.copy(), G, h, A, b, lb, ub)


def _active_guess(
    ws: QPWorkspace, solution: qpsolvers.Solution, has_bounds: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The polish's first guess of the active set ``(upper, lower)``: the multipliers of a
    converged solve (positive: upper side active), nothing otherwise."""
    n = ws.n
    upper = np.zeros(n + ws.n_ineq, dtype=bool)
    lower = np.zeros(n, dtype=bool)
    if solution.found:
        z_box = solution.z_box
        if has_bounds and z_box is not None and np.shape(z_box) == (n,):
            upper[:n] = np.asarray(z_box) > 0.0
            lower = np.asarray(z_box) < 0.0
        z = solution.z
        if ws.n_ineq and z is not None and np.shape(z) == (ws.n_ineq,):
            upper[n:] = np.asarray(z) > 0.0
    return upper, lower
