"""Reference solution: pink's own QP, restricted to the controlled joints, via qpsolvers.

:func:`reference_solve_ik` is the slow, obviously-correct path the fast
:class:`pinkctl.qp.DiffIKQP` is tested against. It builds the problem with ``pink.build_ik``,
keeps the controlled columns (``P[c, c]``, ``q[c]``, ``G[:, c]``; rows of ``G`` that only
involve held coordinates are dropped), adds the optional velocity bounds as
``dt * v_lower <= x <= dt * v_upper`` and calls ``qpsolvers.solve_problem``. When every
coordinate is controlled and no velocity bound is given, this is exactly
``pink.solve_ik(..., safety_break=False)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pink
import qpsolvers

from ..errors import InputError
from .backends import available_solvers, qpsolvers_options
from .errors import QPSolveError
from .selection import ColumnSelection, restrict_inequalities

__all__ = ["reference_solve_ik"]


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
        solver: qpsolvers solver name.
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
        raise InputError(f"unknown QP solver {solver!r}; installed solvers: {available_solvers()}")
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
    index = selection.indices
    P = np.asarray(problem.P)[np.ix_(index, index)]
    q = np.asarray(problem.q)[index]
    G = h = None
    if problem.G is not None:
        G, h = restrict_inequalities(problem.G, problem.h, selection)
        if h.shape[0] == 0:
            G = h = None
    lb = ub = None
    if v_lower is not None or v_upper is not None:
        lb = np.full(n, -np.inf)
        ub = np.full(n, np.inf)
        if v_lower is not None:
            lb = dt * np.asarray(v_lower, dtype=np.float64).reshape(n)
        if v_upper is not None:
            ub = dt * np.asarray(v_upper, dtype=np.float64).reshape(n)
    restricted = qpsolvers.Problem(P, q, G, h, None, None, lb, ub)
    result = qpsolvers.solve_problem(
        restricted, solver=solver, **qpsolvers_options(solver, solver_options)
    )
    if not result.found or result.x is None:
        raise QPSolveError(f"{solver}: no solution found", solver=solver)
    v = np.zeros(nv)
    v[index] = np.asarray(result.x) / dt
    return v
