"""Strictly prioritised levels of pink tasks in the compiled QP's two verbs.

:func:`compile_cascade` once, :meth:`CascadeQP.solve` per tick, like
:func:`~pinkctl.qp.compile_qp`: ``solve(configuration, dt, lower, upper)`` returns the velocity
of the controlled coordinates; but over *levels* of tasks instead of one weighted sum: level 1's
tasks are minimised first, level 2's without increasing level 1's objective, and so on
(:mod:`pinkctl.qp.cascade`).

Per tick:

- the last level's tasks are assembled with every limit and barrier (the box
  ``lb <= x <= ub`` and the rows ``G x <= h``): the barriers' objective terms join the last
  level (they are a regularisation, not a priority);
- every level above it is assembled on its own (objective only);
- ``method="cascade"``: the lexicographic cascade, one QP per level with every constraint,
  solved by the solver, then the fallback (:class:`~pinkctl.qp.solving.SolverChain`);
  ``method="nullspace"``: the null-space projection, clipped into the box (no ``G`` rows
  allowed: extra non-box limits and barriers are rejected at compile time).

Damping (Tikhonov, on every level's Hessian) is at least
:data:`~pinkctl.qp.cascade.MIN_LEVEL_DAMPING`: DAQP needs a positive-definite Hessian, and the
damping only picks the minimum-norm optimum of a level. Level problems carry equality rows, so
with ``solver="box"`` they go to DAQP (only a first level without rows meets the box QP).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pinocchio as pin
from pink import Configuration
from pink.barriers import Barrier
from pink.limits import Limit
from pink.tasks import Task

from .._validation import choice
from ..errors import InputError
from .assembly import Assembly
from .cascade import (
    RANK_TOLERANCE,
    CascadeSolution,
    least_squares_form,
    lexicographic_solve,
    nullspace_solve,
)
from .compiled import CompiledQP, VelocityBox
from .problem import QPProblem, QPWorkspace
from .solvers import DEFAULT_SOLVER

__all__ = ["CascadeQP", "compile_cascade"]


class CascadeQP(CompiledQP):
    """Strictly prioritised differential-IK tick over the controlled coordinates, compiled
    once (module docstring); built by :func:`compile_cascade`. A :class:`CompiledQP` whose
    own problem (:meth:`~CompiledQP.build`) is the last level's with every constraint.

    Args:
        model: Pinocchio model of the configurations passed to :meth:`~TickQP.solve`.
        controlled_v_indices: Tangent indices of the variables, in order.
        levels: pink tasks per level, highest priority first (at least one non-empty level).
        limits: pink limits, held at every level.
        barriers: pink barriers: rows held at every level, objective terms in the last one.
        solver: Solver name (``"box"`` by default; see :func:`~pinkctl.qp.compile_qp`).
        fallback_solver: Solver of a level whose solver failed, or None.
        damping: Tikhonov damping of every level's Hessian, >= 0 (at least
            :data:`~pinkctl.qp.cascade.MIN_LEVEL_DAMPING` is used).
        solver_options: Options of ``solver``.
        recover_outside_range: As :func:`~pinkctl.qp.compile_qp`'s.
        method: ``"cascade"`` (exact, one QP per level) or ``"nullspace"`` (projection).
        rank_tolerance: Relative singular-value threshold of the rank decisions.

    Attributes:
        last_solution: Every level's solution of the latest tick, over the displacement
            ``x = v dt`` (the QP variable), or None before the first tick.

    Raises:
        ValueError: Empty levels, an unknown method or solver, or ``"nullspace"`` with
            barriers or limits that are not simple bounds.
    """

    def __init__(
        self,
        model: pin.Model,
        controlled_v_indices: Sequence[int] | np.ndarray,
        *,
        levels: Sequence[Sequence[Task]],
        limits: Sequence[Limit] = (),
        barriers: Sequence[Barrier] = (),
        solver: str = DEFAULT_SOLVER,
        fallback_solver: str | None = None,
        damping: float = 1e-12,
        solver_options: dict[str, Any] | None = None,
        recover_outside_range: bool = True,
        method: str = "cascade",
        rank_tolerance: float = RANK_TOLERANCE,
    ) -> None:
        self._method = choice(method, "method", ("cascade", "nullspace"))
        self._levels = tuple(tuple(level) for level in levels)
        if not self._levels or not any(self._levels):
            raise InputError("levels: at least one level with a task is needed")
        self._rank_tolerance = float(rank_tolerance)
        # the compiled QP of the last level with every constraint; the damping is added per
        # level by the cascade
        super().__init__(
            model,
            controlled_v_indices,
            tasks=self._levels[-1],
            limits=limits,
            barriers=barriers,
            solver=solver,
            fallback_solver=fallback_solver,
            damping=damping,
            solver_options=solver_options,
            recover_outside_range=recover_outside_range,
        )
        self._tasks = tuple(task for level in self._levels for task in level)
        self._fused = False
        if self._method == "nullspace" and self._assembly.has_rows:
            raise InputError(
                "method 'nullspace' holds simple bounds only: barriers and limits with "
                "constraint rows need method 'cascade'"
            )
        self._upper: list[tuple[QPWorkspace, Assembly]] = []
        for tasks in self._levels[:-1]:
            level_ws = QPWorkspace(self.n)
            assembly = Assembly(
                model, self._selection, level_ws, tasks=tasks, limits=(), barriers=()
            )
            self._upper.append((level_ws, assembly))
        self.last_solution: CascadeSolution | None = None

    def _solve(self, configuration: Configuration, dt: float, box: VelocityBox) -> np.ndarray:
        """Every level's solution (displacements) goes to :attr:`last_solution`."""
        objectives = []
        for level_ws, assembly in self._upper:
            assembly.write(configuration, dt, 0.0)
            objectives.append((level_ws.H.copy(), level_ws.c.copy()))
        self._assembly.write(configuration, dt, 0.0, *box)
        self._has_problem = True
        recovery = self._recovery(dt, box)
        if recovery is not None:
            recovery()
        constraints = self._ws.problem().copy()  # the level solves reuse the buffers
        objectives.append((constraints.H, constraints.c))
        solution = self._solve_levels(objectives, constraints)
        self.last_solution = solution
        return solution.x / dt

    def _solve_levels(
        self, objectives: list[tuple[np.ndarray, np.ndarray]], constraints: QPProblem
    ) -> CascadeSolution:
        if self._method == "nullspace":
            tolerance = self._rank_tolerance
            least_squares = [
                least_squares_form(H, c, rank_tolerance=tolerance) for H, c in objectives
            ]
            self._last_solver = None
            return nullspace_solve(
                least_squares, lb=constraints.lb, ub=constraints.ub, rank_tolerance=tolerance
            )
        solution = lexicographic_solve(
            objectives,
            constraints,
            self._chain.solve_problem,
            damping=self._damping,
            rank_tolerance=self._rank_tolerance,
        )
        self._last_solver = self._chain.last_solver
        np.maximum(solution.x, constraints.lb, out=solution.x)
        np.minimum(solution.x, constraints.ub, out=solution.x)
        return solution

    # ------------------------------------------------------------------ properties
    @property
    def levels(self) -> tuple[tuple[Task, ...], ...]:
        """The pink tasks of each level, highest priority first."""
        return self._levels

    @property
    def method(self) -> str:
        """``"cascade"`` or ``"nullspace"``."""
        return self._method


#: Compile a strictly prioritised differential-IK tick: :class:`CascadeQP`'s arguments.
compile_cascade = CascadeQP
