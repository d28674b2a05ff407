"""GripperController: one gripper joint driven toward an open or closed goal at a limited speed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..state import JointState, RobotState
from .base import BaseController

__all__ = ["GripperController"]


class GripperController(BaseController):
    """Moves one gripper joint toward a goal position at a limited speed.

    Each ``forward`` moves the commanded position by at most ``speed`` times the time since the
    previous call toward the goal, and outputs it with the matching velocity (``±speed`` while
    moving, 0 once there) as feed-forward. It commands only its joint, so it runs beside an arm
    controller in a :class:`~pinkctl.controllers.CombinedController`.

    Args:
        robot_joint_space: Joint space of the output (e.g. ``MujocoSimulation.joint_names``).
        joint: The gripper joint to command (e.g. ``"panda_finger_joint1"``).
        open_position: Position of :meth:`open` [m] or [rad].
        closed_position: Position of :meth:`close` [m] or [rad].
        speed: Joint speed [m/s] or [rad/s], > 0.

    Raises:
        ValueError: If ``joint`` is not in the joint space, or a number is not finite (speed:
            not positive).
    """

    def __init__(
        self,
        robot_joint_space: Sequence[str],
        *,
        joint: str,
        open_position: float,
        closed_position: float,
        speed: float,
    ) -> None:
        super().__init__()
        space = list(robot_joint_space)
        if joint not in space:
            raise ValueError(f"joint {joint!r} is not in robot_joint_space {space}")
        for name, value in (("open_position", open_position), ("closed_position", closed_position)):
            if not np.isfinite(value):
                raise ValueError(f"{name} must be finite, got {value!r}")
        if not (np.isfinite(speed) and speed > 0):
            raise ValueError(f"speed must be > 0, got {speed!r}")
        self.joint_space = space
        self.joint = joint
        self.open_position = float(open_position)
        self.closed_position = float(closed_position)
        self.speed = float(speed)
        self.goal = self.open_position
        self._command = self.open_position
        self._t_last: float | None = None

    def open(self) -> None:
        """Move toward ``open_position`` from the next ``forward`` on."""
        self.goal = self.open_position

    def close(self) -> None:
        """Move toward ``closed_position`` from the next ``forward`` on."""
        self.goal = self.closed_position

    def reset(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> bool:
        """Start from the measured joint position (False if the estimate lacks it)."""
        joints = estimated_state.joints
        if joints is None or self.joint not in joints.position_names:
            self.last_error = f"estimated state has no position for {self.joint!r}"
            return False
        self._command = float(joints.get_positions([self.joint])[0])
        self._t_last = float(t)
        self.last_error = None
        return True

    def forward(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> RobotState | None:
        """One speed-limited step toward the goal; None before :meth:`reset`."""
        if self._t_last is None:
            return self._fail("forward called before reset")
        step = max(float(t) - self._t_last, 0.0) * self.speed
        self._t_last = float(t)
        error = self.goal - self._command
        move = float(np.clip(error, -step, step))
        self._command += move
        velocity = 0.0 if abs(error) <= step else float(np.sign(error)) * self.speed
        return RobotState(
            joints=JointState.from_name(
                self.joint_space,
                positions=([self.joint], np.array([self._command])),
                velocities=([self.joint], np.array([velocity])),
            )
        )
