"""Options of one-shot and global IK, as three small frozen dataclasses.

- :class:`IKOptions`: what an :class:`~pinkctl.ik.IKSolver` is built from (frame, moved
  joints, step method, goal mode, tolerances);
- :class:`LocalOptions`: the budget of one local solve (:meth:`~pinkctl.ik.IKSolver.solve`);
- :class:`SearchOptions`: the budget and selection rules of a global search
  (:meth:`~pinkctl.ik.IKSolver.find`).

Every entry point also takes the fields as keywords (``find_ik(robot, target,
time_budget_ms=2.0)``); :func:`split_options` routes each keyword to the dataclass that owns
it. Values are checked where they are used (:mod:`pinkctl.ik.checked`, the solver's
constructor), so an option object can be built, stored and replaced freely.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from .methods import IKMethod

if TYPE_CHECKING:
    from ..world import World

__all__ = [
    "DEFAULT_METRIC",
    "DEFAULT_SEARCH_ITERATIONS",
    "MAX_ITERATIONS",
    "MAX_RESTARTS",
    "MAX_SOLUTIONS",
    "FindIKKeywords",
    "IKKeywords",
    "IKOptions",
    "LocalIKKeywords",
    "LocalKeywords",
    "LocalOptions",
    "SearchBudgetKeywords",
    "SearchKeywords",
    "SearchOptions",
    "split_options",
]

#: CoppeliaSim's default pose metric: metres on x, y, z and 0.1 per radian.
DEFAULT_METRIC = (1.0, 1.0, 1.0, 0.1)
_DEFAULT_METRIC_ARRAY = np.array(DEFAULT_METRIC)
#: Default budget of a global search: residual evaluations over all its local solves. A
#: count, not a wall-clock time, so the same call gives the same answer on a quiet and on a
#: saturated machine; it solves as often as the former 5 ms budget did on a quiet machine
#: (``bench/ik_default.py``).
DEFAULT_SEARCH_ITERATIONS = 1000
#: Upper bounds of the counts an option may ask for (beyond them a query would run for
#: hours): iterations (per solve or per search), random restarts, distinct solutions.
MAX_ITERATIONS = 10_000_000
MAX_RESTARTS = 1_000_000
MAX_SOLUTIONS = 10_000


@dataclass(frozen=True)
class IKOptions:
    """What an IK solver is built from.

    Attributes:
        frame: Default frame of single-frame targets; default: ``robot.tool_frame``, else the
            model's last frame. Several frames are solved together by passing a mapping
            ``{frame_name: target}`` as the target.
        joint_names: Joints the IK may move; default: ``robot.controlled_joint_names`` (and
            the floating base of a floating-base robot). The other joints keep their seed
            values.
        method: Step method name (``"lm"``, ``"dls"``, ``"pinv"``, ``"pinv_undamped"``,
            ``"transpose"``, ``"qp"``) or an :class:`~pinkctl.ik.methods.IKMethod`.
        method_options: Keyword arguments of the method's constructor (e.g.
            ``{"damping": 0.1}`` for ``"dls"``).
        position_only: Constrain positions only (orientation free).
        approach_axis: Tool axis (frame coordinates: 0/1/2, ``"z"``, ``"-x"`` or a (3,)
            vector) that must point along ``approach_direction``; rotation about it is free.
        approach_direction: World direction of the approach axis (default straight down).
        point_offset: The controlled point in the frame's coordinates [m] (e.g. the grasp
            point between the jaws), default the frame origin.
        orientation_weight: Weight of the rotational error rows against position rows in
            the iteration [m/rad]; tolerances are unaffected.
        position_tolerance: Per-axis position tolerance [m], a number or (3,) (world x, y, z).
        orientation_tolerance: Per-axis orientation tolerance [rad], a number or (3,) (world
            rotation-vector axes); for an approach axis, the smallest value bounds the tilt.
        world: Obstacles every answer keeps ``collision_margin`` from
            (:class:`~pinkctl.World`, followed as it changes); None: the floor the simulation
            puts under the robot (:meth:`World.for_robot <pinkctl.World.for_robot>`);
            ``World()`` for none.
        self_collision: Keep the robot's links ``collision_margin`` apart (its active self
            pairs, :class:`~pinkctl.world.RobotGeometry`); None: on when the robot's
            description has collision elements.
        collision_margin: Smallest distance [m] an answer keeps between the robot and every
            obstacle and between its own links (default 0.01, the controller's). With
            ``world=World()`` and ``self_collision=False`` nothing is checked.
    """

    frame: str | None = None
    joint_names: Sequence[str] | None = None
    method: str | IKMethod = "lm"
    method_options: Mapping[str, Any] | None = None
    position_only: bool = False
    approach_axis: int | str | ArrayLike | None = None
    approach_direction: ArrayLike = (0.0, 0.0, -1.0)
    point_offset: ArrayLike | None = None
    orientation_weight: float = 1.0
    position_tolerance: float | ArrayLike = 1e-5
    orientation_tolerance: float | ArrayLike = 1e-5
    world: World | None = None
    self_collision: bool | None = None
    collision_margin: float = 0.01


@dataclass(frozen=True)
class LocalOptions:
    """Budget of one local solve from a seed (no restarts).

    Attributes:
        max_iterations: Iteration budget (residual evaluations, at most
            :data:`MAX_ITERATIONS`).
        time_budget_ms: Wall-clock budget [ms], or None.
        stall_iterations: Stop early after this many iterations without progress (None: use
            the whole budget).
        max_step: Largest joint displacement per iteration [rad] or [m], or None.
    """

    max_iterations: int = 100
    time_budget_ms: float | None = None
    stall_iterations: int | None = None
    max_step: float | None = None


@dataclass(frozen=True)
class SearchOptions:
    """Budget and selection rules of a global search (local solves, then random restarts).

    Attributes:
        time_budget_ms: Wall-clock budget [ms], or None (the default: the search ends on
            counts only, so its answer does not depend on how busy the machine is).
        max_restarts: Maximum random starts (at most :data:`MAX_RESTARTS`), or None.
        max_iterations: Total iteration budget (residual evaluations, at most
            :data:`MAX_ITERATIONS`), or None; default :data:`DEFAULT_SEARCH_ITERATIONS`.
        iterations_per_start: Iteration cap of each local solve.
        stall_iterations: Abandon a local solve after this many iterations without progress
            (None: only the cap).
        rng: Seed or generator of the random starts (None: fresh entropy). With an integer
            seed the answer is reproducible whenever ``max_restarts`` or ``max_iterations``,
            not the wall-clock budget, ends the search.
        validate: ``validate(q) -> bool`` on the moved joints' values; a configuration is
            returned as a solution only if it passes.
        metric: CoppeliaSim pose metric weights ``(m0, m1, m2, m3)`` for
            ``metric_threshold``.
        metric_threshold: Skip random starts whose pose is farther than this from the target
            under the metric (None: never skip).
        max_solutions: Keep searching until this many distinct solutions are found (or a
            budget ends), then return one of them.
        closest_to_seed: Among the solutions found, return the closest to the seed
            (joint-space Euclidean distance); else the first found.
        max_step: Largest joint displacement per iteration, or None.
    """

    time_budget_ms: float | None = None
    max_restarts: int | None = None
    max_iterations: int | None = DEFAULT_SEARCH_ITERATIONS
    iterations_per_start: int = 30
    stall_iterations: int | None = 5
    rng: int | np.random.Generator | None = 0
    validate: Callable[[np.ndarray], bool] | None = None
    metric: ArrayLike = DEFAULT_METRIC
    metric_threshold: float | None = None
    max_solutions: int = 1
    closest_to_seed: bool = True
    max_step: float | None = None


class IKKeywords(TypedDict, total=False):
    """The fields of :class:`IKOptions` as keywords (``IKSolver(robot, frame="tool")``):
    the type of an entry point's ``**changes``, so that type checkers see every option."""

    frame: str | None
    joint_names: Sequence[str] | None
    method: str | IKMethod
    method_options: Mapping[str, Any] | None
    position_only: bool
    approach_axis: int | str | ArrayLike | None
    approach_direction: ArrayLike
    point_offset: ArrayLike | None
    orientation_weight: float
    position_tolerance: float | ArrayLike
    orientation_tolerance: float | ArrayLike
    world: World | None
    self_collision: bool | None
    collision_margin: float


class LocalKeywords(TypedDict, total=False):
    """The fields of :class:`LocalOptions` as keywords (``solver.solve(target,
    max_iterations=50)``)."""

    max_iterations: int
    time_budget_ms: float | None
    stall_iterations: int | None
    max_step: float | None


class SearchBudgetKeywords(TypedDict, total=False):
    """The fields of :class:`SearchOptions` but ``rng``, as keywords: the type of
    ``**changes`` where ``rng`` is a parameter of its own (batches, pools)."""

    time_budget_ms: float | None
    max_restarts: int | None
    max_iterations: int | None
    iterations_per_start: int
    stall_iterations: int | None
    validate: Callable[[np.ndarray], bool] | None
    metric: ArrayLike
    metric_threshold: float | None
    max_solutions: int
    closest_to_seed: bool
    max_step: float | None


class SearchKeywords(SearchBudgetKeywords, total=False):
    """The fields of :class:`SearchOptions` as keywords (``solver.find(target, rng=3)``)."""

    rng: int | np.random.Generator | None


class LocalIKKeywords(IKKeywords, LocalKeywords, total=False):
    """The keywords of :func:`~pinkctl.ik.local_ik`: solver options and a local budget."""


class FindIKKeywords(IKKeywords, SearchKeywords, total=False):
    """The keywords of :func:`~pinkctl.ik.find_ik`: solver options and a search budget."""


#: Any of the three option classes.
AnyOptions: TypeAlias = IKOptions | LocalOptions | SearchOptions


_FIELD_NAMES: dict[type, frozenset[str]] = {}


def _field_names(cls: type) -> frozenset[str]:
    names = _FIELD_NAMES.get(cls)
    if names is None:  # computed once per class: split_options runs on every query
        names = _FIELD_NAMES[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    return names


def split_options(
    changes: Mapping[str, Any],
    *defaults: AnyOptions,
) -> list[Any]:
    """Apply keyword ``changes`` to the option objects that own each field.

    Args:
        changes: Field name → value; a name two option classes share (``max_step``,
            ``max_iterations``) goes to both.
        defaults: One option object per class, the values not changed.

    Returns:
        The option objects with the changes applied, in the order of ``defaults``.

    Raises:
        InputError: A keyword no option class has (with the closest names).
    """
    if not changes:
        return list(defaults)
    known = set().union(*(_field_names(type(d)) for d in defaults))
    unknown = sorted(set(changes) - known)
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(known), n=3)
        hint = f"; did you mean {close}?" if close else ""
        raise InputError(f"unknown IK option(s) {unknown}{hint}")
    out = []
    for default in defaults:
        own = {k: v for k, v in changes.items() if k in _field_names(type(default))}
        out.append(dataclasses.replace(default, **own) if own else default)
    return out
