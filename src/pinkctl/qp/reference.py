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

from ..errors import InputError
from .compiled import TickQP
from .errors import QPSolveError
from .selection import ColumnSelection, restrict_inequalities
from .solvers import (
    BOX_SOLVER,
    SOLVER_ERRORS,
    available_solvers,
    missing_solver_message,
    qpsolvers_options,
)

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
    """Velocity from pink's ``build_ik`` restricted to the controlled coordinates.

    Args:
        configuration: ``pink.Configuration`` updated at the current ``q``.
        tasks: pink tasks.
        dt: Control period [s], > 0.
        controlled_v_indices: Controlled tangent indices (QP variable order).
        solver: Solver name (``"box"``: DAQP).
        damping: pink's Tikhonov damping.
        limits: pink limits (empty: none, unlike pink's ``None`` which means its defaults).
        barriers: pink barriers.
        v_lower: Optional lower velocity bounds on the controlled coordinates, shape (n,).
        v_upper: Optional upper velocity bounds on the controlled coordinates, shape (n,).
        solver_options: Solver settings, overriding :data:`DEFAULT_SOLVER_OPTIONS`.

    Returns:
        Velocity in the tangent space, shape (nv,), zero on held coordinates.

    Raises:
        ValueError: Unknown solver or bad arguments.
        QPSolveError: The solver found no solution.
    """
    if solver not in available_solvers():
        raise InputError(missing_solver_message(solver))
    solver = qpsolvers_name(solver)
    if not dt > 0.0:
        raise InputError(f"dt must be positive, got {dt!r}")
    nv = configuration.model.nv
    selection = ColumnSelection(nv, controlled_v_indices)
    n = selection.size
    problem = pink.build_ik(
        configuration,
        list(tasks),
        dt,
        damping=damping,
        limits=list(limits),
        barriers=list(barriers),
    )
    restricted = _restrict(problem, selection, _displacement_box(n, dt, v_lower, v_upper))
    try:
        result = qpsolvers.solve_problem(
            restricted, solver=solver, **qpsolvers_options(solver, solver_options)
        )
    except SOLVER_ERRORS as exc:  # the solver's own failure
        raise QPSolveError(f"{solver}: {exc}", solver=solver) from exc
    if not result.found or result.x is None:
        raise QPSolveError(f"{solver}: no solution found", solver=solver)
    v = np.zeros(nv)
    v[selection.indices] = np.asarray(result.x) / dt
    return v


def _displacement_box(
    n: int, dt: float, v_lower: np.ndarray | None, v_upper: np.ndarray | None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(dt v_lower, dt v_upper)`` over the QP variables, an absent side infinite; ``(None,
    None)`` without velocity bounds."""
    if v_lower is None and v_upper is None:
        return None, None
    lb = np.full(n, -np.inf) if v_lower is None else dt * np.asarray(v_lower, float).reshape(n)
    ub = np.full(n, np.inf) if v_upper is None else dt * np.asarray(v_upper, float).reshape(n)
    return lb, ub


def _restrict(
    problem: Any,
    selection: ColumnSelection,
    box: tuple[np.ndarray | None, np.ndarray | None],
) -> qpsolvers.Problem:
    """pink's problem (``build_ik``'s) over the controlled coordinates: ``P, q`` restricted,
    ``G, h`` rows over held coordinates only dropped (None when none is left), and the
    ``box``."""
    index = selection.indices
    P = np.asarray(problem.P)[np.ix_(index, index)]
    q = np.asarray(problem.q)[index]
    G = h = None
    if problem.G is not None:
        G, h = restrict_inequalities(problem.G, problem.h, selection)
        if h.shape[0] == 0:
            G = h = None
    return qpsolvers.Problem(P, q, G, h, None, None, *box)


class ReferenceQP(TickQP):
    """pink's path behind the compiled QP's verb: ``solve(configuration, dt, lower, upper)``
    returns the controlled velocity from :func:`reference_solve_ik`, the fallback solver tried
    when the solver fails.

    Takes the arguments of :func:`~pinkctl.qp.compile_qp` but ``recover_outside_range``
    (pink reports an empty box as infeasible).

    Raises:
        ValueError: An unknown solver or a negative damping.
    """

    def solve(
        self,
        configuration: Any,
        dt: float,
        lower: np.ndarray | None = None,
        upper: np.ndarray | None = None,
    ) -> np.ndarray:
        """The controlled velocity [rad/s or m/s], shape (n,), a new array.

        Raises:
            QPSolveError: Every solver failed (each one's reason in the message).
        """
        reasons = []
        index = self._selection.indices
        for k, solver in enumerate(self._names):
            try:
                v = reference_solve_ik(
                    configuration,
                    self._tasks,
                    dt,
                    controlled_v_indices=index,
                    solver=solver,
                    damping=self._damping,
                    limits=self._limits,
                    barriers=self._barriers,
                    solver_options=self._options if k == 0 else None,
                    v_lower=lower,
                    v_upper=upper,
                )[index]
                if not np.isfinite(v).all():
                    raise QPSolveError("non-finite velocity", solver=solver)
            except QPSolveError as error:
                reasons.append(f"{solver}: {error}")
                continue
            self._last_solver = qpsolvers_name(solver)
            return v
        raise QPSolveError("; ".join(reasons), solver=self._names[0])
