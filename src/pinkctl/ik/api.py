"""One-call IK: :func:`local_ik` (one solve from a seed) and :func:`find_ik` (global search).

Both reuse an :class:`~pinkctl.ik.IKSolver` per robot and options
(:mod:`pinkctl.ik.cache`), so a loop of calls costs what a loop on one solver does. They are
named apart from pink's ``solve_ik``, which computes one differential-IK velocity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.robot import PinkRobot
from .cache import cached_solver
from .options import IKOptions, LocalOptions, SearchOptions, split_options
from .result import IKResult
from .targets import IKTarget, SeedLike

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import FindIKKeywords, LocalIKKeywords

# one object each, so that the solver cache finds a default call by identity
_DEFAULT_IK, _DEFAULT_LOCAL, _DEFAULT_SEARCH = IKOptions(), LocalOptions(), SearchOptions()

__all__ = ["find_ik", "local_ik"]


def local_ik(
    robot: PinkRobot,
    target: IKTarget,
    *,
    seed: SeedLike = None,
    options: IKOptions | None = None,
    local: LocalOptions | None = None,
    **changes: Unpack[LocalIKKeywords],
) -> IKResult:
    """One-shot IK: a local solve from ``seed`` towards ``target`` (no restarts).

    Args:
        robot: The robot (only read).
        target: Pose, position, or ``{frame: target}`` (:mod:`pinkctl.ik.targets`).
        seed: Start (see :meth:`IKSolver.solve`); default ``robot.q0``.
        options: Solver options (:class:`~pinkctl.ik.IKOptions`).
        local: Budget of the solve (:class:`~pinkctl.ik.LocalOptions`).
        **changes: Fields of either dataclass, e.g. ``frame="tool", max_iterations=50``
            (typed by :class:`~pinkctl.ik.options.LocalIKKeywords`).

    Example:
        >>> result = local_ik(robot, (position, quat_wxyz), frame="tool", seed=q_now)
        >>> if result.success: command(result.positions)
    """
    solver_options, local_options = split_options(
        changes, options or _DEFAULT_IK, local or _DEFAULT_LOCAL
    )
    # the default options as None: the solver's checked-budget memo then skips hashing them
    local_options = None if local_options is _DEFAULT_LOCAL else local_options
    return cached_solver(robot, solver_options).solve(target, seed=seed, options=local_options)


def find_ik(
    robot: PinkRobot,
    target: IKTarget,
    *,
    seed: SeedLike = None,
    options: IKOptions | None = None,
    search: SearchOptions | None = None,
    **changes: Unpack[FindIKKeywords],
) -> IKResult:
    """Global IK: a search with random restarts (see :meth:`IKSolver.find`).

    Args:
        robot: The robot (only read).
        target: Pose, position, or ``{frame: target}`` (:mod:`pinkctl.ik.targets`).
        seed: Start of the first local solve and reference of ``closest_to_seed``.
        options: Solver options (:class:`~pinkctl.ik.IKOptions`).
        search: Budget and selection rules (:class:`~pinkctl.ik.SearchOptions`).
        **changes: Fields of either dataclass, e.g. ``frame="tool", time_budget_ms=2.0``
            (typed by :class:`~pinkctl.ik.options.FindIKKeywords`).

    Deterministic for a given ``rng`` seed: by default the search ends on a count
    (:data:`~pinkctl.ik.options.DEFAULT_SEARCH_ITERATIONS` residual evaluations), never on
    the clock; an explicit ``time_budget_ms`` also ends it, at a point that depends on how
    busy the machine is.
    """
    solver_options, search_options = split_options(
        changes, options or _DEFAULT_IK, search or _DEFAULT_SEARCH
    )
    search_options = None if search_options is _DEFAULT_SEARCH else search_options
    return cached_solver(robot, solver_options).find(target, seed=seed, options=search_options)
