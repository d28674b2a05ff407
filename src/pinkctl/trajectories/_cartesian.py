"""Shared helpers of the Cartesian trajectories: argument checks and the output state."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..state import RobotState, SpatialState


def check_frame_and_space(frame: str, site_space: Sequence[str] | None) -> list[str]:
    """Validate the frame name and return the site space (``[frame]`` by default)."""
    if not isinstance(frame, str) or not frame:
        raise ValueError(f"frame must be a non-empty string, got {frame!r}")
    if site_space is None:
        return [frame]
    if isinstance(site_space, str) or not isinstance(site_space, Sequence):
        raise ValueError(f"site_space must be a list of frame names, got {site_space!r}")
    space = list(site_space)
    if not all(isinstance(name, str) for name in space):
        raise ValueError(f"site_space must contain strings, got {space}")
    if len(set(space)) != len(space):
        raise ValueError(f"site_space contains duplicate names: {space}")
    if frame not in space:
        raise ValueError(f"frame {frame!r} is not in site_space {space}")
    return space


def positive_scalar(value: float, argument: str) -> float:
    """Return ``value`` as a float; ValueError unless finite and > 0."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{argument} must be a finite number > 0, got {value!r}") from None
    if not (np.isfinite(number) and number > 0.0):
        raise ValueError(f"{argument} must be a finite number > 0, got {value!r}")
    return number


def vector3(value: ArrayLike, argument: str) -> np.ndarray:
    """Return ``value`` as a finite float64 array of shape (3,); ValueError otherwise."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{argument} must be a 3-vector of real numbers") from None
    if array.shape != (3,):
        raise ValueError(f"{argument} must have shape (3,), got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{argument} must be finite (no NaN or infinity)")
    return array


def site_state(
    site_space: list[str],
    frame: str,
    position: np.ndarray,
    orientation: np.ndarray,
    linear_velocity: np.ndarray,
    angular_velocity: np.ndarray,
) -> RobotState:
    """``RobotState(sites=...)`` with all four fields of ``frame`` valid (world frame).

    Trajectories call this on every sample, so the state is wrapped directly (the same
    arrays ``SpatialState.from_name`` would build) once the values are known to be finite.
    """
    # the sum of squares is finite when every entry is (cheaper than four numpy reductions);
    # huge finite values overflow it and merely take the checked path below
    total = position.dot(position) + orientation.dot(orientation)
    total += linear_velocity.dot(linear_velocity) + angular_velocity.dot(angular_velocity)
    if not math.isfinite(total):
        names = [frame]
        sites = SpatialState.from_name(  # raises the documented ValueError
            site_space,
            positions=(names, position.reshape(1, 3)),
            orientations=(names, orientation.reshape(1, 4)),
            linear_velocities=(names, linear_velocity.reshape(1, 3)),
            angular_velocities=(names, angular_velocity.reshape(1, 3)),
        )
        return RobotState(sites=sites)
    m = len(site_space)
    row = site_space.index(frame)
    arrays = [np.zeros((m, 3)), np.zeros((m, 4)), np.zeros((m, 3)), np.zeros((m, 3))]
    fields = (position, orientation, linear_velocity, angular_velocity)
    for array, value in zip(arrays, fields):
        array[row] = value
    valid = np.zeros((m, 4), dtype=bool)
    valid[row] = True
    sites = SpatialState._from_trusted(site_space, arrays, valid)
    return RobotState(sites=sites)
