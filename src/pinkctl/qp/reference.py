"""pink's path: pink's own QP, restricted to the controlled joints, solved by qpsolvers.

:func:`reference_solve_ik` is the slow, obviously-correct path the compiled QP
(:func:`~pinkctl.qp.compile_qp`) is tested against, and :class:`ReferenceQP` puts it behind
the compiled QP's per-tick verb (the controller's ``qp_path="pink"``). It builds the problem
with ``pink.build_ik``, keeps the controlled columns (``P[c, c]``, ``q[c]``, ``G[:, c]``; rows
of ``G`` that only involve held coordinates are dropped), adds the optional velocity bounds as
``dt * v_lower <= x <= dt * v_upper`` and calls ``qpsolvers.solve_problem``. When every
coordinate is controlled and no velocity bound is given, this is exactly
``pink.solve_ik(..., safety_break=False)``. qpsolvers has no ``"box"`` solver: on this path
``"box"`` is DAQP (the solver ``"box"`` uses for every problem with rows).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pink
import qpsolvers

from .compiled import TickQP, VelocityBox
from .errors import QPSolveError
from .selection import restrict_inequalities
from .solvers import BOX_SOLVER, qpsolvers_options
from .solvers.generic import qpsolvers_solution

__all__ = ["ReferenceQP", "reference_solve_ik"]


def qpsolvers_name(solver: str) -> str:
    """The qpsolvers name of ``solver`` (``"box"`` is DAQP on this path)."""
    return "daqp" if solver == BOX_SOLVER else solver


def reference_solve_ik(
    configuration: Any,
    tasks: Iterable[Any],
    dt: float,
    *,
    controlled_v_indices: Sequence[int] | np.ndarray,
    solver: str,
    damping: float = 1e-12,
    limits: Iterable[Any] = (),
    barriers: Iterable[Any] = (),
    v_lower: np.ndarray | None = None,
    v_upper: np.ndarray | None = None,
    solver_options: dict[str, Any] | None = None,
) -> np.ndarray:
    """Velocity from pink's ``build_ik`` restricted to the controlled coordinates: one
    :class:`ReferenceQP` solve without fallback.

    Args:
        configuration: ``pink.Configuration`` updated at the current ``q``.
        tasks: pink tasks.
        dt: Control period [s], > 0.
        controlled_v_indices: Controlled tangent indices (QP variable order).
        solver: Solver name (``"box"``: DAQP).
        damping: pink's Tikhonov damping, >= 0.
        limits: pink limits (empty: none, unlike pink's ``None`` which means its defaults).
        barriers: pink barriers.
        v_lower: Optional lower velocity bounds on the controlled coordinates, shape (n,).
        v_upper: Optional upper velocity bounds on the controlled coordinates, shape (n,).
        solver_options: Solver settings, overriding :data:`DEFAULT_SOLVER_OPTIONS`.

    Returns:
        Velocity in the tangent space, shape (nv,), zero on held coordinates.

    Raises:
        ValueError: Unknown solver or bad arguments.
        QPSolveError: The solver found no (finite) solution.
    """
    model = configuration.model
    qp = ReferenceQP(
        model,
        controlled_v_indices,
        tasks=list(tasks),
        limits=list(limits),
        barriers=list(barriers),
        solver=solver,
        damping=damping,
        solver_options=solver_options,
    )
    v = np.zeros(model.nv)
    v[qp.controlled_v_indices] = qp.solve(configuration, dt, v_lower, v_upper)
    return v


class ReferenceQP(TickQP):
    """pink's path behind the compiled QP's verb: ``solve(configuration, dt, lower, upper)``
    returns the controlled velocity of pink's problem (module docstring), the fallback solver
    tried when the solver fails.

    Takes the arguments of :func:`~pinkctl.qp.compile_qp`; an empty box is reported as pink
    reports it (``recover_outside_range`` does not apply).

    Raises:
        ValueError: An unknown solver or a negative damping.
    """

    def _solve(self, configuration: Any, dt: float, box: VelocityBox) -> np.ndarray:
        problem = self._problem(configuration, dt, box)
        reasons = []
        for k, solver in enumerate(self._names):
            name = qpsolvers_name(solver)
            options = qpsolvers_options(name, self._options if k == 0 else None)
            try:
                x = qpsolvers_solution(problem, name, options)
            except QPSolveError as error:
                reasons.append(f"{solver}: {error}")
                continue
            self._last_solver = name
            return x / dt
        raise QPSolveError("; ".join(reasons), solver=self._names[0])

    def _problem(self, configuration: Any, dt: float, box: VelocityBox) -> qpsolvers.Problem:
        """pink's problem (``build_ik``'s) over the controlled coordinates: ``P, q``
        restricted, ``G, h`` rows over held coordinates only dropped (None when none is left),
        and the box ``dt box`` (an absent side infinite; None without a box)."""
        problem = pink.build_ik(
            configuration,
            list(self._tasks),
            dt,
            damping=self._damping,
            limits=list(self._limits),
            barriers=list(self._barriers),
        )
        index = self._selection.indices  # copies: qpsolvers' DAQP reads contiguous buffers
        P, q = np.asarray(problem.P)[np.ix_(index, index)], np.asarray(problem.q)[index]
        G = h = None
        if problem.G is not None:
            G, h = restrict_inequalities(problem.G, problem.h, self._selection)
            if h.shape[0] == 0:
                G = h = None
        lb = ub = None
        lower, upper = box
        if lower is not None or upper is not None:
            lb = np.full(self.n, -np.inf) if lower is None else dt * lower
            ub = np.full(self.n, np.inf) if upper is None else dt * upper
        return qpsolvers.Problem(P, q, G, h, None, None, lb, ub)
