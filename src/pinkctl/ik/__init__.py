"""One-shot and global inverse kinematics.

- :func:`local_ik`: local solve from a seed (one-shot IK, warm-started tracking).
- :func:`find_ik`: global search with seeded random restarts, validation callback and
  closest-to-seed selection (TRAC-IK / CoppeliaSim ``findConfig`` style).
- :class:`IKSolver`: build once, query many times (both of the above).
- :func:`find_ik_batch`: many targets, in this process, a local process pool or on Ray
  (where: :class:`Execution`).
- :class:`IKPool`: worker processes kept across calls (``with IKPool(robot, workers=2) as
  pool: pool.find(targets)``), also behind ``find_ik_batch(pool=)``.
- :func:`retarget_poses`: a pose sequence as one continuous joint-space chain.
- :func:`sample_poses`: poses the robot certainly reaches (benchmarks, datasets).

Options are three dataclasses (:class:`IKOptions` for the solver, :class:`LocalOptions` and
:class:`SearchOptions` for a query); every entry point also takes their fields as keywords.
There is no ``solve_ik`` here: pink's ``solve_ik`` is one differential step, not an IK solve
(:func:`local_ik` is the one-shot solve).

Methods (``method=``): ``"lm"`` (default), ``"dls"``, ``"pinv"``, ``"pinv_undamped"``,
``"transpose"``, ``"qp"`` (pink + DAQP). Goals: full pose, position only, position plus an
approach axis, on a point offset from the frame; several frames at once via a mapping.
"""

from __future__ import annotations

from .api import find_ik, local_ik
from .batch import find_ik_batch
from .cache import clear_solver_cache
from .dispatch import Execution
from .ikpool import IKPool
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
from .options import IKOptions, LocalOptions, SearchOptions
from .result import IKResult
from .retarget import RetargetResult, retarget_poses
from .sampling import sample_poses
from .solver import IKSolver
from .targets import IKTarget, PoseLike, SeedLike

__all__ = [
    "clear_solver_cache",
    "DampedLeastSquares",
    "Execution",
    "IKMethod",
    "IKOptions",
    "IKPool",
    "IKResult",
    "IKSolver",
    "IKTarget",
    "JacobianTranspose",
    "LevenbergMarquardt",
    "LocalOptions",
    "PoseLike",
    "PseudoInverse",
    "RetargetResult",
    "SearchOptions",
    "SeedLike",
    "UndampedPseudoInverse",
    "available_methods",
    "find_ik",
    "find_ik_batch",
    "local_ik",
    "make_method",
    "retarget_poses",
    "sample_poses",
]
