"""One IK step of a group, or of several groups in strict priority.

Every rule works on the *scaled* variables ``y = dq / w`` (columns of the row-weighted
Jacobian scaled by the joint weights ``w``) and returns ``dq = w y``:

- one group, ``method="qp"``: ``min ½||J_y y + e_w||² + ½ λ ||y||²`` inside the joint limits
  (shrunk by the margins with ``AVOID_LIMITS``), a one-level :func:`~pinkctl.qp.cascade.
  lexicographic_solve` with DAQP through qpsolvers (``λ = δ²`` for the group's damping ``δ``
  as in DLS, at least :data:`~pinkctl.qp.cascade.MIN_LEVEL_DAMPING`);
- one group, another method: the :mod:`pinkctl.ik.methods` rule of the same name; with
  ``AVOID_LIMITS`` the joints inside their margin whose step points toward the limit are
  pinned (column dropped, step recomputed); ``pinv_undamped`` on a rank-deficient Jacobian
  cannot invert;
- several groups, ``priority="cascade"``: the lexicographic cascade of their least-squares
  levels inside the limits, each level damped by its group's ``δ²`` (the groups' methods are
  not used; the damping only trades a level's own accuracy for bounded steps, never the
  levels above it);
- several groups, ``priority="nullspace"``: the null-space projection, each level solved by its
  group's method on the projected Jacobian (``qp`` and ``pinv_undamped`` levels use the exact
  pseudo-inverse), each level's step clipped into the limits.

A step that cannot be formed raises :class:`CannotInvert`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..ik.methods import IKMethod, make_method
from ..qp.cascade import (
    LevelStep,
    box_constraints,
    lexicographic_solve,
    nullspace_solve,
    qpsolvers_solve,
)
from ..qp.errors import QPSolveError

__all__ = ["CannotInvert", "Level", "make_rule", "prioritized_step", "single_step"]

#: Relative singular value below which ``pinv_undamped`` cannot invert.
SINGULAR_TOLERANCE = 1e-9


class CannotInvert(Exception):
    """No step could be formed (the result code's ``CANNOT_INVERT``)."""


@dataclass
class Level:
    """One group's least-squares problem ``min ||J y + e||`` in the scaled variables."""

    J: np.ndarray
    e: np.ndarray
    method: str
    damping: float


@dataclass(frozen=True)
class Box:
    """Bounds on ``y`` of this step, and which joints sit inside their limit margins (the
    columns ``AVOID_LIMITS`` pins when they move toward that limit)."""

    lower: np.ndarray
    upper: np.ndarray
    near_lower: np.ndarray
    near_upper: np.ndarray


def make_rule(method: str, damping: float) -> IKMethod | None:
    """The :mod:`pinkctl.ik.methods` rule of a group (None for ``"qp"``)."""
    if method == "qp":
        return None
    if method == "dls":
        return make_method("dls", damping=damping)
    return make_method(method)


def _cascade(levels: Sequence[Level], box: Box) -> tuple[np.ndarray, ...]:
    constraints = box_constraints(box.lower, box.upper)
    objectives = [(level.J.T @ level.J, level.J.T @ level.e) for level in levels]
    try:
        dampings = [level.damping**2 for level in levels]
        return lexicographic_solve(
            objectives, constraints, qpsolvers_solve, damping=dampings
        ).levels
    except QPSolveError as exc:
        raise CannotInvert(str(exc)) from exc


def _closed_form(level: Level, rule: IKMethod, box: Box, avoid: bool, q: np.ndarray) -> np.ndarray:
    J, e = level.J, level.e
    if level.method == "pinv_undamped":
        singular = np.linalg.svd(J, compute_uv=False)
        if singular.size == 0 or singular[-1] <= SINGULAR_TOLERANCE * singular[0]:
            raise CannotInvert("rank-deficient Jacobian")
    y = rule.step(J.copy(), e, float(e @ e), q)
    if avoid:
        pinned = (box.near_upper & (y > 0.0)) | (box.near_lower & (y < 0.0))
        if pinned.any():
            reduced = J.copy()
            reduced[:, pinned] = 0.0
            y = rule.step(reduced, e, float(e @ e), q)
            y[pinned] = 0.0
    return y


def single_step(level: Level, box: Box, *, avoid: bool, q: np.ndarray) -> np.ndarray:
    """``y`` of one group's step (module docstring)."""
    rule = make_rule(level.method, level.damping)
    if rule is None:
        return _cascade([level], box)[0]
    y = _closed_form(level, rule, box, avoid, q)
    if not np.isfinite(y).all():
        raise CannotInvert("non-finite step")
    return y


def prioritized_step(
    levels: Sequence[Level], box: Box, *, priority: str, q: np.ndarray
) -> tuple[np.ndarray, ...]:
    """``y`` of a step of several groups after each level, the first one highest (module
    docstring); every one inside the box, so any step between two of them is too."""
    if priority == "cascade":
        return _cascade(levels, box)
    steps: list[LevelStep | None] = []
    for level in levels:
        rule = None if level.method == "pinv_undamped" else make_rule(level.method, level.damping)
        steps.append(None if rule is None else _level_step(rule, q))
    solution = nullspace_solve([(level.J, -level.e) for level in levels], steps=steps)
    if not np.isfinite(solution.x).all():
        raise CannotInvert("non-finite step")
    return tuple(np.clip(y, box.lower, box.upper) for y in solution.levels)


def _level_step(rule: IKMethod, q: np.ndarray) -> LevelStep:
    def step(J: np.ndarray, r: np.ndarray) -> np.ndarray:
        return rule.step(J.copy(), -r, float(r @ r), q)

    return step
