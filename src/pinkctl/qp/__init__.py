"""The QP layer of the IK controller: pink's differential-IK problem, assembled fast.

- :class:`DiffIKQP`: assembles pink's QP over the controlled joints in preallocated buffers
  and solves it (DAQP directly by default; persistent OSQP/Clarabel; qpsolvers otherwise).
- :func:`reference_solve_ik`: the same problem through ``pink.build_ik`` + qpsolvers (the
  reference the fast path is tested against).
- :class:`QPProblem`: a read-only view of an assembled problem, for inspection and for
  cascades that add constraints before solving again.
- :class:`QPSolveError`: a tick without a usable solution.

Backends and accuracy are documented in :mod:`pinkctl.qp.backends`.
"""

from __future__ import annotations

from .backends import DEFAULT_SOLVER_OPTIONS, EXACT_SOLVERS, available_solvers
from .diff_ik_qp import DiffIKQP
from .errors import QPSolveError
from .problem import QPProblem
from .reference import reference_solve_ik

__all__ = [
    "DEFAULT_SOLVER_OPTIONS",
    "EXACT_SOLVERS",
    "DiffIKQP",
    "QPProblem",
    "QPSolveError",
    "available_solvers",
    "reference_solve_ik",
]
