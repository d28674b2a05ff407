"""How much of each level's step a prioritised iteration takes: max step sizes, and the
protection of the groups above.

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

import numpy as np

__all__ = [
    "MAX_HALVINGS",
    "PROGRESS_SHARE",
    "PROTECT_HALVINGS",
    "fit_max_steps",
    "protect_upper_levels",
]

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
