"""CascadeStep: a control tick with strictly prioritised levels of pink tasks.

The same interface as :class:`~pinkctl.qp.step.QPStep` (``step(configuration, dt, v_lower,
v_upper)`` returns the clipped displacement ``x = dt v`` of the controlled coordinates), over
*levels* of tasks instead of one weighted sum: level 1's tasks are minimised first, level 2's
without increasing level 1's objective, and so on (:mod:`pinkctl.qp.cascade`).

Per tick:

- one :class:`~pinkctl.qp.DiffIKQP` assembles the last level's tasks with every limit and
  barrier (the box ``lb <= x <= ub`` and the rows ``G x <= h``): the barriers' objective terms
  join the last level (they are a regularisation, not a priority);
- one ``DiffIKQP`` per level above it assembles that level's tasks (objective only);
- ``method="cascade"``: the lexicographic cascade, one QP per level, each with every
  constraint; ``method="nullspace"``: the null-space projection, clipped into the box (no
  ``G`` rows allowed: extra non-box limits and barriers are rejected at construction).

Damping (Tikhonov, on every level's Hessian) is at least
:data:`~pinkctl.qp.cascade.MIN_LEVEL_DAMPING`: DAQP needs a positive-definite Hessian, and the
damping only picks the minimum-norm optimum of a level.
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

from .._validation import choice, real_number
from ..errors import InputError
from .cascade import (
    RANK_TOLERANCE,
    CascadeSolution,
    least_squares_form,
    lexicographic_solve,
    nullspace_solve,
)
from .diff_ik_qp import DiffIKQP, QPPlan
from .problem import QPProblem
from .step_base import StepBase

__all__ = ["CascadeStep"]


class CascadeStep(StepBase):
    """Strictly prioritised differential-IK tick over the controlled coordinates.

    Args:
        model: Pinocchio model of the configurations passed to :meth:`step`.
        controlled_v_indices: Tangent indices of the variables, in order.
        levels: pink tasks per level, highest priority first (at least one non-empty level).
        limits: pink limits, held at every level.
        barriers: pink barriers: rows held at every level, objective terms in the last one.
        solver: QP backend name (``"daqp"`` by default).
        fallback_solver: Backend of a second attempt when the first one fails, or None.
        damping: Tikhonov damping of every level's Hessian, >= 0 (at least
            :data:`~pinkctl.qp.cascade.MIN_LEVEL_DAMPING` is used).
        solver_options: Options of ``solver``.
        method: ``"cascade"`` (exact, one QP per level) or ``"nullspace"`` (projection).
        rank_tolerance: Relative singular-value threshold of the rank decisions.

    Raises:
        ValueError: Empty levels, an unknown method or solver, or
            ``"nullspace"`` with barriers or limits that are not simple bounds.
    """

    def __init__(
        self,
        model: pin.Model,
        controlled_v_indices: Sequence[int] | np.ndarray,
        *,
        levels: Sequence[Sequence[Task]],
        limits: Sequence[Limit] = (),
        barriers: Sequence[Barrier] = (),
        solver: str = "daqp",
        fallback_solver: str | None = None,
        damping: float = 1e-12,
        solver_options: dict[str, Any] | None = None,
        method: str = "cascade",
        rank_tolerance: float = RANK_TOLERANCE,
    ) -> None:
        self._method = choice(method, "method", ("cascade", "nullspace"))
        self._model = model
        self._indices = np.asarray(controlled_v_indices, dtype=np.intp)
        self._damping = real_number(damping, "damping", low=0.0)
        self._rank_tolerance = float(rank_tolerance)
        # the engines assemble the constraints and solve every level (damping added there)
        self._make_engines(model, self._indices, solver, fallback_solver, 0.0, solver_options)
        self._levels: tuple[tuple[Task, ...], ...] = ()
        self.last_solution: CascadeSolution | None = None
        self.recompile(levels=levels, limits=limits, barriers=barriers)

    def recompile(
        self,
        *,
        levels: Sequence[Sequence[Task]] | None = None,
        limits: Sequence[Limit] | None = None,
        barriers: Sequence[Barrier] | None = None,
    ) -> None:
        """Compile again for new levels, limits or barriers (None: keep the current)."""
        new_levels = self._levels if levels is None else tuple(tuple(level) for level in levels)
        if not new_levels or not any(new_levels):
            raise InputError("levels: at least one level with a task is needed")
        new_limits = tuple(self._limits if limits is None else limits)
        new_barriers = tuple(self._barriers if barriers is None else barriers)
        *upper, last = new_levels
        plans = [engine.compile(last, new_limits, new_barriers) for engine in self._engines]
        if self._method == "nullspace" and (new_barriers or plans[0].limit_plan.row_terms):
            raise InputError(
                "method 'nullspace' holds simple bounds only: barriers and limits with "
                "constraint rows need method 'cascade'"
            )
        level_engines = [
            DiffIKQP(self._model, self._indices, solver=self._solvers[0], damping=0.0)
            for _ in upper
        ]
        self._level_plans: list[tuple[DiffIKQP, QPPlan]] = [
            (engine, engine.compile(tasks)) for engine, tasks in zip(level_engines, upper)
        ]
        self._plans = plans
        self._levels = new_levels
        self._limits = new_limits
        self._barriers = new_barriers

    # ------------------------------------------------------------------ properties
    @property
    def levels(self) -> tuple[tuple[Task, ...], ...]:
        """The pink tasks of each level, highest priority first."""
        return self._levels

    @property
    def tasks(self) -> tuple[Task, ...]:
        """Every task, level by level."""
        return tuple(task for level in self._levels for task in level)

    @property
    def method(self) -> str:
        """``"cascade"`` or ``"nullspace"``."""
        return self._method

    @property
    def fused(self) -> bool:
        """Always False: a cascade assembles every level on its own."""
        return False

    # ------------------------------------------------------------------ tick
    def step(
        self,
        configuration: Configuration,
        dt: float,
        v_lower: np.ndarray | None = None,
        v_upper: np.ndarray | None = None,
    ) -> np.ndarray:
        """Displacements ``x = dt v`` [rad or m] of the controlled coordinates for this tick,
        inside the simple bounds and ``dt [v_lower, v_upper]``; the solution of every level is
        in :attr:`last_solution`. A new array.

        Raises:
            QPSolveError: When no solver solved the first level (reasons in the message).
        """
        objectives = []
        for engine, plan in self._level_plans:
            engine.assemble_plan(plan, configuration, dt)
            problem = engine.last_problem()
            assert problem is not None
            objectives.append((np.array(problem.H), np.array(problem.c)))

        def attempt(k: int) -> CascadeSolution:
            engine, plan = self._engines[k], self._plans[k]
            return self._solve(engine, plan, configuration, dt, v_lower, v_upper, objectives)

        solution = self._first_solution(attempt)
        self.last_solution = solution
        return solution.x

    def _solve(
        self,
        engine: DiffIKQP,
        plan: QPPlan,
        configuration: Configuration,
        dt: float,
        v_lower: np.ndarray | None,
        v_upper: np.ndarray | None,
        objectives: list[tuple[np.ndarray, np.ndarray]],
    ) -> CascadeSolution:
        engine.assemble_plan(plan, configuration, dt, v_lower, v_upper)
        assembled = engine.last_problem()
        assert assembled is not None
        # copies: the level solves overwrite the engine's buffers
        p = assembled
        constraints = QPProblem(*(np.array(a) for a in (p.H, p.c, p.G, p.h, p.A, p.b, p.lb, p.ub)))
        objectives = [*objectives, (constraints.H, constraints.c)]
        if self._method == "nullspace":
            tolerance = self._rank_tolerance
            least_squares = [
                least_squares_form(H, c, rank_tolerance=tolerance) for H, c in objectives
            ]
            return nullspace_solve(
                least_squares, lb=constraints.lb, ub=constraints.ub, rank_tolerance=tolerance
            )
        solution = lexicographic_solve(
            objectives,
            constraints,
            engine.solve_assembled,
            damping=self._damping,
            rank_tolerance=self._rank_tolerance,
        )
        engine.clip_to_bounds(solution.x)
        return solution
