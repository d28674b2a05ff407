"""Figure-eight (lemniscate of Gerono) traced by a frame in a plane."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from numpy.typing import ArrayLike

from .planar_curve import CurveArguments, PlanarCurveTrajectory

if TYPE_CHECKING:
    from typing_extensions import Unpack

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
        **kwargs: ``period``, one full eight at cruise rate [s] > 0, and the options
            (:class:`~pinkctl.trajectories.CurveArguments`).
    """

    def __init__(
        self, frame: str, center: ArrayLike, *, half_width: float, **kwargs: Unpack[CurveArguments]
    ) -> None:
        super().__init__(frame, center, size=half_width, size_name="half_width", **kwargs)

    def _curve(self, phi: float) -> tuple[float, float, float, float]:
        a, twice = self._size, 2.0 * phi
        return a * math.sin(phi), 0.5 * a * math.sin(twice), a * math.cos(phi), a * math.cos(twice)

    @property
    def half_width(self) -> float:
        """Half extent ``a`` along ``u`` [m]."""
        return self._size
