"""Circle traced by a frame in a plane."""

from __future__ import annotations

import math
from collections.abc import Sequence

from numpy.typing import ArrayLike

from ._cartesian import positive_scalar
from .planar_curve import PlanarCurveTrajectory

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
        period: Time of one turn at cruise rate [s], > 0.
        **options: ``plane``, ``normal``, ``orientation``, ``cycles``, ``duration``,
            ``ramp_time``, ``orientation_amplitude``, ``orientation_axis``, ``site_space``;
            see :class:`~pinkctl.trajectories.planar_curve.PlanarCurveTrajectory`.
    """

    def __init__(
        self,
        frame: str,
        center: ArrayLike,
        *,
        radius: float,
        period: float,
        plane: str | tuple[ArrayLike, ArrayLike] | None = None,
        normal: ArrayLike | None = None,
        orientation: ArrayLike = (1.0, 0.0, 0.0, 0.0),
        cycles: float | None = None,
        duration: float | None = None,
        ramp_time: float = 0.0,
        orientation_amplitude: float = 0.0,
        orientation_axis: ArrayLike | None = None,
        site_space: Sequence[str] | None = None,
    ) -> None:
        self._radius = positive_scalar(radius, "radius")
        super().__init__(
            frame,
            center,
            period=period,
            plane=plane,
            normal=normal,
            orientation=orientation,
            cycles=cycles,
            duration=duration,
            ramp_time=ramp_time,
            orientation_amplitude=orientation_amplitude,
            orientation_axis=orientation_axis,
            site_space=site_space,
        )

    @property
    def radius(self) -> float:
        """Circle radius [m]."""
        return self._radius

    def _curve(self, phi: float) -> tuple[float, float, float, float]:
        r = self._radius
        c, s = math.cos(phi), math.sin(phi)
        return r * c, r * s, -r * s, r * c

    def __repr__(self) -> str:
        return (
            f"CircleTrajectory(frame={self._frame!r}, radius={self._radius}, "
            f"period={self._period}, duration={self.duration:.6g} s)"
        )
