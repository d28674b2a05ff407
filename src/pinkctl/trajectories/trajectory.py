"""The trajectory interface: a continuous-time reference for a controller to follow."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from ..core.state import RobotState

__all__ = ["Trajectory"]


class Trajectory(ABC):
    """A reference motion over relative time ``[0, duration]``.

    Time is relative to the start of the trajectory: it starts at 0 s and ends at
    :attr:`duration`. The trajectory is conceptually continuous, so an implementation built from
    discrete samples must interpolate between them. A
    :class:`~pinkctl.controllers.trajectory_follower.TrajectoryFollower` turns absolute controller
    time into this relative time.
    """

    @property
    @abstractmethod
    def duration(self) -> float:
        """Length of the trajectory [s]."""

    @abstractmethod
    def get_target_state(self, time: float) -> RobotState | None:
        """State to track at relative ``time`` [s], or None when there is none."""


def _check_time(time: float) -> float:
    """Return ``time`` as a float; ValueError if it is not a finite real number."""
    try:
        value = float(time)
    except (TypeError, ValueError):
        raise InputError(f"time must be a finite number of seconds, got {time!r}") from None
    if not math.isfinite(value):
        raise InputError(f"time must be a finite number of seconds, got {time!r}")
    return value
