"""The QP layer of the IK controller: pink's differential-IK problem in two verbs.

- :func:`compile_qp` (once) -> :class:`CompiledQP`, whose :meth:`~CompiledQP.solve`
  ``(configuration, dt, lower, upper)`` is the per-tick call: the velocity of the controlled
  coordinates, the fallback solver inside it. Structure changes go through compiling again.
- :func:`compile_cascade` -> :class:`CascadeQP`: the same two verbs over strictly prioritised
  levels of tasks (:mod:`pinkctl.qp.cascade`: the lexicographic cascade and the null-space
  projection).
- :class:`ReferenceQP` and :func:`reference_solve_ik`: pink's path (``pink.build_ik`` +
  qpsolvers), the reference the compiled QP is tested against, behind the same verb.
- :class:`QPProblem`: a read-only view of one tick's problem (:meth:`CompiledQP.build`).
- :class:`QPSolveError`: a tick without a usable solution.
- :class:`BallRangeLimit`: a pink limit on the rotation angle of ball joints (their range).
- :class:`CollisionLimit`: velocity-damper rows keeping a robot's pairs (self, obstacles) a
  margin apart (:mod:`pinkctl.qp.collision_limit`).

Solvers (``"box"``, the default, ``"daqp"``, ``"quadprog"``, ...) and their accuracy are
documented in :mod:`pinkctl.qp.solvers`; how a tick's problem is written in
:mod:`pinkctl.qp.assembly`.
"""

from __future__ import annotations

from .ball_range_limit import BallRangeLimit
from .cascade_qp import CascadeQP, compile_cascade
from .collision_limit import BRAKING_SHARE, CollisionLimit, CollisionRows
from .compiled import CompiledQP, TickQP, compile_qp
from .errors import QPSolveError
from .problem import QPProblem
from .reference import ReferenceQP, reference_solve_ik
from .solvers import (
    BOX_SOLVER,
    DEFAULT_SOLVER,
    DEFAULT_SOLVER_OPTIONS,
    EXACT_SOLVERS,
    available_solvers,
    missing_solver_message,
)
from .solving import SolverChain

__all__ = [
    "BOX_SOLVER",
    "BRAKING_SHARE",
    "BallRangeLimit",
    "CascadeQP",
    "CollisionLimit",
    "CollisionRows",
    "CompiledQP",
    "DEFAULT_SOLVER",
    "DEFAULT_SOLVER_OPTIONS",
    "EXACT_SOLVERS",
    "QPProblem",
    "QPSolveError",
    "ReferenceQP",
    "SolverChain",
    "TickQP",
    "available_solvers",
    "compile_cascade",
    "compile_qp",
    "missing_solver_message",
    "reference_solve_ik",
]
