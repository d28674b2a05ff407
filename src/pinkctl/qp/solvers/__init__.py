"""QP solvers: each solves the problem held by a :class:`~pinkctl.qp.problem.QPWorkspace`.

A *solver* is named by the ``solver=`` / ``fallback_solver=`` arguments; its accuracy
(measured against DAQP on random IK problems, ``tests/test_qp_equivalence.py``):

- ``box`` (default): pinkctl's exact box-constrained QP (:mod:`pinkctl.qp.solvers.box`): the
  native kernel's primal-dual active-set method, warm-started, on problems whose only
  constraints are bounds (the everyday control tick); problems with inequality rows (barriers,
  extra limits) or equality rows, and problems the box QP hands back, go to DAQP. **Exact**.
  ``last_solver`` on a compiled QP says which one ran.
- ``daqp``: dual active-set, called directly (``daqp.solve``) on every problem, on the
  workspace's DAQP-shaped buffers; simple bounds are DAQP simple bounds, equality rows use
  sense 5. **Exact** (active set: exact up to rounding, about 1e-11 on displacements).
- ``quadprog``: Goldfarb-Idnani dual active-set, called directly. **Exact**; needs a strictly
  positive-definite Hessian (a posture or damping task gives one), else
  :class:`QPSolveError`.
- ``clarabel``: interior point, one persistent ``clarabel.DefaultSolver`` updated in place
  (re-created only when the constraint pattern changes: row count, which bounds are finite),
  tolerances ``tol_gap_abs = tol_gap_rel = tol_feas = 1e-10``, then **active-set polishing**
  (:mod:`pinkctl.qp.polish`): the KKT system on the interior point's active set is solved
  and kept when it verifies optimality. **Exact** whenever the polish verifies (every random
  test case); otherwise the interior-point solution, which on the flat directions of an IK
  objective can be off by up to ~1e-2 rad/s even at these tolerances.
- ``osqp``: ADMM, one persistent ``osqp.OSQP`` solver set up once with a fixed sparsity
  pattern (dense upper-triangular ``P``, ``A = [I; G; A_eq]``) and updated in place (``Px``,
  ``Ax``, ``q``, ``l``, ``u``, through its C solver object); set up again only when the row
  count changes; warm-started from the previous tick. ``eps_abs = eps_rel = 1e-9``,
  ``max_iter = 10000``, then the same active-set polish as Clarabel (OSQP's own polish is
  off: it prints to stdout), also tried when OSQP stops at its iteration limit. **Exact**
  when the polish verifies (every random test case), else within ~1e-8 rad/s.
- ``proxqp``: ProxQP's dense ``proxqp.dense.solve`` called directly on persistent buffers
  (bounds as rows ``[G; I]``, like qpsolvers poses them), then the same polish (guided by the
  returned multipliers). Defaults ``eps_abs = 1e-9``, ``eps_rel = 0`` (qpsolvers' default 1e-3
  makes ProxQP report feasible IK problems as primal infeasible) and
  ``primal_infeasibility_solving = True`` (even at 1e-9 it misreports some feasible degenerate
  problems, e.g. an acceleration limit plus a position barrier; it then returns the closest
  feasible point, which the polish verifies). Unpolished it is within ~1e-3 rad/s of the exact
  solution; polished, exact. ``solver_options={"backend": "sparse"}`` (ProxQP's own option)
  goes through qpsolvers.
- any other solver known to qpsolvers: through ``qpsolvers.solve_problem``, then the polish.

The polish first tries the unconstrained minimizer when the solver reports nothing active (one
LU solve: the usual tracking tick), else solves the KKT system on the reported active set: a
few microseconds to 20-40 us per tick on a 7-DoF arm. ``solver_options={"polish": False}``
trades the exactness of Clarabel/OSQP/ProxQP for that time. User ``solver_options`` override
the defaults key by key. A solver raises :class:`~pinkctl.qp.QPSolveError` for a problem it
cannot solve (its library's own errors, :data:`SOLVER_ERRORS`, included); anything else it
raises is a bug and propagates.
"""

from __future__ import annotations

import warnings
from typing import Any

from ...errors import InputError
from ..errors import QPSolveError
from ..problem import QPWorkspace
from .base import (
    BOX_SOLVER,
    DEFAULT_SOLVER,
    DEFAULT_SOLVER_OPTIONS,
    EXACT_SOLVERS,
    POLISH_OPTION,
    SOLVER_ERRORS,
    QPSolver,
    available_solvers,
    missing_solver_message,
    qpsolvers_options,
    solver_options,
)
from .box import BoxSolver
from .clarabel import ClarabelSolver
from .daqp import DaqpSolver
from .generic import QpsolversSolver
from .osqp import OsqpSolver
from .proxqp import ProxqpSolver
from .quadprog import QuadprogSolver

__all__ = [
    "BOX_SOLVER",
    "DEFAULT_SOLVER",
    "DEFAULT_SOLVER_OPTIONS",
    "EXACT_SOLVERS",
    "POLISH_OPTION",
    "SOLVER_ERRORS",
    "BoxSolver",
    "QPSolver",
    "ClarabelSolver",
    "DaqpSolver",
    "OsqpSolver",
    "ProxqpSolver",
    "QpsolversSolver",
    "QuadprogSolver",
    "available_solvers",
    "make_solver",
    "missing_solver_message",
    "qpsolvers_options",
    "solver_options",
]


def make_solver(solver: str, n: int, user_options: dict[str, Any] | None) -> QPSolver:
    """The solver ``solver`` over ``n`` variables, its options checked by a trial solve.

    Raises:
        ValueError: If ``solver`` is not installed, or rejects ``user_options`` (an unknown
            key or a value of the wrong type) on a trivial problem.
    """
    if solver not in available_solvers():
        raise InputError(missing_solver_message(solver))
    options = solver_options(solver, user_options)
    try:
        made = _construct(solver, n, options)
        if user_options:  # "box": DAQP's options, tried where they are used
            _trial_solve(made.daqp if isinstance(made, BoxSolver) else made, n)
    except (TypeError, AttributeError, ValueError) as exc:
        first_line = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise InputError(
            f"solver_options {user_options} rejected by {solver}: {first_line}"
        ) from exc
    return made


def _construct(solver: str, n: int, options: dict[str, Any]) -> QPSolver:
    """The object of an installed ``solver`` over ``n`` variables: its own class where
    pinkctl has one (ProxQP: its dense backend), else :class:`QpsolversSolver`."""
    if solver == BOX_SOLVER:
        return BoxSolver(options)
    if solver == "daqp":
        return DaqpSolver(options)
    if solver == "quadprog":
        return QuadprogSolver(options)
    if solver == "osqp":
        return OsqpSolver(n, options)
    if solver == "clarabel":
        return ClarabelSolver(n, options)
    if solver == "proxqp" and options.get("backend", "dense") == "dense":
        options.pop("backend", None)
        return ProxqpSolver(n, options)
    return QpsolversSolver(solver, options)


def _trial_solve(solver: QPSolver, n: int) -> None:
    """Solve ``min 1/2 |x|^2 - x_0`` within ``[-1, 1]`` (a failed solve is not an error:
    options such as an iteration cap of 1 are legitimate)."""
    workspace = QPWorkspace(max(n, 1))
    workspace.H_diagonal[:] = 1.0
    workspace.c[0] = -1.0
    workspace.lb[:] = -1.0
    workspace.ub[:] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            solver.solve(workspace)
        except QPSolveError as error:
            if isinstance(error.__cause__, (TypeError, AttributeError)):
                raise error.__cause__ from error
