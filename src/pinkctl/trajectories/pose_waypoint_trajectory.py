"""Cartesian pose trajectory through waypoints: straight lines and slerp, at rest at each one."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._validation import positive_number
from ..core.poses import rotate_by_vector, rotation_vector_between, unit_quaternions
from ..errors import InputError
from ._cartesian import SiteTrajectory
from .time_scaling import TrapezoidTimeScaling
from .trajectory import _check_time

__all__ = ["PoseWaypointTrajectory"]

_POSITION_TOLERANCE = 1e-9  # [m] consecutive waypoints closer than this and ...
_ANGLE_TOLERANCE = 1e-9  # [rad] ... rotated by less than this are duplicates


class PoseWaypointTrajectory(SiteTrajectory):
    """Pose of one frame moving through K waypoints, stopping at each (world frame).

    Segment ``k`` joins waypoint ``k`` to ``k + 1``. With the path parameter ``s`` in [0, 1],
    the position moves on the straight line ``p(s) = p_k + s (p_{k+1} - p_k)`` and the
    orientation by spherical linear interpolation along the shortest arc,
    ``q(s) = exp(s θ n / 2) ⊗ q_k`` where ``θ n`` (angle θ in [0, π], world-frame unit axis
    ``n``) is the rotation vector of ``q_{k+1} ⊗ q_k⁻¹``. ``s(t)`` is the rest-to-rest
    trapezoid of :class:`~pinkctl.trajectories.time_scaling.TrapezoidTimeScaling` for the two
    "coordinates" distance ``L = |p_{k+1} - p_k|`` and angle ``θ`` under their own speed and
    acceleration limits, so whichever of translation and rotation is slower sets the segment
    duration and both finish together.

    Output velocities are exact derivatives: linear velocity ``s'(t) (p_{k+1} - p_k)`` [m/s] and
    world-frame angular velocity ``s'(t) θ n`` [rad/s]. Speeds and accelerations never exceed the
    limits, and at least one limit is reached in each segment.

    Args:
        frame: Name of the site (tool frame) the trajectory moves.
        positions: Waypoint positions, shape (K, 3), world frame [m]; K >= 2.
        orientations: Waypoint orientations, shape (K, 4), (w, x, y, z), world frame.
            Normalised on input; the sign of each quaternion does not matter.
        max_linear_velocity: Speed limit of the frame origin [m/s], > 0.
        max_angular_velocity: Angular speed limit [rad/s], > 0.
        max_linear_acceleration: Linear acceleration limit [m/s²], > 0.
        max_angular_acceleration: Angular acceleration limit [rad/s²], > 0.
        site_space: Ordered frame names of the output :class:`~pinkctl.core.state.SpatialState`;
            must contain ``frame``. Defaults to ``[frame]``.

    Raises:
        ValueError: On malformed arrays, K < 2, non-positive limits, a zero quaternion, or two
            consecutive waypoints with the same pose (position within 1e-9 m and orientation
            within 1e-9 rad).
    """

    def __init__(
        self,
        frame: str,
        positions: ArrayLike,
        orientations: ArrayLike,
        *,
        max_linear_velocity: float,
        max_angular_velocity: float,
        max_linear_acceleration: float,
        max_angular_acceleration: float,
        site_space: Sequence[str] | None = None,
    ) -> None:
        super().__init__(frame, site_space)
        points = _waypoints(positions)
        count = points.shape[0]
        rotations = unit_quaternions(orientations, "orientations", count=count)
        v_max = np.array(
            [
                positive_number(max_linear_velocity, "max_linear_velocity"),
                positive_number(max_angular_velocity, "max_angular_velocity"),
            ]
        )
        a_max = np.array(
            [
                positive_number(max_linear_acceleration, "max_linear_acceleration"),
                positive_number(max_angular_acceleration, "max_angular_acceleration"),
            ]
        )

        self._positions, self._orientations = points, rotations
        self._translations = np.diff(points, axis=0)
        self._rotation_vectors = [
            rotation_vector_between(rotations[k], rotations[k + 1]) for k in range(count - 1)
        ]
        self._profiles = [
            _profile(k, self._translations[k], self._rotation_vectors[k], v_max, a_max)
            for k in range(count - 1)
        ]
        starts = np.concatenate(
            ([0.0], np.cumsum([profile.duration for profile in self._profiles]))
        )
        self._segment_starts = starts
        self._segment_start_list = starts[:-1].tolist()
        self._duration = float(starts[-1])

    @property
    def duration(self) -> float:
        """Total time [s]: the sum of the segment durations."""
        return self._duration

    @property
    def waypoint_times(self) -> np.ndarray:
        """Time at which each waypoint is reached [s], shape (K,); starts at 0."""
        return self._segment_starts.copy()

    def sample(self, time: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Pose and velocity at relative ``time``, clamped to ``[0, duration]``.

        Returns:
            ``(position (3,), orientation (4,) wxyz, linear_velocity (3,),
            angular_velocity (3,))``, world frame, SI units.

        Raises:
            ValueError: If ``time`` is not finite.
        """
        tau = min(max(_check_time(time), 0.0), self._duration)
        k = max(bisect.bisect_right(self._segment_start_list, tau) - 1, 0)
        s, s_dot, _ = self._profiles[k].evaluate(tau - self._segment_start_list[k])
        translation = self._translations[k]
        rotation_vector = self._rotation_vectors[k]
        position = self._positions[k] + s * translation
        orientation = rotate_by_vector(self._orientations[k], s * rotation_vector)
        return position, orientation, s_dot * translation, s_dot * rotation_vector

    def __repr__(self) -> str:
        return (
            f"PoseWaypointTrajectory(frame={self._frame!r}, {len(self._positions)} waypoints, "
            f"duration={self._duration:.6g} s)"
        )


def _waypoints(positions: ArrayLike) -> np.ndarray:
    """``positions`` as a finite (K, 3) float array, K >= 2."""
    try:
        points = np.array(positions, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("positions must be a (K, 3) array of real numbers") from None
    if points.ndim != 2 or points.shape[1] != 3:
        raise InputError(f"positions must have shape (K, 3), got {points.shape}")
    if not np.all(np.isfinite(points)):
        raise InputError("positions must be finite (no NaN or infinity)")
    if points.shape[0] < 2:
        raise InputError(f"a trajectory needs at least 2 waypoints, got {points.shape[0]}")
    return points


def _profile(
    k: int, translation: np.ndarray, rotation: np.ndarray, v_max: np.ndarray, a_max: np.ndarray
) -> TrapezoidTimeScaling:
    """The time scaling of segment ``k`` (translation [m] and rotation vector [rad]), both
    parts synchronised.

    Raises:
        ValueError: If the segment does not move (its waypoints have the same pose).
    """
    length = float(np.linalg.norm(translation))
    angle = float(np.linalg.norm(rotation))
    if length <= _POSITION_TOLERANCE and angle <= _ANGLE_TOLERANCE:
        raise InputError(f"waypoints {k} and {k + 1} have the same pose; remove the duplicate")
    return TrapezoidTimeScaling.synchronized([length, angle], v_max, a_max)
