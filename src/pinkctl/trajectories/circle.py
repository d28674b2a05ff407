"""Circle traced by a frame in a plane."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from numpy.typing import ArrayLike

from .planar_curve import CurveArguments, PlanarCurveTrajectory

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["CircleTrajectory"]


class CircleTrajectory(PlanarCurveTrajectory):
    """A circle of radius ``r`` around ``center``, in a plane.

    Parametrisation (phase ``φ``, see
    :class:`~pinkctl.trajectories.planar_curve.PlanarCurveTrajectory`)::

        p(φ) = c + r cos(φ) u + r sin(φ) v

    It starts at ``c + r u`` and turns from ``u`` towards ``v`` (counter-clockwise about the
    normal ``u × v``). At cruise rate the speed is ``ω r`` with ``ω = 2π / period``.

    Args:
        frame: Name of the site (tool frame) the trajectory moves.
        center: Circle centre, world frame [m].
        radius: ``r`` [m], > 0.
        **kwargs: ``period``, one turn at cruise rate [s] > 0, and the options
            (:class:`~pinkctl.trajectories.CurveArguments`).
    """

    def __init__(
        self, frame: str, center: ArrayLike, *, radius: float, **kwargs: Unpack[CurveArguments]
    ) -> None:
        super().__init__(frame, center, size=radius, size_name="radius", **kwargs)

    def _curve(self, phi: float) -> tuple[float, float, float, float]:
        r = self._size
        c, s = math.cos(phi), math.sin(phi)
        return r * c, r * s, -r * s, r * c

    @property
    def radius(self) -> float:
        """Circle radius [m]."""
        return self._size
