"""Solving IK groups: the iteration, the seed's step rules, result codes and restore flags.

:func:`solve` runs one group, or several in strict priority (the first one highest), from a
configuration ``q``. Each iteration:

1. evaluates every group's error and Jacobian (:mod:`pinkctl.groups.jacobian`); stops when
   every enabled element is within its precision, or after ``max_iterations`` steps;
2. weights the rows, calls the groups' Jacobian callbacks (which may change ``J`` and ``e`` in
   place, and, for a group solved alone, return the step), and computes the step
   (:mod:`pinkctl.groups.steps`);
3. unless ``IGNORE_MAX_STEPS``: halves the step until every joint's change fits its max step
   (``STEPS_TOO_BIG``); with several groups, the lower groups' contributions are halved first
   (see :func:`_fit`), so the higher ones keep their progress;
4. applies it on the manifold (``pin.integrate``); a joint that reaches or crosses a limit is
   stopped on it (``LIMIT_HIT``, the over- or undershoot recorded); with ``STOP_ON_LIMIT_HIT``
   the whole step is shortened so that the first joint to hit lands on its limit, and the
   solve ends;
5. sets the dependent joints from their masters.

A dependency law that gives NaN or an infinite value (a callback's domain left, an
overflow) ends the solve with ``CANNOT_INVERT`` at the last configuration where every law was
finite (the input itself when the first one fails), its reason in ``last_report.reason``. A
callback that raises is an :class:`~pinkctl.errors.InputError` naming it (Jacobian callbacks
too), the original exception chained.

At the end, ``NOT_WITHIN_TOLERANCE`` is reported when an element misses its precision, and a
group with ``RESTORE_ON_BAD_LIN_TOL`` (``..._ANG_TOL``) that missed its linear (angular)
precision makes the solve return the input configuration unchanged.

Several groups share one iteration: the columns are the union of theirs (settings from the
first group that moves the joint); ``max_iterations`` is the largest of the groups'; the step
rules (max steps, ``AVOID_LIMITS``, ``STOP_ON_LIMIT_HIT``) are those of the first group; the
precisions and restore flags are each group's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pinocchio as pin

from .._validation import choice, real_array
from ..errors import InputError
from .flags import GroupFlags, ResultCode
from .jacobian import Evaluation, GroupJacobian, evaluate
from .layout import Layout
from .objects import NonFiniteDependency
from .steps import Box, CannotInvert, Level, prioritized_step, single_step

if TYPE_CHECKING:
    from .group import IKGroup

__all__ = ["GroupReport", "GroupResult", "solve"]

#: Distance [rad or m] within which a joint counts as on its limit.
HIT_TOLERANCE = 1e-10

#: Most halvings of one step (a step scaled by 2^-60 is zero for any purpose).
MAX_HALVINGS = 60


class GroupResult(NamedTuple):
    """A solve's configuration (a new array) and :class:`ResultCode`."""

    q: np.ndarray
    code: ResultCode


@dataclass(frozen=True)
class GroupReport:
    """What the last solve of a group did.

    Attributes:
        code: The result code of the solve.
        iterations: Steps taken.
        precision: Largest linear [m] and angular [rad] error among the group's enabled
            elements at the returned configuration (0 without one).
        limit_hits: Joints that reached a limit, with the signed amount the step would have
            crossed it by (0 when a bounded step stopped exactly on it).
        reason: Why the solve stopped early (a dependency law that gave NaN), else "".
    """

    code: ResultCode
    iterations: int
    precision: tuple[float, float]
    limit_hits: dict[str, float] = field(default_factory=dict)
    reason: str = ""


@dataclass
class _Columns:
    """The union of the groups' columns with the settings the step rules read."""

    layout: Layout  # the first group's layout extended with the other groups' columns
    maps: list[np.ndarray]  # per group, its columns' positions in the union


def _union(layouts: Sequence[Layout]) -> _Columns:
    first = layouts[0]
    keys = list(first.columns)
    arrays = {
        name: list(getattr(first, name))
        for name in ("v_indices", "q_index", "lower", "upper", "weights", "margins", "max_steps")
    }
    for layout in layouts[1:]:
        for k, column in enumerate(layout.columns):
            if column not in keys:
                keys.append(column)
                for name, values in arrays.items():
                    values.append(getattr(layout, name)[k])
    maps = [np.array([keys.index(c) for c in layout.columns], dtype=np.intp) for layout in layouts]
    union = Layout(
        elements=(),
        rows=(),
        columns=tuple(keys),
        v_indices=np.array(arrays["v_indices"], dtype=np.intp),
        q_index=np.array(arrays["q_index"], dtype=np.intp),
        **{
            name: np.array(arrays[name], dtype=np.float64)
            for name in ("lower", "upper", "weights", "margins", "max_steps")
        },
        folds=(),
    )
    return _Columns(union, maps)


def _effective_limits(columns: Layout, avoid: bool) -> tuple[np.ndarray, np.ndarray]:
    """The limits the steps respect: shrunk by the margins (at most to the middle) when
    avoiding limits, the joints' limits otherwise."""
    if not avoid:
        return columns.lower, columns.upper
    margins = np.minimum(columns.margins, 0.5 * (columns.upper - columns.lower))
    return columns.lower + margins, columns.upper - margins


def _box(columns: Layout, q: np.ndarray, low: np.ndarray, high: np.ndarray) -> Box:
    """Bounds of the scaled step ``y`` inside ``[low, high]`` (a joint already outside may not
    move further out, and is not pushed back)."""
    scalar = columns.q_index >= 0
    values = np.where(scalar, q[np.maximum(columns.q_index, 0)], 0.0)
    weights = columns.weights
    return Box(
        lower=np.where(scalar, np.minimum(low - values, 0.0) / weights, -np.inf),
        upper=np.where(scalar, np.maximum(high - values, 0.0) / weights, np.inf),
        near_lower=scalar & (values <= low + HIT_TOLERANCE),
        near_upper=scalar & (values >= high - HIT_TOLERANCE),
    )


def _levels(
    groups: Sequence[IKGroup],
    layouts: Sequence[Layout],
    evaluations: Sequence[Evaluation],
    columns: _Columns,
) -> tuple[list[Level], np.ndarray | None]:
    """Row-weighted, column-scaled levels; and the step a lone group's callback returned."""
    levels = []
    given = None
    n = len(columns.layout.columns)
    for group, layout, evaluation, where in zip(groups, layouts, evaluations, columns.maps):
        weights = np.concatenate([el.row_weights for el in layout.elements])
        assert evaluation.J is not None
        jacobian = GroupJacobian(
            J=weights[:, None] * evaluation.J,
            e=weights * evaluation.e,
            rows=layout.rows,
            columns=layout.columns,
        )
        callback = group.jacobian_callback
        if callback is not None:
            name = getattr(callback, "__qualname__", type(callback).__name__)
            try:
                step = callback(jacobian)
            except Exception as exc:
                raise InputError(
                    f"jacobian_callback {name} raised {type(exc).__name__}: {exc}"
                ) from exc
            if step is not None:
                if len(groups) > 1:
                    raise InputError(
                        "jacobian_callback: a step can be returned only by a group solved alone"
                    )
                # NaN is let through: a non-finite step is CANNOT_INVERT, like a bad Jacobian
                given = real_array(step, f"jacobian_callback {name}'s step", (n,), finite=False)
        J = np.zeros((jacobian.J.shape[0], n))
        J[:, where] = jacobian.J * columns.layout.weights[where]
        if not (np.isfinite(J).all() and np.isfinite(jacobian.e).all()):
            raise CannotInvert("non-finite Jacobian or error")
        levels.append(Level(J=J, e=jacobian.e, method=group.method, damping=group.damping))
    return levels, given


def _fit(cumulative: Sequence[np.ndarray], max_steps: np.ndarray) -> tuple[np.ndarray, bool]:
    """The step within the max step sizes, and whether it had to be scaled.

    ``cumulative[k]`` is the step after level ``k``. The lowest level's contribution is halved
    first until the step fits (dropped when the step does not fit even without it), then the
    level above it, and so on; what is left of the highest level's step is halved last (the
    seed's rule for one group). Each step between two levels' steps keeps the strict priority
    (the upper level's linearised residual), and the joint limits (both are inside them).
    """
    parts = [cumulative[0]] + [b - a for a, b in zip(cumulative, cumulative[1:])]
    total = cumulative[-1]
    scaled = False
    for part in reversed(parts[1:]):
        rest = total - part
        if not np.any(np.abs(total) > max_steps):
            break
        scaled = True
        if np.any(np.abs(rest) > max_steps):
            total = rest
            continue
        for _ in range(MAX_HALVINGS):
            part = 0.5 * part
            total = rest + part
            if not np.any(np.abs(total) > max_steps):
                break
        else:
            total = rest
    halvings = 0
    while np.any(np.abs(total) > max_steps) and halvings < MAX_HALVINGS:
        total = 0.5 * total
        halvings += 1
    over = np.abs(total) > max_steps
    if np.any(over):  # max steps below 2^-60 of the step: scale it to fit exactly
        total = total * float(np.min(max_steps[over] / np.abs(total[over])))
        total = np.clip(total, -max_steps, max_steps)  # the last ulp of the rounding
    return total, scaled or halvings > 0


def _advance(
    model: pin.Model,
    q: np.ndarray,
    step: np.ndarray,
    columns: Layout,
    limits: tuple[np.ndarray, np.ndarray],
    stop: bool,
) -> tuple[np.ndarray, dict[str, float], bool]:
    """``q ⊕ step`` with joints stopped on their (effective) ``limits``; the joints that
    reached their actual limits, with the over- or undershoot; whether to stop there."""
    v = np.zeros(model.nv)
    v[columns.v_indices] = step
    moved = pin.integrate(model, q, v)
    scalar = np.flatnonzero(columns.q_index >= 0)
    index = columns.q_index[scalar]
    before, after = q[index], moved[index]
    low, high = limits[0][scalar], limits[1][scalar]
    stopped = np.clip(after, np.minimum(low, before), np.maximum(high, before))
    rising = step[scalar] > 0.0
    limit = np.where(rising, columns.upper[scalar], columns.lower[scalar])
    hit = np.where(rising, stopped >= limit - HIT_TOLERANCE, stopped <= limit + HIT_TOLERANCE)
    hit &= step[scalar] != 0.0
    hits = {
        columns.columns[scalar[k]].joint: float(after[k] - limit[k]) for k in np.flatnonzero(hit)
    }
    if stop and hits:
        fractions = np.clip((limit[hit] - before[hit]) / (after[hit] - before[hit]), 0.0, 1.0)
        first = int(np.flatnonzero(hit)[int(np.argmin(fractions))])
        moved = pin.integrate(model, q, float(np.min(fractions)) * v)
        moved[index[first]] = limit[first]  # exactly on it despite rounding
        stopped = np.clip(moved[index], np.minimum(low, before), np.maximum(high, before))
    moved[index] = stopped
    return moved, hits, stop and bool(hits)


def solve(groups: Sequence[IKGroup], q: np.ndarray, *, priority: str = "cascade") -> GroupResult:
    """Solve ``groups`` from ``q``, the first one with the highest priority (module docstring).

    Args:
        groups: IK groups of one scene (one group: a plain solve with its method).
        q: Start configuration of the scene's model (not modified).
        priority: ``"cascade"`` (exact strict priorities, a QP per level) or ``"nullspace"``
            (the seed's projection: each level in the null space of those above it).

    Returns:
        The configuration and the result code; each group's ``last_report`` is updated.

    Raises:
        ValueError: No group, groups of different scenes, a bad ``q`` or ``priority``, an
            element naming a frame the scene lacks, or a callback returning a bad step.
    """
    from .group import IKGroup

    groups = list(groups)
    if not groups or not all(isinstance(g, IKGroup) for g in groups):
        raise InputError(f"groups must be a non-empty sequence of IKGroup, got {groups!r}")
    scene = groups[0].scene
    if any(g.scene is not scene for g in groups):
        raise InputError("groups: every group must belong to the same scene")
    choice(priority, "priority", ("cascade", "nullspace"))
    q_in = scene.check_configuration(q)
    layouts = [g.layout() for g in groups]
    active = [
        (g, lay)
        for g, lay in zip(groups, layouts)
        if g.flags & GroupFlags.ENABLED and not lay.empty
    ]
    if not active:
        for group in groups:
            group.last_report = GroupReport(ResultCode.NOT_PERFORMED, 0, (0.0, 0.0))
        return GroupResult(q_in, ResultCode.NOT_PERFORMED)
    solved = [g for g, _ in active]
    used = [lay for _, lay in active]
    flags = solved[0].flags
    avoid = bool(flags & GroupFlags.AVOID_LIMITS)
    columns = _union(used)
    limits = _effective_limits(columns.layout, avoid)
    max_iterations = max(g.max_iterations for g in solved)
    code = ResultCode.OK
    hits: dict[str, float] = {}
    reason = ""
    steps = 0
    stopped = False
    try:
        q_now = scene.apply_dependencies(q_in.copy())
    except NonFiniteDependency as exc:  # nothing to start from: the input is returned
        q_now, code, reason, stopped = q_in.copy(), ResultCode.CANNOT_INVERT, str(exc), True
    while True:
        jacobian = steps < max_iterations and not stopped
        try:
            evaluations = [evaluate(scene, lay, q_now, jacobian=jacobian) for lay in used]
        except NonFiniteDependency as exc:  # a callback's derivative beside q_now
            code |= ResultCode.CANNOT_INVERT
            reason = str(exc)
            evaluations = [evaluate(scene, lay, q_now, jacobian=False) for lay in used]
            break
        if not jacobian or all(all(ev.within(lay)) for ev, lay in zip(evaluations, used)):
            break
        try:
            levels, given = _levels(solved, used, evaluations, columns)
            box = _box(columns.layout, q_now, *limits)
            if given is not None:
                cumulative: tuple[np.ndarray, ...] = (given,)
            elif len(levels) == 1:
                y = single_step(levels[0], box, avoid=avoid, q=q_now)
                cumulative = (y * columns.layout.weights,)
            else:
                ys = prioritized_step(levels, box, priority=priority, q=q_now)
                cumulative = tuple(y * columns.layout.weights for y in ys)
            if not np.isfinite(cumulative[-1]).all():
                raise CannotInvert("non-finite step")
        except CannotInvert:
            code |= ResultCode.CANNOT_INVERT
            break
        dq = cumulative[-1]
        halved = False
        if not flags & GroupFlags.IGNORE_MAX_STEPS:
            dq, halved = _fit(cumulative, columns.layout.max_steps)
        stop = bool(flags & GroupFlags.STOP_ON_LIMIT_HIT)
        q_next, new_hits, stopped = _advance(scene.model, q_now, dq, columns.layout, limits, stop)
        try:
            scene.apply_dependencies(q_next)
        except NonFiniteDependency as exc:  # the step is not taken
            code |= ResultCode.CANNOT_INVERT
            reason = str(exc)
            break
        q_now = q_next
        steps += 1
        if halved:
            code |= ResultCode.STEPS_TOO_BIG
        if new_hits:
            code |= ResultCode.LIMIT_HIT
            hits.update(new_hits)
    within = [ev.within(lay) for ev, lay in zip(evaluations, used)]
    if not all(all(w) for w in within):
        code |= ResultCode.NOT_WITHIN_TOLERANCE
    restore = any(
        (g.flags & GroupFlags.RESTORE_ON_BAD_LIN_TOL and not linear)
        or (g.flags & GroupFlags.RESTORE_ON_BAD_ANG_TOL and not angular)
        for g, (linear, angular) in zip(solved, within)
    )
    if restore:
        q_now = q_in.copy()
        evaluations = [evaluate(scene, lay, q_now, jacobian=False) for lay in used]
    reports = {
        id(g): GroupReport(
            code,
            steps,
            (float(np.max(ev.linear, initial=0.0)), float(np.max(ev.angular, initial=0.0))),
            dict(hits),
            reason,
        )
        for g, ev in zip(solved, evaluations)
    }
    for group in groups:
        group.last_report = reports.get(
            id(group), GroupReport(code | ResultCode.NOT_PERFORMED, 0, (0.0, 0.0), {}, reason)
        )
    return GroupResult(q_now, code)
