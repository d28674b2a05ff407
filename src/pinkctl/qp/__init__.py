"""The QP layer of the IK controller: pink's differential-IK problem, assembled fast.

- :class:`DiffIKQP`: assembles pink's QP over the controlled joints in preallocated buffers
  and solves it (DAQP directly by default; persistent OSQP/Clarabel; ProxQP's dense solve on
  persistent buffers; qpsolvers otherwise). The everyday problem (frame task, posture task,
  configuration and velocity limits) is assembled in one pass (:mod:`pinkctl.qp.fused`);
  :meth:`DiffIKQP.solve_displacement` and :meth:`DiffIKQP.clip_to_bounds` are the
  controller's per-tick calls.
- :func:`reference_solve_ik`: the same problem through ``pink.build_ik`` + qpsolvers (the
  reference the fast path is tested against).
- :class:`QPProblem`: a read-only view of an assembled problem, for inspection and for
  cascades that add constraints before solving again.
- :class:`QPSolveError`: a tick without a usable solution.
- :class:`CascadeStep`: ``QPStep``'s interface over strictly prioritised levels of tasks
  (:mod:`pinkctl.qp.cascade`: the lexicographic cascade and the null-space projection).

Backends and accuracy are documented in :mod:`pinkctl.qp.backends`.
"""

from __future__ import annotations

from .backends import DEFAULT_SOLVER_OPTIONS, EXACT_SOLVERS, available_solvers
from .cascade_step import CascadeStep
from .diff_ik_qp import DiffIKQP
from .errors import QPSolveError
from .problem import QPProblem
from .reference import reference_solve_ik
from .step import QPStep

__all__ = [
    "CascadeStep",
    "DEFAULT_SOLVER_OPTIONS",
    "EXACT_SOLVERS",
    "DiffIKQP",
    "QPProblem",
    "QPSolveError",
    "QPStep",
    "available_solvers",
    "reference_solve_ik",
]
