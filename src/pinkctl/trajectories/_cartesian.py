"""Shared parts of the Cartesian trajectories: argument checks, the output state, the base."""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence

import numpy as np

from ..core.state import RobotState, SpatialState, name_space
from ..errors import InputError
from .trajectory import Trajectory


def check_frame_and_space(frame: str, site_space: Sequence[str] | None) -> list[str]:
    """Validate the frame name and return the site space (``[frame]`` by default)."""
    if not isinstance(frame, str) or not frame:
        raise InputError(f"frame must be a non-empty string, got {frame!r}")
    if site_space is None:
        return [frame]
    if isinstance(site_space, str) or not isinstance(site_space, Sequence):
        raise InputError(f"site_space must be a list of frame names, got {site_space!r}")
    space = list(site_space)
    if not all(isinstance(name, str) for name in space):
        raise InputError(f"site_space must contain strings, got {space}")
    if len(set(space)) != len(space):
        raise InputError(f"site_space contains duplicate names: {space}")
    if frame not in space:
        raise InputError(f"frame {frame!r} is not in site_space {space}")
    return space


class SiteStateWriter:
    """Builds the ``RobotState(sites=...)`` of a Cartesian trajectory sample.

    Trajectories produce one on every sample, so the name space, the frame's row and the
    validity mask (all four fields of ``frame`` valid, world frame) are prepared once and the
    sampled arrays are wrapped directly once they are known to be finite.

    Args:
        site_space: The state's frame names (validated by :func:`check_frame_and_space`).
        frame: The sampled frame, in ``site_space``.
    """

    def __init__(self, site_space: list[str], frame: str) -> None:
        self.site_space = list(site_space)
        self.frame = frame
        self._space = name_space(self.site_space, "site_space")
        self._row = self._space.index[frame]
        valid = np.zeros((len(self.site_space), 4), dtype=bool)
        valid[self._row] = True
        valid.setflags(write=False)  # shared by every state this writer builds
        self._valid = valid

    def state(
        self,
        position: np.ndarray,
        orientation: np.ndarray,
        linear_velocity: np.ndarray,
        angular_velocity: np.ndarray,
    ) -> RobotState:
        """The state of one sample; the caller hands over four fresh arrays (3, 4, 3, 3).

        Raises:
            ValueError: If a value is NaN or infinite (the state types' message).
        """
        # the sum of squares is finite when every entry is (cheaper than four numpy
        # reductions); huge finite values overflow it and merely take the checked path
        total = position.dot(position) + orientation.dot(orientation)
        total += linear_velocity.dot(linear_velocity) + angular_velocity.dot(angular_velocity)
        if not math.isfinite(total):
            names = [self.frame]
            sites = SpatialState.from_name(  # raises the documented ValueError
                self.site_space,
                positions=(names, position.reshape(1, 3)),
                orientations=(names, orientation.reshape(1, 4)),
                linear_velocities=(names, linear_velocity.reshape(1, 3)),
                angular_velocities=(names, angular_velocity.reshape(1, 3)),
            )
            return RobotState(sites=sites)
        fields = (position, orientation, linear_velocity, angular_velocity)
        m = len(self.site_space)
        if m == 1:  # the sampled arrays themselves, as one-row matrices
            arrays = [field.reshape(1, -1) for field in fields]
        else:
            arrays = [np.zeros((m, field.shape[0])) for field in fields]
            for array, value in zip(arrays, fields):
                array[self._row] = value
        return RobotState(sites=SpatialState.from_trusted(self._space, arrays, self._valid))


class SiteTrajectory(Trajectory):
    """A trajectory of one site's pose and velocity, sampled by :meth:`sample`.

    Args:
        frame: Name of the site (tool frame) the trajectory moves.
        site_space: Ordered frame names of the output states; must contain ``frame``.
            Default ``[frame]``.

    Raises:
        ValueError: An empty frame name, or a site space that is malformed or lacks ``frame``.
    """

    def __init__(self, frame: str, site_space: Sequence[str] | None) -> None:
        self._frame = frame
        self._writer = SiteStateWriter(check_frame_and_space(frame, site_space), frame)

    @property
    def frame(self) -> str:
        """Name of the frame the trajectory moves."""
        return self._frame

    @property
    def site_space(self) -> list[str]:
        """Ordered frame names of the output states (copy)."""
        return list(self._writer.site_space)

    @abstractmethod
    def sample(self, time: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(position (3,), orientation (4,) wxyz, linear_velocity (3,), angular_velocity
        (3,))`` at relative ``time``, world frame, SI units."""

    def get_target_state(self, time: float) -> RobotState:
        """Target pose and velocity of :attr:`frame` at relative ``time``.

        ``time`` is clamped to ``[0, duration]`` (like
        :class:`~pinkctl.trajectories.minimal_time_joint_trajectory.MinimalTimeJointTrajectory`),
        so this never returns None.

        Returns:
            ``RobotState(sites=SpatialState)`` over :attr:`site_space` with position,
            orientation (w, x, y, z), linear and angular velocity of :attr:`frame` valid, all
            in the world frame.

        Raises:
            ValueError: If ``time`` is not finite.
        """
        return self._writer.state(*self.sample(time))
