"""One-shot and global inverse kinematics.

- :func:`solve_ik`: local solve from a seed (one-shot IK, warm-started tracking).
- :func:`find_ik`: global search with seeded random restarts, validation callback and
  closest-to-seed selection (TRAC-IK / CoppeliaSim ``findConfig`` style).
- :class:`IKSolver`: build once, query many times (both of the above).
- :func:`solve_ik_batch`: many targets, optionally over several processes.

Methods (``method=``): ``"lm"`` (default), ``"dls"``, ``"pinv"``, ``"pinv_undamped"``,
``"transpose"``, ``"qp"`` (pink + DAQP). Goals: full pose, position only, position plus an
approach axis, on a point offset from the frame; several frames at once via a mapping.
"""

from __future__ import annotations

from .batch import solve_ik_batch
from .methods import (
    DampedLeastSquares,
    IKMethod,
    JacobianTranspose,
    LevenbergMarquardt,
    PseudoInverse,
    UndampedPseudoInverse,
    available_methods,
    make_method,
)
from .result import IKResult
from .solver import IKSolver, find_ik, solve_ik

__all__ = [
    "DampedLeastSquares",
    "IKMethod",
    "IKResult",
    "IKSolver",
    "JacobianTranspose",
    "LevenbergMarquardt",
    "PseudoInverse",
    "UndampedPseudoInverse",
    "available_methods",
    "find_ik",
    "make_method",
    "solve_ik",
    "solve_ik_batch",
]
