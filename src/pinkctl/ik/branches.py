"""Other branches of a rejected answer: the starts the search tries after a collision.

Two tools, both chosen per colliding pair (the joints between its two links):

- :func:`turned_columns`: the full-turn joints a random start turns half a turn away from
  where they collided (``search._away``);
- :class:`BranchFlips`: analytic branch flips of the rejected configuration, tried as starts
  before any new random start. An arm's other IK branches reach the same tool pose with
  another shape, which may keep the margin where the rejected one did not:

  * ``elbow`` (three consecutive revolute joints with parallel axes, a UR arm's shoulder
    lift, elbow and wrist 1): the middle axis mirrored across the plane through the other
    two. Exact: the joint after the third keeps its pose, so the start converges at once.
  * ``wrist`` (three consecutive revolute joints, the middle one perpendicular to both
    others): ``(a + pi, 2 b0 - b, c + pi)``, ``b0`` the middle value where the outer axes
    align. Exact when the three axes meet (a spherical wrist); otherwise (the UR wrist) a
    start a few iterations from the other branch.

  Flips and their combinations are tried in the order of their bit mask (1, 2, 3, ...),
  each only when every flip in it moves a joint between the pair's two links and every
  value lands within the limits (a full-turn joint wrapped by 2 pi).

The table of flips is one row of :data:`FLIP_FIELDS` doubles per flip, read by the native
search too (``_ik_query.c``), which repeats :meth:`BranchFlips.apply`'s arithmetic (libm's
``atan2``, ``sin``, ``cos``, as Python's ``math``), so both paths try the same starts.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from .joints import JointSubset

__all__ = ["FLIP_FIELDS", "BranchFlips", "toward_table", "turned_columns"]

#: A flip's row: kind (0 wrist, 1 elbow), columns a, b, c, then wrist: b0; elbow: the signs
#: of the three axes along the first, the two in-plane link lengths [m] and the middle
#: joint's offset (in-plane angle from the first link to the second at value 0) [rad].
FLIP_FIELDS = 10
_WRIST, _ELBOW = 0, 1
_MAX_FLIPS = 4  # 15 combinations at most per rejection


def _joint_of_columns(model: pin.Model, subset: JointSubset) -> list[int]:
    """The joint id of each moved column."""
    of_v = {
        v: j
        for j in range(1, model.njoints)
        for v in range(model.idx_vs[j], model.idx_vs[j] + model.nvs[j])
    }
    return [of_v[int(v)] for v in np.arange(model.nv)[subset.v_cols]]


def turned_columns(
    model: pin.Model, subset: JointSubset, joints: list[tuple[int, int]]
) -> np.ndarray:
    """For each pair of joints (the joints that carry a colliding pair's two geometries),
    1 in the columns ``search._away`` turns: the moved scalar joints with a sampling range of
    at least a full turn that move one of the two and not the other. Returns a C-contiguous
    (pairs, n) ``intc`` array (at least one row; the native search reads it)."""
    span = subset.sample_high - subset.sample_low
    of_column = _joint_of_columns(model, subset)
    turns = [
        of_column[c] if subset.q_size[c] == 1 and span[c] >= 2.0 * math.pi else -1
        for c in range(subset.n)
    ]
    supports = [set(s) for s in model.supports]
    far = np.zeros((max(len(joints), 1), subset.n), dtype=np.intc)
    for k, (a, b) in enumerate(joints):
        between = supports[a] ^ supports[b]
        far[k] = [joint in between for joint in turns]
    return far


def toward_table(subset: JointSubset) -> np.ndarray:
    """(4, n) for the native search: middles, scales (``search._toward_middle``'s
    arithmetic), sampling lows, highs."""
    low, high = subset.sample_low, subset.sample_high
    middle, half = 0.5 * (low + high), 0.5 * (high - low)
    scale = 0.5 * np.minimum(half, np.pi) / np.where(half > 0.0, half, 1.0)
    return np.ascontiguousarray(np.concatenate([middle, scale, low, high]), dtype=np.float64)


def _wrap(value: float, low: float, high: float) -> float | None:
    """``value`` moved by whole turns into [low, high], or None when no turn lands there."""
    two_pi = 2.0 * math.pi
    while value > high:
        value -= two_pi
    while value < low:
        value += two_pi
    return value if value <= high else None


class BranchFlips:
    """The branch flips of a robot's moved joints (module docstring).

    Args:
        model: The robot's model.
        subset: The joints the IK moves.
        joints: For each checked pair, the joints that carry its two geometries.

    Attributes:
        table: (max(flips, 1), :data:`FLIP_FIELDS`) C-contiguous doubles (the native
            search reads it); ``count`` rows are flips.
        count: Number of flips.
        masks: (max(pairs, 1),) ``intc``: per pair, the bit mask of the flips that move a
            joint between its two links.
    """

    def __init__(
        self, model: pin.Model, subset: JointSubset, joints: list[tuple[int, int]]
    ) -> None:
        self._subset = subset
        self._native: tuple[int, int, int] | None = None
        rows, moved = self._detect(model, subset)
        self.count = len(rows)
        self.table = np.zeros((max(self.count, 1), FLIP_FIELDS))
        for k, row in enumerate(rows):
            self.table[k] = row
        supports = [set(s) for s in model.supports]
        self.masks = np.zeros(max(len(joints), 1), dtype=np.intc)
        for p, (a, b) in enumerate(joints):
            between = supports[a] ^ supports[b]
            self.masks[p] = sum(1 << k for k, js in enumerate(moved) if js & between)

    @staticmethod
    def _detect(model: pin.Model, subset: JointSubset) -> tuple[list[list[float]], list[set]]:
        """The flips' rows and, for each, the joints it moves."""
        of_column = _joint_of_columns(model, subset)
        column = {j: c for c, j in enumerate(of_column) if subset.q_size[c] == 1}
        q0 = pin.neutral(model)
        span = {j: float(subset.upper[c] - subset.lower[c]) for j, c in column.items()}
        data = model.createData()
        pin.computeJointJacobians(model, data, q0)
        axes, points = {}, {}
        for j in column:
            frame = pin.LOCAL_WORLD_ALIGNED  # at the joint's origin, world axes
            omega = pin.getJointJacobian(model, data, j, frame)[3:, model.idx_vs[j]]
            if abs(np.linalg.norm(omega) - 1.0) < 1e-9:  # a revolute joint: its world axis
                axes[j], points[j] = omega, data.oMi[j].translation.copy()
        rows: list[list[float]] = []
        moved: list[set] = []
        for b in axes:
            a, c = model.parents[b], [j for j in axes if model.parents[j] == b]
            if a not in axes or len(c) != 1 or len(rows) >= _MAX_FLIPS:
                continue
            ta, tb, tc = axes[a], axes[b], axes[c[0]]
            cols = [float(column[a]), float(column[b]), float(column[c[0]])]
            qb = float(q0[subset.q_index[column[b]]])
            if abs(abs(ta @ tb) - 1.0) < 1e-9 and abs(abs(tb @ tc) - 1.0) < 1e-9:
                plane = [p - ta * (ta @ p) for p in (points[a], points[b], points[c[0]])]
                u1, u2 = plane[1] - plane[0], plane[2] - plane[1]
                l1, l2 = float(np.linalg.norm(u1)), float(np.linalg.norm(u2))
                if min(l1, l2) < 1e-6:
                    continue
                gamma = math.atan2(float(ta @ np.cross(u1, u2)), float(u1 @ u2))
                sa, sb, sc = (1.0 if ta @ t > 0 else -1.0 for t in (ta, tb, tc))
                rows.append([_ELBOW, *cols, sa, sb, sc, l1, l2, gamma - sb * qb])
            elif (
                abs(ta @ tb) < 1e-9 and abs(tb @ tc) < 1e-9 and min(span[a], span[c[0]]) >= math.pi
            ):
                delta = math.atan2(float(tb @ np.cross(tc, ta)), float(tc @ ta))
                rows.append([_WRIST, *cols, qb + delta, 0.0, 0.0, 0.0, 0.0, 0.0])
            else:
                continue
            moved.append({a, b, c[0]})
        return rows, moved

    def native(self) -> tuple[int, int, int]:
        """The addresses of :attr:`table` and :attr:`masks`, and :attr:`count` (kept: numpy's
        ``ctypes.data`` costs more per query than the flips save on a converged one)."""
        if self._native is None or self._native[2] != self.count:
            self._native = (self.table.ctypes.data, self.masks.ctypes.data, self.count)
        return self._native

    def apply(self, k: int, q: np.ndarray) -> bool:
        """Flip ``k`` applied to the full configuration ``q`` in place; whether every value
        lands within the limits (else ``q`` is left partly changed)."""
        row = self.table[k]
        cols = (int(row[1]), int(row[2]), int(row[3]))
        index = [int(self._subset.q_index[col]) for col in cols]
        va, vb, vc = (float(q[i]) for i in index)
        if row[0] == _ELBOW:
            sa, sb, sc, l1, l2, offset = (float(x) for x in row[4:10])
            gamma = sb * vb + offset
            psi = math.atan2(l2 * math.sin(gamma), l1 + l2 * math.cos(gamma))
            va, vb, vc = va + sa * 2.0 * psi, vb - sb * 2.0 * gamma, vc - sc * 2.0 * (psi - gamma)
        else:
            va, vb, vc = va + math.pi, 2.0 * float(row[4]) - vb, vc + math.pi
        lower, upper = self._subset.lower, self._subset.upper
        for col, i, value in zip(cols, index, (va, vb, vc)):
            wrapped = _wrap(value, float(lower[col]), float(upper[col]))
            if wrapped is None:
                return False
            q[i] = wrapped
        return True

    def starts(self, pair: int, q: np.ndarray) -> list[np.ndarray]:
        """The flipped starts (full ``q``) of the configuration ``q`` rejected for checked
        pair ``pair``, in the order the search tries them."""
        allowed = int(self.masks[pair]) if 0 <= pair < len(self.masks) else 0
        out = []
        for combo in range(1, 1 << self.count):
            start = q.copy()
            if not combo & ~allowed and all(
                self.apply(k, start) for k in range(self.count) if combo >> k & 1
            ):
                out.append(start)
        return out
