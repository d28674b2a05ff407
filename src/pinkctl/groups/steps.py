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

Step sizes: how much of each level's step a prioritised iteration takes (max step sizes, and the
protection of the groups above).

A step of ``K`` levels is the sum of its parts ``p_k = c_k - c_{k-1}`` (``c_k`` the cumulative
step after level ``k``); each rule here scales parts, the lowest ones first, so the groups
above keep their progress.

- :func:`fit_max_steps` (the seed's max step sizes): the lowest level's part is halved until
  the step fits every joint's max step (dropped when the step does not fit even without it),
  then the part above it, and so on; what is left of the highest level's step is halved last
  (the seed's rule for one group).
- :func:`protect_upper_levels`: a lower level's part is halved (after
  :data:`PROTECT_HALVINGS` halvings, dropped) while it takes from an element of a group above
  it more than :data:`PROGRESS_SHARE` of the progress that group's own step makes, and leaves
  the element outside its precision. The lower levels' steps are linearised and move the
  upper groups at second order; a lower group whose goal is out of reach keeps stepping, and
  without this rule those second order motions can keep the upper groups off their targets
  at every iteration. With it, an upper group's error shrinks at least geometrically (by
  ``1 - PROGRESS_SHARE`` of what its own step gains) until its precision is met. The
  null-space method applies it: its levels use their groups' methods, whose undamped steps
  grow without bound near a singular optimum of an unreachable goal; the cascade damps every
  level by its group's ``δ²`` instead (a check there would only slow the lower levels).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..ik.methods import IKMethod, make_method
from ..qp.cascade import RANK_TOLERANCE, box_constraints, lexicographic_solve, qpsolvers_solve
from ..qp.errors import QPSolveError

__all__ = [
    "MAX_HALVINGS",
    "PROGRESS_SHARE",
    "PROTECT_HALVINGS",
    "Box",
    "CannotInvert",
    "Level",
    "fit_max_steps",
    "make_rule",
    "prioritized_steps",
    "protect_upper_levels",
    "single_step",
]

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


def _given(level: Level) -> np.ndarray | None:
    """The step a callback gave: its ``dq``, else ``-J⁺ e`` from its pseudo-inverse."""
    if level.step is not None:
        return level.step
    if level.pinv is not None:
        return -(level.pinv @ level.e)
    return None


def _own_step(
    level: Level, box: Box, weights: np.ndarray, avoid: bool, q: np.ndarray
) -> np.ndarray:
    """``dq`` of one group on its own (a callback's, else its method's)."""
    given = _given(level)
    if given is not None:
        return given
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


#: Most halvings of one step (a step scaled by 2^-60 is zero for any purpose).
MAX_HALVINGS = 60

#: The share of an upper group's progress (its error before the step minus its error after
#: its own step) that the levels below it may take back.
PROGRESS_SHARE = 0.5

#: Most halvings of a lower level's part that moves an upper group off its target (2^-30 of
#: a step is below any precision a group can ask for).
PROTECT_HALVINGS = 30


def parts_of(cumulative: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The parts ``c_0, c_1 - c_0, ...`` of cumulative steps."""
    return [cumulative[0]] + [b - a for a, b in zip(cumulative, cumulative[1:])]


def combine(
    parts: Sequence[np.ndarray], scales: Sequence[float], upto: int | None = None
) -> np.ndarray:
    """``Σ scales[k] parts[k]`` over the first ``upto`` levels (all: None)."""
    count = len(parts) if upto is None else upto
    total = np.zeros_like(parts[0])
    for part, scale in zip(parts[:count], scales[:count]):
        if scale != 0.0:
            total = total + scale * part
    return total


def _fits(step: np.ndarray, max_steps: np.ndarray) -> bool:
    return not np.any(np.abs(step) > max_steps)


def shrink_to_fit(total: np.ndarray, max_steps: np.ndarray) -> tuple[np.ndarray, bool]:
    """``total`` halved until it fits (scaled exactly to fit after :data:`MAX_HALVINGS`), and
    whether it had to be."""
    halvings = 0
    while not _fits(total, max_steps) and halvings < MAX_HALVINGS:
        total = 0.5 * total
        halvings += 1
    over = np.abs(total) > max_steps
    if np.any(over):  # max steps below 2^-60 of the step: scale it to fit exactly
        total = total * float(np.min(max_steps[over] / np.abs(total[over])))
        total = np.clip(total, -max_steps, max_steps)  # the last ulp of the rounding
    return total, halvings > 0


def fit_max_steps(parts: Sequence[np.ndarray], max_steps: np.ndarray) -> tuple[list[float], bool]:
    """The scale of each part that makes the step fit the max step sizes (module docstring),
    and whether a part had to be scaled. The highest part's scale may be left at 1 with the
    step still too large: :func:`shrink_to_fit` halves what is left as a whole."""
    scales = [1.0] * len(parts)
    scaled = False
    for k in range(len(parts) - 1, 0, -1):
        total = combine(parts, scales)
        if _fits(total, max_steps):
            break
        scaled = True
        rest = total - parts[k]
        if not _fits(rest, max_steps):
            scales[k] = 0.0
            continue
        scales[k] = 0.0
        for halving in range(1, MAX_HALVINGS + 1):
            if _fits(rest + 0.5**halving * parts[k], max_steps):
                scales[k] = 0.5**halving
                break
    return scales, scaled


def protect_upper_levels(
    parts: Sequence[np.ndarray],
    scales: list[float],
    keeps_upper: Callable[[int, np.ndarray, np.ndarray], bool],
) -> list[float]:
    """Halve the parts of the levels below the first while ``keeps_upper(k, before, after)``
    says the part of level ``k`` (``after`` is ``before`` plus it) moves a group above it
    off its target (module docstring); returns the scales."""
    for k in range(1, len(parts)):
        if scales[k] == 0.0:
            continue
        before = combine(parts, scales, k)
        for _ in range(PROTECT_HALVINGS):
            if keeps_upper(k, before, before + scales[k] * parts[k]):
                break
            scales[k] *= 0.5
        else:
            scales[k] = 0.0
    return scales
