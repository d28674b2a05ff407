"""The pieces of one iteration of a group solve: the solve's columns, the limits a step
respects, each group's weighted level (with its Jacobian callback), and the move on the
manifold with joints stopped on their limits.

A Jacobian callback is called with the group's row-weighted :class:`~pinkctl.groups.jacobian.
GroupJacobian` (it may change ``J`` and ``e`` in place) and returns None, a displacement
``dq`` (n,) over the group's columns, a pseudo-inverse ``J⁺`` (n, m) of its (changed) ``J``,
or a pair ``(dq, J⁺)`` with either one None: the seed's ``qVector`` and
``jacobianPseudoinverse`` bits (:mod:`pinkctl.groups.steps` says how a solve uses them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from .._validation import real_array
from ..errors import InputError
from .jacobian import Evaluation, GroupJacobian
from .layout import Layout
from .steps import Box, CannotInvert, Level

if TYPE_CHECKING:
    from .group import IKGroup

__all__ = ["HIT_TOLERANCE", "SolveColumns", "advance", "box", "effective_limits", "levels", "union"]

#: Distance [rad or m] within which a joint counts as on its limit.
HIT_TOLERANCE = 1e-10

_ARRAYS = ("v_indices", "q_index", "lower", "upper", "weights", "margins", "max_steps")


@dataclass
class SolveColumns:
    """The union of the groups' columns with the settings the step rules read."""

    layout: Layout  # the first group's layout extended with the other groups' columns
    maps: list[np.ndarray]  # per group, its columns' positions in the union


def union(layouts: Sequence[Layout]) -> SolveColumns:
    """The columns of several groups: the first one's, then the others' new ones (settings
    from the first group that moves the joint)."""
    first = layouts[0]
    keys = list(first.columns)
    arrays = {name: list(getattr(first, name)) for name in _ARRAYS}
    for layout in layouts[1:]:
        for k, column in enumerate(layout.columns):
            if column not in keys:
                keys.append(column)
                for name, values in arrays.items():
                    values.append(getattr(layout, name)[k])
    maps = [np.array([keys.index(c) for c in layout.columns], dtype=np.intp) for layout in layouts]
    integers = {name: np.array(arrays[name], dtype=np.intp) for name in _ARRAYS[:2]}
    floats = {name: np.array(arrays[name], dtype=np.float64) for name in _ARRAYS[2:]}
    joined = Layout(elements=(), rows=(), columns=tuple(keys), folds=(), **integers, **floats)
    return SolveColumns(joined, maps)


def effective_limits(columns: Layout, avoid: bool) -> tuple[np.ndarray, np.ndarray]:
    """The limits the steps respect: shrunk by the margins (at most to the middle) when
    avoiding limits, the joints' limits otherwise."""
    if not avoid:
        return columns.lower, columns.upper
    margins = np.minimum(columns.margins, 0.5 * (columns.upper - columns.lower))
    return columns.lower + margins, columns.upper - margins


def box(columns: Layout, q: np.ndarray, low: np.ndarray, high: np.ndarray) -> Box:
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


def _call(group: IKGroup, jacobian: GroupJacobian) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The group's callback on ``jacobian``: its step and pseudo-inverse (either None)."""
    callback = group.jacobian_callback
    if callback is None:
        return None, None
    name = getattr(callback, "__qualname__", type(callback).__name__)
    try:
        result: Any = callback(jacobian)
    except Exception as exc:
        raise InputError(f"jacobian_callback {name} raised {type(exc).__name__}: {exc}") from exc
    if result is None:
        return None, None
    if isinstance(result, tuple) and len(result) == 2:
        step, pinv = result
    elif np.ndim(result) == 2:
        step, pinv = None, result
    else:
        step, pinv = result, None
    n, m = len(jacobian.columns), len(jacobian.rows)
    # NaN is let through: a non-finite step is CANNOT_INVERT, like a bad Jacobian
    if step is not None:
        step = real_array(step, f"jacobian_callback {name}'s step", (n,), finite=False)
    if pinv is not None:
        pinv = real_array(pinv, f"jacobian_callback {name}'s pseudo-inverse", (n, m), finite=False)
    return step, pinv


def levels(
    groups: Sequence[IKGroup],
    layouts: Sequence[Layout],
    evaluations: Sequence[Evaluation],
    columns: SolveColumns,
) -> list[Level]:
    """Row-weighted, column-scaled levels over the solve's columns, with what each group's
    callback gave."""
    out = []
    n = len(columns.layout.columns)
    weights = columns.layout.weights
    for group, layout, evaluation, where in zip(groups, layouts, evaluations, columns.maps):
        row_weights = np.concatenate([el.row_weights for el in layout.elements])
        assert evaluation.J is not None
        jacobian = GroupJacobian(
            J=row_weights[:, None] * evaluation.J,
            e=row_weights * evaluation.e,
            rows=layout.rows,
            columns=layout.columns,
        )
        step, pinv = _call(group, jacobian)
        J = np.zeros((jacobian.J.shape[0], n))
        J[:, where] = jacobian.J
        if not (np.isfinite(J).all() and np.isfinite(jacobian.e).all()):
            raise CannotInvert("non-finite Jacobian or error")
        level = Level(J=J * weights, e=jacobian.e, method=group.method, damping=group.damping)
        if step is not None:
            level.step = np.zeros(n)
            level.step[where] = step
        if pinv is not None:
            level.pinv = np.zeros((n, pinv.shape[1]))
            level.pinv[where] = pinv
        out.append(level)
    return out


def advance(
    model: pin.Model,
    q: np.ndarray,
    step: np.ndarray,
    columns: Layout,
    limits: tuple[np.ndarray, np.ndarray],
    stop: bool,
) -> tuple[np.ndarray, dict[str, float], bool]:
    """``q ⊕ step`` with joints stopped on their (effective) ``limits``; the joints that
    reached their actual limits, with the over- or undershoot; whether to stop there (with
    ``stop``, the step is shortened so the first joint to hit lands exactly on its limit)."""
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
