"""Any other solver known to qpsolvers, then the active-set polish; and the one call of
qpsolvers that pink's path (:mod:`pinkctl.qp.reference`) and a cascade without solver chain
(:func:`~pinkctl.qp.cascade.qpsolvers_solve`) share with it."""

from __future__ import annotations

import warnings
from math import isfinite
from typing import Any

import numpy as np
import qpsolvers

from ..errors import QPSolveError
from ..problem import DAQP_INFINITY, QPProblem, QPWorkspace
from .base import EXACT_SOLVERS, SOLVER_ERRORS, QPSolver

__all__ = [
    "QpsolversSolver",
    "finite_solution",
    "no_solution",
    "qpsolvers_problem",
    "qpsolvers_solution",
    "solve_with_qpsolvers",
]


class QpsolversSolver(QPSolver):
    """Any solver through ``qpsolvers.solve_problem`` (infinite bounds passed as such)."""

    exact = False

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        self.name = name
        self.exact = name in EXACT_SOLVERS
        super().__init__(options)

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        has_bounds = bool(np.any(ws.lb > -DAQP_INFINITY) or np.any(ws.ub < DAQP_INFINITY))
        problem = qpsolvers_problem(ws, ws.n_ineq, ws.n_eq, has_bounds)
        solution = solve_with_qpsolvers(problem, self.name, self._options)
        x = finite_solution(solution)
        if x is None:
            raise no_solution(self.name, solution)
        # verified optimal even when the solver gave up or misreported infeasibility (ProxQP
        # does on some feasible, degenerate problems)
        failure = None if solution.found else no_solution(self.name, solution)
        return self._polished(ws, x, lambda: _active_guess(ws, solution, has_bounds), failure)


def solve_with_qpsolvers(
    problem: qpsolvers.Problem, solver: str, options: dict[str, Any]
) -> qpsolvers.Solution:
    """``qpsolvers.solve_problem`` with ``options`` (qpsolvers' own), warnings silenced.

    Raises:
        QPSolveError: The solver's own failure (:data:`SOLVER_ERRORS`): a failed tick.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return qpsolvers.solve_problem(problem, solver=solver, **options)
    except SOLVER_ERRORS as exc:
        raise QPSolveError(f"{solver}: {exc}", solver=solver) from exc


def qpsolvers_solution(
    problem: qpsolvers.Problem, solver: str, options: dict[str, Any]
) -> np.ndarray:
    """The minimiser qpsolvers' ``solver`` finds with ``options`` (qpsolvers' own).

    Raises:
        QPSolveError: The solver's failure, or no finite solution.
    """
    solution = solve_with_qpsolvers(problem, solver, options)
    x = finite_solution(solution)
    if not solution.found or x is None:
        raise no_solution(solver, solution)
    return x


def no_solution(solver: str, solution: qpsolvers.Solution) -> QPSolveError:
    """The error of a solve that found nothing, with the solver's status if it gave one."""
    status = (solution.extras or {}).get("info", None)
    status = getattr(status, "status", status)
    return QPSolveError(
        f"{solver}: no solution found" + (f" ({status})" if status else ""),
        solver=solver,
        status=status,
    )


def finite_solution(solution: qpsolvers.Solution) -> np.ndarray | None:
    """The solution's ``x`` as a float array, or None when absent or not finite."""
    if solution.x is None:
        return None
    x = np.asarray(solution.x, dtype=np.float64)
    return x if isfinite(x.dot(x)) else None


def qpsolvers_problem(
    problem: QPWorkspace | QPProblem, rows: int, equalities: int, bounds: bool
) -> qpsolvers.Problem:
    """A copy of ``problem`` for qpsolvers: its ``G, h`` when it has ``rows``, its ``A, b``
    when it has ``equalities``, its box when ``bounds`` (absent parts as None)."""
    G, h = (problem.G.copy(), problem.h.copy()) if rows else (None, None)
    A, b = (problem.A.copy(), problem.b.copy()) if equalities else (None, None)
    lb, ub = (problem.lb.copy(), problem.ub.copy()) if bounds else (None, None)
    return qpsolvers.Problem(problem.H.copy(), problem.c.copy(), G, h, A, b, lb, ub)


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
