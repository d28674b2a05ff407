"""One IK step of a group, or of several groups in strict priority, in joint displacements.

The rules solve each level on the *scaled* variables ``y = dq / w`` (columns of the
row-weighted Jacobian scaled by the joint weights ``w``) and return ``dq = w y``:

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
- several groups, ``priority="nullspace"``: the seed's projected form
  ``dq = dq_0 + N_0 (dq_1 + N_1 (dq_2 + ...))``, where ``dq_k`` is group ``k``'s own step
  (its method on its own Jacobian) and ``N_k = I - J_k⁺ J_k`` the projector onto the null
  space of its Jacobian (exact pseudo-inverse, relative cutoff :data:`~pinkctl.qp.cascade.
  RANK_TOLERANCE`); each level's cumulative step is clipped into the limits. ``J_0 N_0 = 0``,
  so the first group's linearised step is never changed by the groups below it; a group
  below the second one is only approximately prioritised against the ones between (exactly
  when their Jacobians are orthogonal); the cascade is strict at every level.

A Jacobian callback may give a level's step ``dq`` (then used as ``dq_k``), its
pseudo-inverse ``J⁺`` (then ``dq_k = -J⁺ e`` unless a step is given too, and ``N_k = I - J⁺ J``),
or both: :class:`Level` carries them. The cascade has no use for either and refuses them.

A step that cannot be formed raises :class:`CannotInvert`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..ik.methods import IKMethod, make_method
from ..qp.cascade import RANK_TOLERANCE, box_constraints, lexicographic_solve, qpsolvers_solve
from ..qp.errors import QPSolveError

__all__ = ["Box", "CannotInvert", "Level", "make_rule", "prioritized_steps", "single_step"]

#: Relative singular value below which ``pinv_undamped`` cannot invert.
SINGULAR_TOLERANCE = 1e-9


class CannotInvert(Exception):
    """No step could be formed (the result code's ``CANNOT_INVERT``)."""


@dataclass
class Level:
    """One group's least-squares problem ``min ||J y + e||`` in the scaled variables.

    Attributes:
        J: Row-weighted Jacobian over the solve's columns, scaled by the joint weights.
        e: Row-weighted error.
        method: The group's resolution method.
        damping: The group's damping ``δ`` [m].
        step: A displacement ``dq`` its Jacobian callback gave, or None.
        pinv: A pseudo-inverse (n, m) of the row-weighted, unscaled Jacobian its callback
            gave, or None.
    """

    J: np.ndarray
    e: np.ndarray
    method: str
    damping: float
    step: np.ndarray | None = None
    pinv: np.ndarray | None = None


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


def _own_step(
    level: Level, box: Box, weights: np.ndarray, avoid: bool, q: np.ndarray
) -> np.ndarray:
    """``dq`` of one group on its own: a callback's step, else ``-J⁺ e`` from a callback's
    pseudo-inverse, else its method's."""
    if level.step is not None:
        return level.step
    if level.pinv is not None:
        return -(level.pinv @ level.e)
    rule = make_rule(level.method, level.damping)
    y = _cascade([level], box)[0] if rule is None else _closed_form(level, rule, box, avoid, q)
    return y * weights


def single_step(
    level: Level, box: Box, weights: np.ndarray, *, avoid: bool, q: np.ndarray
) -> np.ndarray:
    """``dq`` of one group's step (module docstring)."""
    dq = _own_step(level, box, weights, avoid, q)
    if not np.isfinite(dq).all():
        raise CannotInvert("non-finite step")
    return dq


def _projector(level: Level, weights: np.ndarray) -> np.ndarray:
    """``N = I - J⁺ J`` in joint displacements (the callback's ``J⁺``, else the exact one)."""
    n = weights.size
    if level.pinv is not None:
        unscaled = level.J / weights  # the row-weighted Jacobian over dq
        return np.eye(n) - level.pinv @ unscaled
    scaled = np.eye(n) - np.linalg.pinv(level.J, rcond=RANK_TOLERANCE) @ level.J
    return weights[:, None] * scaled / weights[None, :]  # W N_y W⁻¹


def prioritized_steps(
    levels: Sequence[Level], box: Box, weights: np.ndarray, *, priority: str, q: np.ndarray
) -> tuple[np.ndarray, ...]:
    """``dq`` of a step of several groups after each level, the first one highest (module
    docstring); every one inside the box, so any step between two of them is too."""
    if priority == "cascade":
        if any(level.step is not None or level.pinv is not None for level in levels):
            raise InputError(
                "jacobian_callback: a step or a pseudo-inverse replaces a level's solve only "
                "for a group solved alone or with priority='nullspace'"
            )
        return tuple(y * weights for y in _cascade(levels, box))
    cumulative = _nullspace_steps(levels, box, weights, q)
    low, high = box.lower * weights, box.upper * weights
    return tuple(np.clip(dq, low, high) for dq in cumulative)


def _nullspace_steps(
    levels: Sequence[Level], box: Box, weights: np.ndarray, q: np.ndarray
) -> list[np.ndarray]:
    """``dq`` after each level of a null-space priority: each level's own step, projected
    into the null spaces of the levels above it (not yet clipped to the box)."""
    own = [_own_step(level, box, weights, False, q) for level in levels]
    projectors = [_projector(level, weights) for level in levels[:-1]]
    cumulative = []
    for k in range(len(levels)):
        dq = own[k]
        for j in range(k - 1, -1, -1):  # dq_j + N_j (...), innermost first
            dq = own[j] + projectors[j] @ dq
        cumulative.append(dq)
    if not all(np.isfinite(dq).all() for dq in cumulative):
        raise CannotInvert("non-finite step")
    return cumulative
