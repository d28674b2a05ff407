"""QPStep: one differential-IK QP per control tick, compiled once.

A controller needs, every tick, the displacement ``x = dt v`` of its controlled joints that
pink's QP gives for its tasks, limits and barriers, optionally inside a velocity box (the
motion shaper's). :class:`QPStep` is that, and nothing else:

- it is **compiled once** from the model, the controlled coordinates, the tasks, limits and
  barriers, the solver and an optional fallback solver: each pink object is analysed there, the
  common arm problem is recognised there (:mod:`pinkctl.qp.fused`), and it is compiled again
  only through :meth:`QPStep.recompile`, when the caller changes the set of objects;
- :meth:`QPStep.step` returns the displacement already clipped into the QP's simple bounds
  (active-set solvers meet inactive bounds only to their tolerance), or raises
  :class:`~pinkctl.qp.errors.QPSolveError` naming every solver's reason;
- ``reference=True`` gives the same interface over pink's own ``build_ik`` + qpsolvers (the
  slow, obviously-correct path the fast one is tested against).

Parameters of the objects (targets, costs, gains, limit values) are read on every tick; their
structure (a limit's ``indices``, a task's class) only when compiled.
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

from .diff_ik_qp import QPPlan
from .errors import QPSolveError
from .reference import reference_solve_ik
from .step_base import StepBase

__all__ = ["QPStep"]


class QPStep(StepBase):
    """A compiled differential-IK QP over the controlled coordinates (module docstring).

    Args:
        model: Pinocchio model of the configurations passed to :meth:`step`.
        controlled_v_indices: Tangent indices of the QP variables, in order.
        tasks: pink tasks of the objective.
        limits: pink limits (an empty sequence means none).
        barriers: pink barriers.
        solver: QP backend name (any installed qpsolvers name; ``"daqp"`` by default).
        fallback_solver: Backend tried when the first one fails, or None.
        damping: Tikhonov damping of the Hessian, >= 0.
        solver_options: Options of ``solver`` (checked by a trial solve).
        reference: Solve through pink's ``build_ik`` and qpsolvers instead.

    Raises:
        ValueError: An unknown solver, rejected options, bad indices or damping, or a limit
            or barrier that does not fit the model.
    """

    def __init__(
        self,
        model: pin.Model,
        controlled_v_indices: Sequence[int] | np.ndarray,
        *,
        tasks: Sequence[Task],
        limits: Sequence[Limit] = (),
        barriers: Sequence[Barrier] = (),
        solver: str = "daqp",
        fallback_solver: str | None = None,
        damping: float = 1e-12,
        solver_options: dict[str, Any] | None = None,
        reference: bool = False,
    ) -> None:
        self._model = model
        self._indices = np.asarray(controlled_v_indices, dtype=np.intp)
        self._reference = bool(reference)
        self._options = dict(solver_options or {})
        self._damping = float(damping)
        self._make_engines(model, self._indices, solver, fallback_solver, damping, self._options)
        self.recompile(tasks=tasks, limits=limits, barriers=barriers)

    # ------------------------------------------------------------------ compilation
    def recompile(
        self,
        *,
        tasks: Sequence[Task] | None = None,
        limits: Sequence[Limit] | None = None,
        barriers: Sequence[Barrier] | None = None,
    ) -> None:
        """Compile again for a new set of tasks, limits or barriers (None: keep the current)."""
        self._tasks = tuple(self._tasks if tasks is None else tasks)
        self._limits = tuple(self._limits if limits is None else limits)
        self._barriers = tuple(self._barriers if barriers is None else barriers)
        self._plans: list[QPPlan] = [
            engine.compile(self._tasks, self._limits, self._barriers) for engine in self._engines
        ]

    _tasks: tuple[Task, ...] = ()

    @property
    def tasks(self) -> tuple[Task, ...]:
        """The pink tasks of the objective."""
        return self._tasks

    @property
    def fused(self) -> bool:
        """Whether the tick is assembled in one pass (the common arm problem)."""
        return self._plans[0].fused is not None

    # ------------------------------------------------------------------ tick
    def step(
        self,
        configuration: Configuration,
        dt: float,
        v_lower: np.ndarray | None = None,
        v_upper: np.ndarray | None = None,
    ) -> np.ndarray:
        """Displacements ``x = dt v`` [rad or m] of the controlled coordinates for this tick,
        inside the QP's simple bounds and ``dt [v_lower, v_upper]``. A new array.

        Raises:
            QPSolveError: When no solver found a solution (every solver's reason in the
                message). Errors of pink objects at run time are reported the same way.
        """

        def attempt(k: int) -> np.ndarray:
            if self._reference:
                return self._reference_step(configuration, dt, self._solvers[k], v_lower, v_upper)
            engine = self._engines[k]
            return engine.clip_to_bounds(
                engine.step(self._plans[k], configuration, dt, v_lower, v_upper)
            )

        return self._first_solution(attempt)

    def _reference_step(
        self,
        configuration: Configuration,
        dt: float,
        solver: str,
        v_lower: np.ndarray | None,
        v_upper: np.ndarray | None,
    ) -> np.ndarray:
        v = reference_solve_ik(
            configuration,
            self._tasks,
            dt,
            controlled_v_indices=self._indices,
            solver=solver,
            damping=self._damping,
            limits=self._limits,
            barriers=self._barriers,
            solver_options=self._options if solver == self._solvers[0] else None,
            v_lower=v_lower,
            v_upper=v_upper,
        )[self._indices]
        if not np.isfinite(v).all():
            raise QPSolveError(f"{solver}: non-finite velocity", solver=solver)
        return v * dt
