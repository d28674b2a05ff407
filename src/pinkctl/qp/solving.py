"""The solver, then the fallback: one tick's problem solved, or every reason why not.

:class:`SolverChain` holds the solvers of a compiled QP (``solver``, then
``fallback_solver``) and solves the problem a :class:`~pinkctl.qp.problem.QPWorkspace` holds:

- the bounds are checked first (``lb <= ub``, no NaN in ``h``) unless the caller vouches for
  them and the solver is exact (an exact solver reports an empty box itself); an empty box
  that motion limits explain is repaired by the caller's ``recover``
  (:func:`~pinkctl.qp.recovery.recover_empty_box`) before the check, or after an exact
  solver reported it;
- a solver's failure (:class:`~pinkctl.qp.QPSolveError`, which every solver raises for a
  problem it cannot solve, its library's own errors included) or a non-finite solution hands
  the problem to the next solver; nothing else is caught: any other exception is a bug and
  propagates;
- when every solver failed, one :class:`~pinkctl.qp.QPSolveError` names each solver's reason,
  made as specific as the problem allows (:func:`~pinkctl.qp.recovery.diagnose`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import isfinite
from typing import Any

import numpy as np

from .errors import QPSolveError
from .problem import QPProblem, QPWorkspace
from .recovery import diagnose
from .solvers import QPSolver, make_solver

__all__ = ["Recovery", "SolverChain"]

#: Repairs the workspace's empty box where motion limits explain it; True when it was empty.
Recovery = Callable[[], bool]


class SolverChain:
    """The solvers of a QP, tried in turn (module docstring).

    Args:
        n: Number of variables.
        tangent_indices: Tangent index of each variable (for the failure reasons).
        solvers: Solver names, first the solver, then the fallback if any.
        solver_options: Options of the first solver (the fallback keeps its defaults).

    Attributes:
        last_solver: Name of the solver that produced the latest solution (``"box"`` or
            ``"daqp"`` for the ``"box"`` solver), or None before the first one.

    Raises:
        ValueError: An unknown solver or rejected options.
    """

    def __init__(
        self,
        n: int,
        tangent_indices: np.ndarray,
        solvers: Sequence[str],
        solver_options: dict[str, Any] | None = None,
    ) -> None:
        self.solvers: list[QPSolver] = [
            make_solver(name, n, solver_options if k == 0 else None)
            for k, name in enumerate(solvers)
        ]
        self.names = [solver.name for solver in self.solvers]
        self._indices = tangent_indices
        self._bounds_ok = np.zeros(n, dtype=bool)
        self._problem_workspace: QPWorkspace | None = None
        self.last_solver: str | None = None

    @property
    def exact(self) -> bool:
        """Whether the first solver's solutions are exact up to rounding."""
        return self.solvers[0].exact

    def solve(
        self,
        ws: QPWorkspace,
        *,
        trusted: bool,
        recover: Recovery | None = None,
        clip: bool = True,
    ) -> np.ndarray:
        """The minimiser ``x`` of the workspace's problem, a new array.

        Args:
            ws: The workspace holding the problem.
            trusted: The box can only come from configuration and velocity limits (see
                :meth:`~pinkctl.qp.assembly.Assembly.write`).
            recover: Repairs an empty box that motion limits explain, or None.
            clip: Clip ``x`` into ``lb <= x <= ub`` (solvers meet inactive bounds only to
                their tolerance).

        Raises:
            QPSolveError: Every solver failed (each one's reason in the message).
        """
        failures: list[QPSolveError] = []
        for solver in self.solvers:
            try:
                x = self._attempt(solver, ws, not (trusted and solver.exact), recover)
            except QPSolveError as error:
                failures.append(error)
                continue
            self.last_solver = solver.last_name
            if clip:
                np.maximum(x, ws.lb, out=x)
                np.minimum(x, ws.ub, out=x)
            return x
        reason = "; ".join(f"{name}: {error}" for name, error in zip(self.names, failures))
        first = failures[0]
        raise QPSolveError(reason, solver=first.solver, status=first.status)

    def solve_problem(self, problem: QPProblem) -> np.ndarray:
        """The minimiser of ``problem`` (copied into this chain's own buffers first; its
        bounds are checked), not clipped: e.g. one level of a cascade, with equality rows.

        Raises:
            QPSolveError: Every solver failed.
            ValueError: ``problem`` has the wrong size.
        """
        ws = self._problem_workspace
        if ws is None:
            ws = self._problem_workspace = QPWorkspace(self._bounds_ok.shape[0])
        ws.load(problem)
        return self.solve(ws, trusted=False, clip=False)

    def _attempt(
        self, solver: QPSolver, ws: QPWorkspace, check: bool, recover: Recovery | None
    ) -> np.ndarray:
        """One solver on the workspace's problem (module docstring)."""
        if check:
            self._check_bounds(solver, ws, recover)
        try:
            x = solver.solve(ws)
        except QPSolveError as error:
            if check or recover is None or not recover():
                raise diagnose(ws, self._indices, error) from error
            try:  # again, once ``recover`` repaired the empty box the solver reported
                x = solver.solve(ws)
            except QPSolveError as retry_error:
                raise diagnose(ws, self._indices, retry_error) from retry_error
        if not isfinite(x.dot(x)):
            raise QPSolveError(
                "solution contains NaN or infinite values",
                solver=solver.name,
                status="nan",
            )
        return x

    def _check_bounds(self, solver: QPSolver, ws: QPWorkspace, recover: Recovery | None) -> None:
        """Repair an empty box motion limits explain (``recover``), then check ``lb <= ub``
        (NaN bounds included: DAQP would silently ignore them) and that ``h`` has no NaN.

        Raises:
            QPSolveError: Inconsistent bounds, made specific by
                :func:`~pinkctl.qp.recovery.diagnose`.
        """
        if recover is not None:
            recover()
        if np.count_nonzero(np.less_equal(ws.lb, ws.ub, out=self._bounds_ok)) != ws.n or (
            ws.n_ineq and np.count_nonzero(np.isnan(ws.h))
        ):
            error = QPSolveError("inconsistent bounds", solver=solver.name, status=None)
            raise diagnose(ws, self._indices, error)
