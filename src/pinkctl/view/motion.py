"""Minimum-jerk target animation: what ``move_target(..., duration=T)`` plays.

The pose moves from ``(p0, q0)`` to ``(p1, q1)`` along the straight line and the shortest
rotation, with the minimum-jerk time scaling

.. math::

    s(\\tau) = 10 \\tau^3 - 15 \\tau^4 + 6 \\tau^5, \\qquad \\tau = (t - t_0) / T \\in [0, 1],

so position, velocity and acceleration are continuous, and velocity and acceleration are zero
at both ends (the profile that minimises the integral of the squared jerk between two rest
poses). Peak linear speed is ``1.875 |p1 - p0| / T``.
"""

from __future__ import annotations

import numpy as np

from .._validation import positive_number, real_number
from ..core.poses import canonical_quaternion, rotate_by_vector, rotation_vector_between

__all__ = ["MinimumJerkMove", "minimum_jerk"]


def minimum_jerk(tau: float) -> tuple[float, float]:
    """``(s, ds/dtau)`` of the minimum-jerk scaling at ``tau`` (clamped into [0, 1])."""
    tau = min(max(tau, 0.0), 1.0)
    t2 = tau * tau
    s = t2 * tau * (10.0 - 15.0 * tau + 6.0 * t2)
    ds = 30.0 * t2 * (1.0 - 2.0 * tau + t2)
    return s, ds


class MinimumJerkMove:
    """A rest-to-rest pose animation over ``[start_time, start_time + duration]``.

    Args:
        start_position: Start position [m] (3,), world frame.
        start_quaternion: Start orientation (w, x, y, z), unit.
        goal_position: Goal position [m] (3,).
        goal_quaternion: Goal orientation (w, x, y, z), unit.
        start_time: Time [s] of the start (the simulation clock of the caller).
        duration: Length [s], > 0.

    Raises:
        ValueError: On a non-positive or non-finite duration or start time.
    """

    def __init__(
        self,
        *,
        start_position: np.ndarray,
        start_quaternion: np.ndarray,
        goal_position: np.ndarray,
        goal_quaternion: np.ndarray,
        start_time: float,
        duration: float,
    ) -> None:
        self.start_time = real_number(start_time, "start_time")
        self.duration = positive_number(duration, "duration")
        self.start_position = np.array(start_position, dtype=float)
        self.start_quaternion = np.array(start_quaternion, dtype=float)
        self.goal_position = np.array(goal_position, dtype=float)
        self.goal_quaternion = np.array(goal_quaternion, dtype=float)
        self._delta_p = self.goal_position - self.start_position
        self._delta_r = rotation_vector_between(self.start_quaternion, self.goal_quaternion)

    @property
    def end_time(self) -> float:
        """Time [s] at which the goal is reached."""
        return self.start_time + self.duration

    def finished(self, t: float) -> bool:
        """Whether the goal is reached at time ``t`` [s]."""
        return t >= self.end_time

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Pose and velocity at time ``t`` [s] (held at the ends outside the interval).

        Returns:
            ``(position [m], quaternion (w, x, y, z), linear velocity [m/s], angular
            velocity [rad/s])``, all in the world frame.
        """
        if t >= self.end_time:
            return (
                self.goal_position.copy(),
                self.goal_quaternion.copy(),
                np.zeros(3),
                np.zeros(3),
            )
        s, ds = minimum_jerk((t - self.start_time) / self.duration)
        rate = ds / self.duration
        position = self.start_position + s * self._delta_p
        quaternion = canonical_quaternion(
            rotate_by_vector(self.start_quaternion, s * self._delta_r)
        )
        return position, quaternion, rate * self._delta_p, rate * self._delta_r
