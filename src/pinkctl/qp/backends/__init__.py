"""QP backends: solve a :class:`~pinkctl.qp.problem.QPWorkspace` with one solver.

Backends and their accuracy (measured against DAQP on random IK problems, see
``tests/test_qp_equivalence.py``):

- ``daqp`` (default): dual active-set, called directly (``daqp.solve``) on the workspace's
  DAQP-shaped buffers; simple bounds are DAQP simple bounds, equality rows use sense 5.
  **Exact** (active set: exact up to rounding, about 1e-11 on displacements). A problem with
  simple bounds only (the everyday control tick) goes first to the native kernel's exact box
  solver (:mod:`pinkctl.qp.box_qp`, warm-started from the previous tick's active set: DAQP's
  Python call costs more than the solve), and back to DAQP when that solver declines.
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
  solution; polished, exact. ``solver_options={"backend": "sparse"}`` goes through qpsolvers.
- any other solver known to qpsolvers: through ``qpsolvers.solve_problem``, then the polish.

The polish first tries the unconstrained minimizer when the solver reports nothing active (one
LU solve: the usual tracking tick), else solves the KKT system on the reported active set: a
few microseconds to 20-40 us per tick on a 7-DoF arm. ``solver_options={"polish": False}``
trades the exactness of Clarabel/OSQP/ProxQP for that time. User ``solver_options`` override
the defaults key by key.
"""

from __future__ import annotations

import warnings
from typing import Any

from ...errors import InputError
from ..errors import QPSolveError
from ..problem import QPWorkspace
from .base import (
    DEFAULT_SOLVER_OPTIONS,
    EXACT_SOLVERS,
    POLISH_OPTION,
    Backend,
    available_solvers,
    missing_solver_message,
    qpsolvers_options,
    solver_options,
)
from .clarabel import ClarabelBackend
from .daqp import DaqpBackend
from .generic import QpsolversBackend
from .osqp import OsqpBackend
from .proxqp import ProxqpBackend
from .quadprog import QuadprogBackend

__all__ = [
    "DEFAULT_SOLVER_OPTIONS",
    "EXACT_SOLVERS",
    "POLISH_OPTION",
    "Backend",
    "ClarabelBackend",
    "DaqpBackend",
    "OsqpBackend",
    "ProxqpBackend",
    "QpsolversBackend",
    "QuadprogBackend",
    "available_solvers",
    "missing_solver_message",
    "make_backend",
    "qpsolvers_options",
    "solver_options",
]


def make_backend(solver: str, n: int, user_options: dict[str, Any] | None) -> Backend:
    """Backend for ``solver`` over ``n`` variables, its options checked by a trial solve.

    Raises:
        ValueError: If ``solver`` is not installed, or rejects ``user_options`` (an unknown
            key or a value of the wrong type) on a trivial problem.
    """
    if solver not in available_solvers():
        raise InputError(missing_solver_message(solver))
    options = solver_options(solver, user_options)
    backend: Backend
    try:
        if solver == "daqp":
            backend = DaqpBackend(options)
        elif solver == "quadprog":
            backend = QuadprogBackend(options)
        elif solver == "osqp":
            backend = OsqpBackend(n, options)
        elif solver == "clarabel":
            backend = ClarabelBackend(n, options)
        elif solver == "proxqp" and options.get("backend", "dense") == "dense":
            options.pop("backend", None)
            backend = ProxqpBackend(n, options)
        else:
            backend = QpsolversBackend(solver, options)
        if user_options:
            _trial_solve(backend, n)
    except (TypeError, AttributeError, ValueError) as exc:
        first_line = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise InputError(
            f"solver_options {user_options} rejected by {solver}: {first_line}"
        ) from exc
    return backend


def _trial_solve(backend: Backend, n: int) -> None:
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
            backend.solve(workspace)
        except QPSolveError as error:
            if isinstance(error.__cause__, (TypeError, AttributeError)):
                raise error.__cause__ from error
