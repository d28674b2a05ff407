"""Solving IK groups: the iteration, the seed's step rules, result codes and restore flags.

:func:`solve` runs one group, or several in strict priority (the first one highest), from a
configuration ``q``. Each iteration:

1. evaluates every group's error and Jacobian (:mod:`pinkctl.groups.jacobian`); stops when
   every enabled element is within its precision, or after ``max_iterations`` steps;
2. weights the rows, calls the groups' Jacobian callbacks (which may change ``J`` and ``e`` in
   place, and give a step or a pseudo-inverse: :mod:`pinkctl.groups.iteration`), and
   computes each level's step (:mod:`pinkctl.groups.steps`);
3. unless ``IGNORE_MAX_STEPS``: halves the step until every joint's change fits its max step
   (``STEPS_TOO_BIG``); with several groups, the lower groups' contributions are halved first,
   and with ``priority="nullspace"`` a lower group's contribution is also halved while it
   takes an upper group's progress away (:mod:`pinkctl.groups.step_size`), so the higher ones
   keep it;
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
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .._validation import choice
from ..errors import InputError
from .flags import GroupFlags, ResultCode
from .iteration import SolveColumns, advance, box, effective_limits, levels, union
from .jacobian import Evaluation, evaluate
from .layout import Layout
from .objects import NonFiniteDependency
from .step_size import (
    PROGRESS_SHARE,
    combine,
    fit_max_steps,
    parts_of,
    protect_upper_levels,
    shrink_to_fit,
)
from .steps import CannotInvert, prioritized_steps, single_step

if TYPE_CHECKING:
    from .group import IKGroup
    from .scene import KinematicScene

__all__ = ["PRIORITIES", "GroupReport", "GroupResult", "solve"]

#: How several groups are prioritised (see :mod:`pinkctl.groups.steps`).
PRIORITIES = ("cascade", "nullspace")


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
class _Run:
    """What a solve needs, fixed for its duration."""

    scene: KinematicScene
    groups: list[IKGroup]  # the groups that take part (enabled, with rows and columns)
    layouts: list[Layout]
    columns: SolveColumns
    limits: tuple[np.ndarray, np.ndarray]
    flags: GroupFlags
    priority: str
    max_iterations: int


@dataclass
class _State:
    """Where a solve is."""

    q: np.ndarray
    code: ResultCode = ResultCode.OK
    steps: int = 0
    hits: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    stopped: bool = False
    evaluations: list[Evaluation] = field(default_factory=list)

    def fail(self, reason: str) -> None:
        self.code |= ResultCode.CANNOT_INVERT
        self.reason = reason


def _prepare(groups: Sequence[IKGroup], priority: str) -> _Run | None:
    """The run of the groups that take part, or None when none does."""
    scene = groups[0].scene
    pairs = [(g, g.layout()) for g in groups]
    active = [(g, lay) for g, lay in pairs if g.flags & GroupFlags.ENABLED and not lay.empty]
    if not active:
        return None
    solved = [g for g, _ in active]
    used = [lay for _, lay in active]
    flags = solved[0].flags
    columns = union(used)
    return _Run(
        scene=scene,
        groups=solved,
        layouts=used,
        columns=columns,
        limits=effective_limits(columns.layout, bool(flags & GroupFlags.AVOID_LIMITS)),
        flags=flags,
        priority=priority,
        max_iterations=max(g.max_iterations for g in solved),
    )


def _evaluate(run: _Run, state: _State, jacobian: bool) -> bool:
    """Evaluate every group at ``state.q``; False when a dependency law failed."""
    try:
        state.evaluations = [
            evaluate(run.scene, lay, state.q, jacobian=jacobian) for lay in run.layouts
        ]
        return True
    except NonFiniteDependency as exc:  # a callback's derivative beside q
        state.fail(str(exc))
        state.evaluations = [
            evaluate(run.scene, lay, state.q, jacobian=False) for lay in run.layouts
        ]
        return False


def _level_steps(run: _Run, state: _State) -> tuple[np.ndarray, ...]:
    """Each level's cumulative step ``dq`` at ``state.q``."""
    layout = run.columns.layout
    found = levels(run.groups, run.layouts, state.evaluations, run.columns)
    limits_box = box(layout, state.q, *run.limits)
    avoid = bool(run.flags & GroupFlags.AVOID_LIMITS)
    if len(found) == 1:
        return (single_step(found[0], limits_box, layout.weights, avoid=avoid, q=state.q),)
    return prioritized_steps(found, limits_box, layout.weights, priority=run.priority, q=state.q)


def _candidate(run: _Run, q: np.ndarray, dq: np.ndarray) -> np.ndarray | None:
    """Where ``dq`` leads from ``q`` (limits and dependencies applied), None if a law fails."""
    moved, _, _ = advance(run.scene.model, q, dq, run.columns.layout, run.limits, False)
    try:
        return run.scene.apply_dependencies(moved)
    except NonFiniteDependency:
        return None


def _within_share(old: float, new: float, now: float, precision: float) -> bool:
    """Whether an error ``new`` after the whole step keeps the upper group's share: at most
    its precision, its error ``old`` after its own step, or half-way between that and its
    error ``now`` before the step (:data:`~pinkctl.groups.step_size.PROGRESS_SHARE`)."""
    return new <= max(precision, old, old + PROGRESS_SHARE * (now - old))


def _keeps_upper(run: _Run, q: np.ndarray, now: Sequence[Evaluation]) -> Any:
    """``keeps_upper(k, before, after)`` for :func:`~pinkctl.groups.step_size.
    protect_upper_levels`: every element of the groups above level ``k`` keeps its share of
    the progress (:func:`_within_share`) after the step ``after`` compared with ``before``."""
    cache: dict[int, list[Evaluation] | None] = {}

    def errors(k: int, dq: np.ndarray) -> list[Evaluation] | None:
        target = _candidate(run, q, dq)
        if target is None:
            return None
        return [evaluate(run.scene, lay, target, jacobian=False) for lay in run.layouts[:k]]

    def keeps_upper(k: int, before: np.ndarray, after: np.ndarray) -> bool:
        if k not in cache:
            cache[k] = errors(k, before)
        upper, moved = cache[k], errors(k, after)
        if moved is None:
            return False
        if upper is None:
            return True
        for layout, old, new, current in zip(run.layouts, upper, moved, now):
            for index, element in enumerate(layout.elements):
                for kind, errors_of in enumerate((lambda ev: ev.linear, lambda ev: ev.angular)):
                    if not _within_share(
                        float(errors_of(old)[index]),
                        float(errors_of(new)[index]),
                        float(errors_of(current)[index]),
                        element.precision[kind],
                    ):
                        return False
        return True

    return keeps_upper


def _take(
    run: _Run, q: np.ndarray, now: Sequence[Evaluation], cumulative: Sequence[np.ndarray]
) -> tuple[np.ndarray, bool]:
    """The step taken from the levels' cumulative steps, and whether max steps scaled it."""
    parts = parts_of(cumulative)
    scales = [1.0] * len(parts)
    ignore = bool(run.flags & GroupFlags.IGNORE_MAX_STEPS)
    max_steps = run.columns.layout.max_steps
    halved = False
    if not ignore:
        scales, halved = fit_max_steps(parts, max_steps)
    if len(parts) > 1 and run.priority == "nullspace":  # the cascade's damping bounds them
        scales = protect_upper_levels(parts, scales, _keeps_upper(run, q, now))
    dq = combine(parts, scales)
    if not ignore:
        dq, shrunk = shrink_to_fit(dq, max_steps)
        halved = halved or shrunk
    return dq, halved


def _iterate(run: _Run, state: _State) -> bool:
    """One iteration (module docstring); False when the solve ends."""
    jacobian = state.steps < run.max_iterations and not state.stopped
    if not _evaluate(run, state, jacobian):
        return False
    if not jacobian or all(all(ev.within(lay)) for ev, lay in zip(state.evaluations, run.layouts)):
        return False
    try:
        cumulative = _level_steps(run, state)
        if not np.isfinite(cumulative[-1]).all():
            raise CannotInvert("non-finite step")
    except CannotInvert:
        state.code |= ResultCode.CANNOT_INVERT
        return False
    return _step(run, state, *_take(run, state.q, state.evaluations, cumulative))


def _step(run: _Run, state: _State, dq: np.ndarray, halved: bool) -> bool:
    """Take the step ``dq`` (inside the joint limits); False when its dependent joints
    cannot follow (the solve ends)."""
    stop = bool(run.flags & GroupFlags.STOP_ON_LIMIT_HIT)
    q_next, hits, stopped = advance(
        run.scene.model, state.q, dq, run.columns.layout, run.limits, stop
    )
    try:
        run.scene.apply_dependencies(q_next)
    except NonFiniteDependency as exc:  # the step is not taken
        state.fail(str(exc))
        return False
    state.q, state.stopped = q_next, stopped
    state.steps += 1
    if halved:
        state.code |= ResultCode.STEPS_TOO_BIG
    if hits:
        state.code |= ResultCode.LIMIT_HIT
        state.hits.update(hits)
    return True


def _finish(run: _Run, groups: Sequence[IKGroup], q_in: np.ndarray, state: _State) -> GroupResult:
    """Tolerance bits, restore flags and every group's report."""
    within = [ev.within(lay) for ev, lay in zip(state.evaluations, run.layouts)]
    if not all(all(w) for w in within):
        state.code |= ResultCode.NOT_WITHIN_TOLERANCE
    evaluations = state.evaluations
    if _restores(run.groups, within):
        state.q = q_in.copy()
        evaluations = [evaluate(run.scene, lay, state.q, jacobian=False) for lay in run.layouts]
    reports = {id(g): _report(state, ev) for g, ev in zip(run.groups, evaluations)}
    for group in groups:
        group.last_report = reports.get(
            id(group),
            GroupReport(state.code | ResultCode.NOT_PERFORMED, 0, (0.0, 0.0), {}, state.reason),
        )
    return GroupResult(state.q, state.code)


def _restores(groups: Sequence[IKGroup], within: list[tuple[bool, bool]]) -> bool:
    """Whether a group asks to restore the start for a tolerance it misses."""
    return any(
        (g.flags & GroupFlags.RESTORE_ON_BAD_LIN_TOL and not linear)
        or (g.flags & GroupFlags.RESTORE_ON_BAD_ANG_TOL and not angular)
        for g, (linear, angular) in zip(groups, within)
    )


def _report(state: _State, evaluation: Evaluation) -> GroupReport:
    """A solved group's report: the solve's code, steps, hits and reason, and the group's
    largest errors (linear [m], angular [rad])."""
    errors = (
        float(np.max(evaluation.linear, initial=0.0)),
        float(np.max(evaluation.angular, initial=0.0)),
    )
    return GroupReport(state.code, state.steps, errors, dict(state.hits), state.reason)


def solve(groups: Sequence[IKGroup], q: Any, *, priority: str = "cascade") -> GroupResult:
    """Solve ``groups`` from ``q``, the first one with the highest priority (module docstring).

    Args:
        groups: IK groups of one scene (one group: a plain solve with its method).
        q: Start configuration of the scene's model (not modified).
        priority: ``"cascade"`` (exact strict priorities, a QP per level) or ``"nullspace"``
            (the seed's projection ``dq_0 + N_0 (dq_1 + ...)``, see :mod:`pinkctl.groups.
            steps`).

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
    choice(priority, "priority", PRIORITIES)
    q_in = scene.check_configuration(q)
    run = _prepare(groups, priority)
    if run is None:
        for group in groups:
            group.last_report = GroupReport(ResultCode.NOT_PERFORMED, 0, (0.0, 0.0))
        return GroupResult(q_in, ResultCode.NOT_PERFORMED)
    state = _State(q=q_in.copy())
    try:
        state.q = scene.apply_dependencies(state.q)
    except NonFiniteDependency as exc:  # nothing to start from: the input is returned
        state.fail(str(exc))
        state.stopped = True
    while _iterate(run, state):
        pass
    return _finish(run, groups, q_in, state)
