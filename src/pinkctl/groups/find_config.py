"""A randomised search for a configuration that solves a group (the seed's ``ikFindConfig``).

:func:`find_config` draws configurations of the searched joints at random, inside their
intervals (or the search ``ranges``), and keeps those whose tips are within ``threshold`` of
their targets by the seed's metric

.. math::

    d = \\sqrt{(m_0 d_x)^2 + (m_1 d_y)^2 + (m_2 d_z)^2 + (m_3 θ)^2}

(per enabled element: ``d_x, d_y, d_z`` its constrained position rows, ``θ`` the norm of its
constrained rotation rows; the largest over the elements). From each kept draw the group is
solved; the first solution within every element's precision that the ``validate`` callback
accepts is returned. The seed's result codes: :attr:`FindResult.FOUND` (1),
:attr:`FindResult.NOT_FOUND` (0, the budget ran out) and :attr:`FindResult.ERROR` (-1: the
group cannot be solved at all: disabled, no enabled element, or no joint free to move).

The budget is ``max_trials`` draws (deterministic for a given ``rng`` seed) and, optionally,
``max_time`` seconds (the seed's ``maxSearchTimeInMs`` / 1000; results then depend on the
machine's speed).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import callable_or_none, integer, name_list, real_array, real_number
from ..errors import InputError
from .flags import GroupFlags, ResultCode
from .jacobian import evaluate
from .objects import NonFiniteDependency

if TYPE_CHECKING:
    from .group import IKGroup

__all__ = ["DEFAULT_METRIC", "FindResult", "FoundConfig", "find_config"]

#: The seed's default metric: metres count fully, radians a tenth.
DEFAULT_METRIC = (1.0, 1.0, 1.0, 0.1)

#: Largest ``max_trials`` (a search that needs more should widen ``threshold``).
MAX_TRIALS = 1_000_000


class FindResult(IntEnum):
    """The seed's result of ``ikFindConfig``."""

    ERROR = -1
    NOT_FOUND = 0
    FOUND = 1


@dataclass(frozen=True)
class FoundConfig:
    """What :func:`find_config` found.

    Attributes:
        code: :class:`FindResult`.
        q: The configuration found (the input ``q`` when none was).
        values: The searched joints' coordinates in ``q``, in the order of ``joints``.
        trials: Configurations drawn.
        reason: Why the search is an :attr:`FindResult.ERROR`, else "".
    """

    code: FindResult
    q: np.ndarray
    values: np.ndarray
    trials: int
    reason: str = ""


@dataclass(frozen=True)
class _Joint:
    name: str
    index: int  # first coordinate in q
    size: int  # 1, or 4 for a ball joint
    low: float
    high: float


def _search_joints(
    group: IKGroup, q: np.ndarray, joints: Any, ranges: Mapping[str, Any] | None
) -> list[_Joint]:
    scene = group.scene
    names = [c.joint for c in group.columns] if joints is None else name_list(joints, "joints")
    ordered = list(dict.fromkeys(names))
    ranges = dict(ranges or {})
    unknown = sorted(set(ranges) - set(ordered))
    if unknown:
        raise InputError(f"ranges: {unknown} are not searched joints {ordered}")
    out = []
    for name in ordered:
        try:
            jmodel = scene.model.joints[scene.joint_id(name)]
        except InputError as exc:
            raise InputError(f"joints: {exc}") from exc
        if jmodel.shortname() == "JointModelSpherical":
            out.append(_Joint(name, jmodel.idx_q, 4, 0.0, 0.0))
            continue
        if jmodel.nq != 1:
            raise InputError(f"joints: {name!r} is neither a one-coordinate nor a ball joint")
        low, high = _interval(scene, name, float(q[jmodel.idx_q]), ranges.get(name))
        out.append(_Joint(name, jmodel.idx_q, 1, low, high))
    return out


def _interval(scene: Any, name: str, now: float, given: Any) -> tuple[float, float]:
    """The seed's search interval: the joint's (range 0 or none), ``[low, low + range]``, or
    centred on the current position with extent ``-range`` (a negative range)."""
    lower, upper = scene.limits(name)
    if given is not None:
        pair = real_array(given, f"ranges[{name!r}]", (2,))
        low, span = float(pair[0]), float(pair[1])
        if span > 0.0:
            return low, low + span
        if span < 0.0:
            return now + 0.5 * span, now - 0.5 * span
    if math.isinf(lower) and math.isinf(upper) and scene.joint_type(name) == "revolute":
        return -math.pi, math.pi  # a cyclic joint
    if not (math.isfinite(lower) and math.isfinite(upper)):
        raise InputError(f"ranges: joint {name!r} has no finite interval; give its search range")
    return lower, upper


def _draw(joints: Sequence[_Joint], q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    sample = q.copy()
    for joint in joints:
        if joint.size == 4:  # a uniformly random rotation (x, y, z, w)
            quaternion = rng.normal(size=4)
            sample[joint.index : joint.index + 4] = quaternion / np.linalg.norm(quaternion)
        else:
            sample[joint.index] = rng.uniform(joint.low, joint.high)
    return sample


def _distance(group: IKGroup, q: np.ndarray, metric: np.ndarray) -> float:
    """The seed's pose distance, the largest over the group's enabled elements."""
    layout = group.layout()
    evaluation = evaluate(group.scene, layout, q, jacobian=False)
    worst, start = 0.0, 0
    for element in layout.elements:
        rows = evaluation.e[start : start + element.components.size]
        start += element.components.size
        position = np.zeros(3)
        position[element.components[element.linear]] = rows[element.linear]
        angle = float(np.linalg.norm(rows[~element.linear]))
        scaled = np.append(position * metric[:3], angle * metric[3])
        worst = max(worst, float(np.linalg.norm(scaled)))
    return worst


def _accepts(validate: Callable[[np.ndarray], Any] | None, q: np.ndarray) -> bool:
    if validate is None:
        return True
    name = getattr(validate, "__qualname__", type(validate).__name__)
    try:
        verdict = validate(q.copy())
    except Exception as exc:
        raise InputError(f"validate {name} raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(verdict, (bool, np.bool_)):
        raise InputError(f"validate {name} returned {verdict!r}, not a bool")
    return bool(verdict)


def _values(joints: Sequence[_Joint], q: np.ndarray) -> np.ndarray:
    parts = [q[j.index : j.index + j.size] for j in joints]
    return np.concatenate(parts) if parts else np.zeros(0)


def find_config(
    group: IKGroup,
    q: Any,
    *,
    joints: Sequence[str] | None = None,
    threshold: float = 0.1,
    metric: Sequence[float] = DEFAULT_METRIC,
    max_trials: int = 1000,
    max_time: float | None = None,
    validate: Callable[[np.ndarray], bool] | None = None,
    ranges: Mapping[str, Any] | None = None,
    rng: int | np.random.Generator | None = 0,
) -> FoundConfig:
    """Search for a configuration that solves ``group`` (module docstring).

    Args:
        group: The group to solve (its elements, precisions and settings).
        q: The configuration the other joints keep (not modified).
        joints: The joints drawn at random (default: the group's moving joints).
        threshold: Largest metric distance [m] of a draw from which the group is solved.
        metric: ``(m_x, m_y, m_z, m_angle)``, >= 0.
        max_trials: Most draws, in [1, 1,000,000].
        max_time: Most seconds of search (None: no time limit).
        validate: ``validate(q) -> bool``: whether a solution is acceptable (e.g. not
            colliding); it receives the whole configuration.
        ranges: Per joint, ``(lower, range)`` of the search (the seed's ``lowLimits`` /
            ``ranges``): a range of 0 is the joint's interval, a negative one centres the
            search on the joint's value in ``q`` with extent ``-range``.
        rng: Seed or generator of the draws.

    Returns:
        A :class:`FoundConfig`; ``group.last_report`` is that of the last solve.

    Raises:
        ValueError: A malformed argument (named), or a callback that raises or returns no bool.
    """
    q_in = group.scene.check_configuration(q)
    searched = _search_joints(group, q_in, joints, ranges)
    limit = real_number(threshold, "threshold", low=0.0)
    weights = real_array(metric, "metric", (4,))
    if np.any(weights < 0.0):
        raise InputError(f"metric must be >= 0, got {list(metric)!r}")
    budget = integer(max_trials, "max_trials", low=1, high=MAX_TRIALS)
    seconds = None if max_time is None else real_number(max_time, "max_time", low=0.0)
    callable_or_none(validate, "validate")
    generator = _generator(rng)
    if not group.flags & GroupFlags.ENABLED or group.layout().empty:
        reason = "the group is disabled, has no enabled element, or no joint free to move"
        return FoundConfig(FindResult.ERROR, q_in, _values(searched, q_in), 0, reason)
    start = time.monotonic()
    trial = 0
    while trial < budget:
        trial += 1
        solution = _trial(group, _draw(searched, q_in, generator), weights, limit, validate)
        if solution is not None:
            return FoundConfig(FindResult.FOUND, solution, _values(searched, solution), trial)
        if seconds is not None and time.monotonic() - start >= seconds:
            break
    return FoundConfig(FindResult.NOT_FOUND, q_in, _values(searched, q_in), trial)


def _generator(rng: int | np.random.Generator | None) -> np.random.Generator:
    """The generator of the draws: ``rng`` itself, or one seeded with it (checked)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(None if rng is None else integer(rng, "rng", low=0))


def _trial(
    group: IKGroup,
    draw: np.ndarray,
    weights: np.ndarray,
    limit: float,
    validate: Callable[[np.ndarray], bool] | None,
) -> np.ndarray | None:
    """One draw: the group's solution from it when the draw is within ``limit`` of the
    targets and the solve succeeds and is accepted, else None."""
    try:
        sample = group.scene.apply_dependencies(draw)
    except NonFiniteDependency:  # a draw outside a dependency law's domain
        return None
    if _distance(group, sample, weights) > limit:
        return None
    solution, code = group.solve(sample)
    if code & ResultCode.FAILED or not _accepts(validate, solution):
        return None
    return solution
