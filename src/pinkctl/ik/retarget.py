"""Retargeting a sequence of poses to joint space as one continuous chain.

Consecutive solutions of a pose sequence (a motion-capture clip, a demonstration, a sampled
Cartesian trajectory) should differ little: a jump between two neighbouring poses is a
reconfiguration the robot cannot do in one step. :func:`retarget_poses` solves the sequence
as segments:

1. A segment starts with a global search (:meth:`IKSolver.find`) at its first pose, seeded
   with the previous solution (closest to it), then marches on with local solves, each
   seeded with the previous solution.
2. The march stops where a local solve fails or its solution would move a joint by more
   than ``max_jump``. The segment is then re-solved from other global solutions at its
   first pose (random starts), and the start that marches furthest is kept. A first pose
   the global search does not reach at all is reported as failed.
3. The next segment starts where that march stopped: a jump is left there only when no
   start could avoid it, and it is reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot
from ..errors import InputError
from .options import IKOptions, LocalOptions, SearchOptions, split_options
from .result import IKResult
from .solver import IKSolver
from .targets import PoseLike, SeedLike

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike
    from typing_extensions import Unpack

    from .options import LocalIKKeywords

    class RetargetKeywords(LocalIKKeywords, total=False):
        """The keywords of :func:`retarget_poses`: solver options, the local budget and the
        search budget's own fields (its ``rng`` is the function's argument)."""

        max_restarts: int | None
        iterations_per_start: int
        validate: Callable[[np.ndarray], bool] | None
        metric: ArrayLike
        metric_threshold: float | None
        max_solutions: int
        closest_to_seed: bool


__all__ = ["RETARGET_SEARCH", "RetargetResult", "retarget_poses"]

#: Default budget of a segment's global search (deterministic).
RETARGET_SEARCH = SearchOptions(time_budget_ms=None, max_restarts=50)


@dataclass(frozen=True)
class RetargetResult:
    """A pose sequence in joint space.

    Attributes:
        q: Moved joint values per pose [rad] or [m], ``(n, dof)``.
        joint_names: The moved joints.
        success: Whether each pose is within tolerance, ``(n,)``.
        position_error: Position error per pose [m], ``(n,)``.
        orientation_error: Orientation error per pose [rad], ``(n,)``.
        jumps: Largest joint displacement between consecutive solutions, ``(n - 1,)``
            [rad] or [m].
        segments: Index of the first pose of each segment (0 first).
    """

    q: np.ndarray
    joint_names: tuple[str, ...]
    success: np.ndarray
    position_error: np.ndarray
    orientation_error: np.ndarray
    jumps: np.ndarray
    segments: tuple[int, ...]

    @property
    def max_jump(self) -> float:
        """Largest displacement between consecutive solutions (0 for one pose)."""
        return float(self.jumps.max()) if self.jumps.size else 0.0


def _jump(solver: IKSolver, a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(pin.difference(solver.model, a, b)[solver.subset.v_cols]).max())


def _march(
    solver: IKSolver,
    poses: Sequence[PoseLike],
    start: IKResult,
    first: int,
    local: LocalOptions,
    max_jump: float,
) -> list[IKResult]:
    """``start`` then local solves from pose ``first + 1`` on, up to the first failure or jump."""
    run = [start]
    for target in poses[first + 1 :]:
        result = solver.solve(target, seed=run[-1].q_full, options=local)
        if not result.success or _jump(solver, run[-1].q_full, result.q_full) > max_jump:
            break
        run.append(result)
    return run


def retarget_poses(
    robot: PinkRobot,
    poses: Sequence[PoseLike],
    *,
    max_jump: float = 0.1,
    seed: SeedLike = None,
    attempts: int = 8,
    rng: int = 0,
    search: SearchOptions | None = None,
    local: LocalOptions | None = None,
    **options: Unpack[RetargetKeywords],
) -> RetargetResult:
    """Solve ``poses`` in order as one warm-started chain without jumps (module docstring).

    Args:
        robot: The robot (only read).
        poses: Targets of the tool frame, in order (any single-frame target form).
        max_jump: Largest joint displacement allowed between consecutive solutions [rad]
            or [m].
        seed: Reference of the first global search (default ``robot.q0``).
        attempts: Global starts tried per segment (the first seeded with the previous
            solution, the others from random configurations).
        rng: Seed of the random starts (deterministic).
        search: Budget of each global search (default :data:`RETARGET_SEARCH`).
        local: Budget of each local solve (default :class:`~pinkctl.ik.LocalOptions`).
        **options: Fields of :class:`~pinkctl.ik.IKOptions` (``frame``, tolerances, goal
            mode) and of the two budgets.

    Returns:
        The joint-space sequence; ``jumps`` and ``segments`` say where continuity broke.

    Raises:
        InputError: No poses, a malformed pose or option, a bad ``max_jump`` or
            ``attempts``.
    """
    solver_options, search_options, local_options = split_options(
        options,
        IKOptions(),
        search if search is not None else RETARGET_SEARCH,
        local if local is not None else LocalOptions(),
    )
    poses, threshold = _checked_arguments(poses, max_jump, attempts)
    solver = IKSolver(robot, solver_options)
    previous = solver.subset.parse_seed(seed, robot.q0, name="seed")
    for i, pose in enumerate(poses):
        try:
            solver.residual(pose)
        except ValueError as exc:
            raise InputError(f"poses[{i}]: {exc}") from exc
    chain = _Chain(
        solver,
        poses,
        search_options,
        local_options,
        threshold,
        attempts,
        np.random.default_rng(rng),
    )
    results: list[IKResult] = []
    segments: list[int] = []
    while len(results) < len(poses):
        segments.append(len(results))
        results += chain.segment(len(results), previous)
        previous = results[-1].q_full
    return _retarget_result(solver, results, segments)


def _checked_arguments(
    poses: Sequence[PoseLike], max_jump: float, attempts: int
) -> tuple[list[PoseLike], float]:
    """``poses`` as a non-empty list and ``max_jump`` as a positive float [rad] or [m];
    ``attempts`` checked positive."""
    poses = list(poses)
    if not poses:
        raise InputError("poses: expected at least one pose")
    threshold = float(max_jump)
    if not np.isfinite(threshold) or threshold <= 0.0:
        raise InputError(f"max_jump: expected a positive number, got {max_jump!r}")
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise InputError(f"attempts: expected a positive integer, got {attempts!r}")
    return poses, threshold


@dataclass(frozen=True)
class _Chain:
    """What the segments of one :func:`retarget_poses` call share."""

    solver: IKSolver
    poses: list[PoseLike]
    search: SearchOptions
    local: LocalOptions
    max_jump: float
    attempts: int
    generator: np.random.Generator

    def segment(self, first: int, previous: np.ndarray) -> list[IKResult]:
        """The longest march from pose ``first`` over ``attempts`` global starts (the first
        seeded with ``previous``, a full ``q``); the failed start alone when the global
        search does not reach pose ``first``."""
        best: list[IKResult] = []
        for attempt in range(self.attempts):
            seed = previous if attempt == 0 else self.solver.subset.sample(self.generator, previous)
            start = self.solver.find(
                self.poses[first], seed=seed, options=self.search, rng=self.generator
            )
            if not start.success:  # out of reach: more starts would not change that
                return best or [start]
            run = _march(self.solver, self.poses, start, first, self.local, self.max_jump)
            if len(run) > len(best):
                best = run
            if first + len(best) == len(self.poses):
                break
        return best


def _retarget_result(
    solver: IKSolver, results: list[IKResult], segments: list[int]
) -> RetargetResult:
    """The :class:`RetargetResult` of the solutions ``results``, one per pose."""
    q_full = [r.q_full for r in results]
    return RetargetResult(
        q=np.array([r.q for r in results]),
        joint_names=tuple(solver.joint_names),
        success=np.array([r.success for r in results]),
        position_error=np.array([r.position_error for r in results]),
        orientation_error=np.array([r.orientation_error for r in results]),
        jumps=np.array([_jump(solver, a, b) for a, b in zip(q_full[:-1], q_full[1:])]),
        segments=tuple(segments),
    )
