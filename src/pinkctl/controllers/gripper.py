"""GripperController: one gripper joint driven toward an open or closed goal at a limited speed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import Any

import numpy as np

from .._validation import name_list, real_number
from ..core.state import JointState, RobotState
from ..errors import InputError
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
        space = name_list(robot_joint_space, "robot_joint_space", allow_empty=False)
        if joint not in space:
            raise InputError(f"joint {joint!r} is not in robot_joint_space {space}")
        self.joint_space = space
        self.joint = joint
        self.open_position = real_number(open_position, "open_position")
        self.closed_position = real_number(closed_position, "closed_position")
        self.speed = real_number(speed, "speed", low=0.0, low_open=True)
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
        """Start from the measured joint position (False if the estimate lacks it or ``t`` is
        not a finite time)."""
        if not _finite_time(t):
            self.last_error = f"time t must be a finite number, got {t!r}"
            return False
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
        """One speed-limited step toward the goal; None before :meth:`reset`.

        A non-finite ``t`` holds the current command (velocity 0) and records why.
        """
        if self._t_last is None:
            return self._fail("forward called before reset")
        if not _finite_time(t):
            self.last_error = f"time t must be a finite number, got {t!r}: holding"
            return self._state(0.0)
        step = max(float(t) - self._t_last, 0.0) * self.speed
        self._t_last = float(t)
        error = self.goal - self._command
        move = float(np.clip(error, -step, step))
        self._command += move
        velocity = 0.0 if abs(error) <= step else float(np.sign(error)) * self.speed
        self.last_error = None
        return self._state(velocity)

    def _state(self, velocity: float) -> RobotState:
        return RobotState(
            joints=JointState.from_name(
                self.joint_space,
                positions=([self.joint], np.array([self._command])),
                velocities=([self.joint], np.array([velocity])),
            )
        )


def _finite_time(t: Any) -> bool:
    return isinstance(t, Real) and not isinstance(t, bool) and math.isfinite(float(t))
