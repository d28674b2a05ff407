"""The IK residual: stacked task error ``e(q)`` and its Jacobian ``J(q)`` for a set of goals.

Rows per goal (world frame, evaluated on a private ``pin.Data``):

- position rows: ``e_p = p(q) - p*`` where ``p(q) = t_f + R_f·o`` is the controlled point
  (frame origin plus the optional ``point_offset`` o); its Jacobian is the frame's
  LOCAL_WORLD_ALIGNED linear Jacobian shifted to the point, ``J_p = J_v - [R_f·o]× J_ω``;
- ``"pose"`` rows: ``e_r = log3(R_f R*ᵀ)``, the rotation vector taking the target orientation
  to the current one, expressed in the world frame (the per-axis "roll, pitch, yaw" error of
  TRAC-IK's tolerance check); its Jacobian is taken as ``J_ω`` (exact at the solution, where
  the right Jacobian of log3 is the identity);
- ``"approach"`` rows: ``e_a = R_f·a - d`` for the tool axis ``a`` and world direction ``d``;
  its Jacobian is ``-[R_f·a]× J_ω`` (``d(R_f a)/dt = ω × R_f a``).

Rotational rows are scaled by ``orientation_weight`` [m/rad] in the weighted error and
Jacobian used by the iteration; tolerances apply to the unweighted error. The Jacobian columns
are the moved joints only.

Pinocchio gotcha: ``computeFrameJacobian`` does not refresh ``data.oMf``; here the joint
Jacobians are computed once (``computeJointJacobians``, which also runs forward kinematics),
then each frame is placed with ``updateFramePlacement`` and its Jacobian read with
``getFrameJacobian``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from ..errors import InputError
from .joints import JointSubset
from .targets import FrameGoal

__all__ = ["Residual"]

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


class Residual:
    """Stacked error and Jacobian of several frame goals over a subset of joints.

    Attributes:
        goals: The frame goals, in row order.
        m: Number of rows.
        e: Unweighted error (m,) at the last evaluated configuration.
        ew: Weighted error (m,) (the rotational rows scaled by ``orientation_weight``).
        J: Weighted Jacobian (m, n) at the last evaluated configuration.
    """

    def __init__(
        self,
        model: pin.Model,
        data: pin.Data,
        subset: JointSubset,
        goals: Sequence[FrameGoal],
        *,
        orientation_weight: float,
        position_tolerance: np.ndarray,
        orientation_tolerance: np.ndarray,
    ):
        self.model = model
        self.data = data
        self.subset = subset
        self.goals: list[FrameGoal] = list(goals)
        self.m = sum(g.nrows for g in self.goals)
        self.e = np.zeros(self.m)
        self.J = np.zeros((self.m, subset.n))
        self.weight = float(orientation_weight)
        self._weighted = self.weight != 1.0
        self.ew = np.zeros(self.m) if self._weighted else self.e
        row_weight = np.ones(self.m)
        tol = np.empty(self.m)
        self._approach_rows: list[tuple[int, float]] = []
        self._rot_rows: list[slice] = []
        self._layout: list[tuple[int, FrameGoal]] = []
        row = 0
        ori_tol_min = float(np.min(orientation_tolerance))
        for goal in self.goals:
            self._layout.append((row, goal))
            tol[row : row + 3] = position_tolerance
            if goal.mode == "pose":
                tol[row + 3 : row + 6] = orientation_tolerance
            elif goal.mode == "approach":
                tol[row + 3 : row + 6] = np.inf
                self._approach_rows.append((row + 3, ori_tol_min))
            if goal.mode != "position":
                row_weight[row + 3 : row + 6] = self.weight
                self._rot_rows.append(slice(row + 3, row + 6))
            row += goal.nrows
        self._row_weight = row_weight
        self.tolerance = tol
        # Necessary condition for convergence, checked first since it is a scalar test:
        # |e_i| <= tol_i on every axis implies ‖ew‖² <= Σ (w_i tol_i)² (an approach goal's
        # three rows have norm <= its tilt tolerance).
        finite = np.where(np.isfinite(tol), tol, 0.0) * row_weight
        bound = float(finite @ finite)
        for _, tilt_tol in self._approach_rows:
            bound += (self.weight * tilt_tol) ** 2
        self.cost_bound = bound * (1.0 + 1e-9)
        self._compile()

    def _compile(self) -> None:
        """Per-goal tuples read by :meth:`evaluate`, holding the residual's own copies of the
        target position and transposed target rotation (updated in place by
        :meth:`set_target`)."""
        self._fast = []
        for row, g in self._layout:
            rot_t = g.rotation.T.copy() if g.rotation is not None else None
            self._fast.append(
                (
                    row,
                    g.frame_id,
                    g.mode,
                    g.position.copy(),
                    rot_t,
                    g.point_offset,
                    g.approach_axis,
                    g.approach_direction,
                )
            )

    def set_goals(self, goals: Sequence[FrameGoal]) -> None:
        """Replace the goals by goals of the same frames and modes (new target values)."""
        goals = list(goals)
        if [(g.frame_id, g.mode) for g in goals] != [(g.frame_id, g.mode) for g in self.goals]:
            raise InputError("goals: frames and modes must match the residual's layout")
        self.goals = goals
        self._layout = [(row, g) for (row, _), g in zip(self._layout, goals)]
        self._compile()

    def set_target(self, index: int, position: np.ndarray, rotation: np.ndarray | None) -> None:
        """Set goal ``index``'s target position (3,) and, for a pose goal, rotation (3, 3).

        A fast path for repeated queries on the same frame; ``goals`` keeps the values the
        residual was built with.
        """
        fast = self._fast[index]
        fast[3][:] = position
        if fast[4] is not None:
            if rotation is None:
                raise InputError("target: a pose goal needs a rotation")
            fast[4][:] = rotation.T

    def target_arrays(self, index: int) -> tuple[np.ndarray, np.ndarray | None]:
        """Goal ``index``'s target position (3,) and transposed target rotation (3, 3), or None
        for a goal without one: the residual's own arrays, which :meth:`set_target` updates in
        place (read them again after :meth:`set_goals`)."""
        fast = self._fast[index]
        return fast[3], fast[4]

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, q: np.ndarray) -> float:
        """Fill ``e``, ``ew`` and ``J`` at configuration ``q``; return ``‖ew‖²``."""
        model = self.model
        data = self.data
        cols = self.subset.v_cols
        e = self.e
        J = self.J
        pin.computeJointJacobians(model, data, q)
        for row, fid, mode, p_t, rot_t, offset, axis, direction in self._fast:
            placement = pin.updateFramePlacement(model, data, fid)
            jac = pin.getFrameJacobian(model, data, fid, _LWA)
            rot = placement.rotation
            if offset is None:
                np.subtract(placement.translation, p_t, out=e[row : row + 3])
                if mode == "position":
                    J[row : row + 3] = jac[:3, cols]
                else:
                    J[row : row + 6] = jac[:, cols]
            else:
                lever = rot @ offset
                np.subtract(placement.translation + lever, p_t, out=e[row : row + 3])
                j_w = jac[3:, cols]
                J[row : row + 3] = jac[:3, cols] + np.cross(j_w.T, lever).T
                if mode != "position":
                    J[row + 3 : row + 6] = j_w
            if mode == "pose":
                e[row + 3 : row + 6] = pin.log3(rot @ rot_t)
            elif mode == "approach":
                tool_axis = rot @ axis
                np.subtract(tool_axis, direction, out=e[row + 3 : row + 6])  # type: ignore[arg-type]
                J[row + 3 : row + 6] = np.cross(J[row + 3 : row + 6].T, tool_axis).T
        if self._weighted:
            np.multiply(e, self._row_weight, out=self.ew)
            for rows in self._rot_rows:
                J[rows] *= self.weight
        ew = self.ew
        return float(ew @ ew)

    def converged(self) -> bool:
        """Whether the last evaluated error is within tolerance on every axis.

        Callers in a hot loop may test ``cost <= cost_bound`` first (a necessary condition).
        """
        e = self.e
        if not (abs(e) <= self.tolerance).all():
            return False
        for row, tol in self._approach_rows:
            if _tilt(e[row : row + 3]) > tol:
                return False
        return True

    def errors(self) -> tuple[float, float]:
        """``(position error [m], orientation error [rad])`` of the last evaluation.

        The worst goal's Euclidean position error, and the worst goal's rotation angle
        (``"pose"``), tilt angle between tool axis and direction (``"approach"``), or 0 when
        no goal constrains orientation.
        """
        pos = 0.0
        ori = 0.0
        e = self.e.tolist()  # plain floats: a few rows, faster than numpy calls
        for row, goal in self._layout:
            x, y, z = e[row : row + 3]
            pos = max(pos, math.sqrt(x * x + y * y + z * z))
            if goal.mode == "pose":
                x, y, z = e[row + 3 : row + 6]
                ori = max(ori, math.sqrt(x * x + y * y + z * z))
            elif goal.mode == "approach":
                ori = max(ori, _tilt(self.e[row + 3 : row + 6]))
        return pos, ori

    def pose_distance(self, q: np.ndarray, metric: np.ndarray) -> float:
        """CoppeliaSim's pose metric at ``q`` (worst goal), forward kinematics only.

        ``sqrt((dx·m0)² + (dy·m1)² + (dz·m2)² + (angle·m3)²)`` with ``d`` the position error
        [m] and ``angle`` the orientation error [rad] (0 for position-only goals).
        """
        model = self.model
        data = self.data
        pin.forwardKinematics(model, data, q)
        worst = 0.0
        for _, fid, mode, p_t, rot_t, offset, axis, direction in self._fast:
            placement = pin.updateFramePlacement(model, data, fid)
            rot = placement.rotation
            p = placement.translation if offset is None else placement.translation + rot @ offset
            d = (p - p_t) * metric[:3]
            angle = 0.0
            if mode == "pose":
                angle = float(np.linalg.norm(pin.log3(rot @ rot_t)))
            elif mode == "approach":
                angle = _tilt(rot @ axis - direction)
            worst = max(worst, float(np.sqrt(d @ d + (angle * metric[3]) ** 2)))
        return worst


def _tilt(diff: np.ndarray) -> float:
    """Angle [rad] between two unit vectors from their difference ``a - d``."""
    half = min(1.0, 0.5 * float(np.sqrt(diff @ diff)))
    return 2.0 * float(np.arcsin(half))
