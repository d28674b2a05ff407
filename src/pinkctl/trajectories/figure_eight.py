"""Figure-eight (lemniscate of Gerono) traced by a frame in a plane."""

from __future__ import annotations

import math
from collections.abc import Sequence

from numpy.typing import ArrayLike

from ._cartesian import positive_scalar
from .planar_curve import PlanarCurveTrajectory

__all__ = ["FigureEightTrajectory"]


class FigureEightTrajectory(PlanarCurveTrajectory):
    """A figure eight: the lemniscate of Gerono, centred on ``center``, in a plane.

    Parametrisation (phase ``φ``, see
    :class:`~pinkctl.trajectories.planar_curve.PlanarCurveTrajectory`)::

        p(φ) = c + a sin(φ) u + (a / 2) sin(2φ) v

    ``a = half_width``: the curve spans ``[-a, a]`` along ``u`` and ``[-a/2, a/2]`` along
    ``v``. It starts at the centre (where it crosses itself) heading along ``+u`` and ``+v``,
    runs the ``+u`` lobe, comes back through the centre, runs the ``-u`` lobe and closes after
    one period. Without a ramp the speed through the centre is ``√2 ω a`` with
    ``ω = 2π / period``.

    Args:
        frame: Name of the site (tool frame) the trajectory moves.
        center: Centre (crossing point) of the eight, world frame [m].
        half_width: ``a`` [m], > 0.
        period: Time of one full eight at cruise rate [s], > 0.
        **options: ``plane``, ``normal``, ``orientation``, ``cycles``, ``duration``,
            ``ramp_time``, ``orientation_amplitude``, ``orientation_axis``, ``site_space``;
            see :class:`~pinkctl.trajectories.planar_curve.PlanarCurveTrajectory`.
    """

    def __init__(
        self,
        frame: str,
        center: ArrayLike,
        *,
        half_width: float,
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
        self._half_width = positive_scalar(half_width, "half_width")
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
    def half_width(self) -> float:
        """Half extent ``a`` along ``u`` [m]."""
        return self._half_width

    def _curve(self, phi: float) -> tuple[float, float, float, float]:
        a = self._half_width
        return (
            a * math.sin(phi),
            0.5 * a * math.sin(2.0 * phi),
            a * math.cos(phi),
            a * math.cos(2.0 * phi),
        )

    def __repr__(self) -> str:
        return (
            f"FigureEightTrajectory(frame={self._frame!r}, half_width={self._half_width}, "
            f"period={self._period}, duration={self.duration:.6g} s)"
        )
