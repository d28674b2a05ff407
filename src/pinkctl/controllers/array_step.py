"""The controller's tick on arrays: :meth:`ArrayStep.step`, for loops that hold numpy arrays.

``step(q_measured, target_pose)`` is :meth:`~pinkctl.controllers.PinkIKController.forward`
with the states built through a :class:`~pinkctl.core.state.JointSpace` and a
:class:`~pinkctl.core.state.SiteSpace` made once per controller: the same tick, the same
command, ``status`` and ``last_error``, without the caller building states.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..core.state import JointSpace, RobotState, SiteSpace
from ..errors import InputError

__all__ = ["ArrayStep", "PoseArg"]

#: A target pose: ``pin.SE3``, ``(position (3,), quaternion (w, x, y, z))`` or a (4, 4)
#: homogeneous transform, in the world frame [m].
PoseArg: TypeAlias = "pin.SE3 | tuple[ArrayLike, ArrayLike] | ArrayLike"


def _position_quaternion(pose: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(position (3,), quaternion (w, x, y, z))`` of a :data:`PoseArg` (values are checked
    where the state is built)."""
    if isinstance(pose, pin.SE3):
        xyzw = pin.Quaternion(pose.rotation).coeffs()
        return pose.translation, np.array([xyzw[3], xyzw[0], xyzw[1], xyzw[2]])
    if isinstance(pose, tuple) and len(pose) == 2:
        return np.asarray(pose[0]), np.asarray(pose[1])
    matrix = np.asarray(pose)
    if matrix.shape != (4, 4) or matrix.dtype.kind not in "iuf":
        raise InputError(
            "target_pose: expected pin.SE3, (position, quaternion wxyz) or a (4, 4) transform, "
            f"got {pose!r}"
        )
    return _position_quaternion(pin.SE3(matrix.astype(np.float64)))


class ArrayStep:
    """Mixed into :class:`~pinkctl.controllers.PinkIKController`: :meth:`step`."""

    robot_joint_space: list[str]
    tool_frame: str | None
    _array_spaces: tuple[JointSpace, SiteSpace, dict[Any, np.ndarray]] | None = None
    forward: Callable[..., RobotState | None]  # the controller's own
    # the compiled tick's (pinkctl.controllers.compiled_path): None where it does not apply
    _compiled_step: Callable[[Any, Any], np.ndarray | None]

    def step(
        self,
        q_measured: ArrayLike,
        target_pose: PoseArg,
        *,
        dq_measured: ArrayLike | None = None,
        t: float = 0.0,
    ) -> np.ndarray | None:
        """One tick on arrays: the command's joint positions over ``robot_joint_space``.

        Args:
            q_measured: Measured positions over ``robot_joint_space`` [rad or m].
            target_pose: The tool frame's target (:data:`PoseArg`, world frame).
            dq_measured: Measured velocities [/s] (default: none given, as a state without
                velocities).
            t: Time [s], passed to ``forward``.

        Returns:
            The commanded positions (joints the controller does not move keep their measured
            value), or None where ``forward`` returns None (before a reset). ``status`` and
            ``last_error`` say how the tick went, as after ``forward``.

        Raises:
            InputError: Arrays of the wrong shape or not finite, a malformed pose, or a
                controller without a tool frame.
        """
        if self.tool_frame is None:
            raise InputError("step: the controller has no tool frame to move; use forward")
        if dq_measured is None:  # the compiled tick, without states, where it applies
            array = self._compiled_step(q_measured, target_pose)
            if array is not None:
                return array
        estimate, setpoint = self._states(q_measured, dq_measured, target_pose)
        command = self.forward(estimate, setpoint, t)
        if command is None or command.joints is None or command.joints.positions is None:
            return None
        return self._positions(estimate, command)

    def _states(
        self, q_measured: ArrayLike, dq_measured: ArrayLike | None, target_pose: PoseArg
    ) -> tuple[RobotState, RobotState]:
        """The estimate and setpoint states of :meth:`step`'s arrays, through the spaces made
        once per controller."""
        if self._array_spaces is None:
            self._array_spaces = (
                JointSpace(self.robot_joint_space),
                SiteSpace([self.tool_frame]),  # type: ignore[list-item]
                {},
            )
        joints, sites, _ = self._array_spaces
        estimate = RobotState(joints=joints.state(q_measured, dq_measured))
        position, quaternion = _position_quaternion(target_pose)
        setpoint = RobotState(
            sites=sites.state(np.reshape(position, (1, 3)), np.reshape(quaternion, (1, 4)))
        )
        return estimate, setpoint

    def _positions(self, estimate: RobotState, command: RobotState) -> np.ndarray:
        """The command's positions over ``robot_joint_space``: the measured ones where the
        command has none."""
        indices = self._array_spaces[2]  # type: ignore[index]
        commanded = command.joints
        valid = commanded.valid_array[0]  # type: ignore[union-attr]
        key = (commanded.name_space, valid.tobytes())  # type: ignore[union-attr]
        where = indices.get(key)
        if where is None:  # the command's positions in robot_joint_space's order
            order = {name: i for i, name in enumerate(self.robot_joint_space)}
            where = indices[key] = np.array(
                [order[n] for n in commanded.position_names],  # type: ignore[union-attr]
                dtype=np.intp,
            )
        out = estimate.joints._position_row().copy()  # type: ignore[union-attr]
        out[where] = commanded.data_array[0, valid]  # type: ignore[union-attr]
        return out
