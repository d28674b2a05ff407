"""Base class of closed planar curves traced by a frame: plane, phase ramps, orientation.

Every curve takes the same placement and timing options (:class:`PlanarCurveOptions`), as an
options object, as keywords, or both (keywords override the object's fields)::

    options = PlanarCurveOptions(plane="xy", ramp_time=1.0, cycles=3)
    circle = CircleTrajectory("tool", center, radius=0.1, period=4.0, options=options)
    eight = FigureEightTrajectory("tool", center, half_width=0.15, period=8.0, ramp_time=0.5)
"""

from __future__ import annotations

import dataclasses
import math
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

import numpy as np
from numpy.typing import ArrayLike

from .._validation import positive_number, real_array, real_number
from ..core.poses import rotate_by_vector, unit_quaternions
from ..errors import InputError
from ._cartesian import SiteTrajectory
from .phase import RampedPhase
from .trajectory import _check_time

if TYPE_CHECKING:
    from typing_extensions import Required, Unpack

__all__ = [
    "CurveArguments",
    "PlanarCurveChanges",
    "PlanarCurveOptions",
    "PlanarCurveTrajectory",
    "plane_axes",
]

_AXES = dict(zip("xyz", np.eye(3), strict=True))
_ORTHONORMAL_TOLERANCE = 1e-6


def plane_axes(
    plane: str | tuple[ArrayLike, ArrayLike] | None = None, normal: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal in-plane axes ``(u, v)`` (world frame) from a plane name, axes or a normal.

    Args:
        plane: Two distinct letters of ``"xyz"`` naming the world axes ``u`` and ``v`` in that
            order (``"yz"``: ``u = y``, ``v = z``), or a pair of orthonormal 3-vectors
            ``(u, v)`` (checked to 1e-6, then re-orthonormalised exactly).
        normal: Plane normal instead of ``plane``. ``u`` is then the world axis least aligned
            with the normal, projected into the plane and normalised (ties go to x, then y),
            and ``v = normal × u``, so ``(u, v, normal)`` is right-handed.

    Defaults to the ``"yz"`` plane when neither is given.

    Raises:
        ValueError: If both are given, the name is not two distinct axis letters, the axes are
            not orthonormal, or the normal is zero.
    """
    if plane is not None and normal is not None:
        raise InputError("give either plane or normal, not both")
    if normal is not None:
        n = _unit(normal, "normal")
        seed = _AXES["xyz"[int(np.argmin(np.abs(n)))]]
        u = seed - (seed @ n) * n
        u = u / np.linalg.norm(u)
        return u, np.cross(n, u)
    if plane is None:
        plane = "yz"
    if isinstance(plane, str):
        return _named_axes(plane)
    return _given_axes(plane)


def _given_axes(plane: tuple[ArrayLike, ArrayLike]) -> tuple[np.ndarray, np.ndarray]:
    """A pair of orthonormal 3-vectors (checked to 1e-6), re-orthonormalised exactly."""
    if not isinstance(plane, Sequence) or len(plane) != 2:
        raise InputError(
            f"plane must be a name like 'yz' or a pair of 3-vectors (u, v), got {plane!r}"
        )
    u = real_array(plane[0], "plane u axis", (3,))
    v = real_array(plane[1], "plane v axis", (3,))
    if (
        abs(float(u @ u) - 1.0) > _ORTHONORMAL_TOLERANCE
        or abs(float(v @ v) - 1.0) > _ORTHONORMAL_TOLERANCE
        or abs(float(u @ v)) > _ORTHONORMAL_TOLERANCE
    ):
        raise InputError(f"plane axes must be orthonormal, got u={u}, v={v}")
    u = u / np.linalg.norm(u)
    v = v - (v @ u) * u
    return u, v / np.linalg.norm(v)


def _named_axes(plane: str) -> tuple[np.ndarray, np.ndarray]:
    """The world axes a plane name like ``"yz"`` names, in its order."""
    name = plane.lower()
    if len(name) != 2 or name[0] == name[1] or any(c not in _AXES for c in name):
        raise InputError(f"plane must be two distinct letters of 'xyz' (e.g. 'yz'), got {plane!r}")
    return _AXES[name[0]].copy(), _AXES[name[1]].copy()


def _unit(value: ArrayLike, name: str) -> np.ndarray:
    """A non-zero finite 3-vector, normalised."""
    vector = real_array(value, name, (3,))
    norm = float(np.linalg.norm(vector))
    if norm < 1e-9:
        raise InputError(f"{name} must be a non-zero vector")
    return vector / norm


@dataclass(frozen=True)
class PlanarCurveOptions:
    """Where a planar curve lies, how long it runs, and how the frame is oriented.

    Values are checked when a trajectory is built from them.

    Attributes:
        plane: Plane of the curve, see :func:`plane_axes` (default ``"yz"``).
        normal: Plane normal instead of ``plane``, see :func:`plane_axes`.
        orientation: Fixed orientation ``q₀`` (w, x, y, z), world frame; default identity.
        cycles: Number of cycles; the trajectory lasts ``cycles * period + ramp_time`` and ends
            where it started. Default 1 when ``duration`` is not given.
        duration: Total time [s] instead of ``cycles`` (the end point is then wherever the phase
            is); must be at least ``2 * ramp_time``.
        ramp_time: Length of the start and stop ramps [s], >= 0. Default 0: the curve starts at
            full speed, which a controller starting at rest cannot track exactly.
        orientation_amplitude: Rocking amplitude ``A`` [rad], default 0.
        orientation_axis: World axis ``k`` of the rocking; default ``u``. Normalised.
        site_space: Ordered frame names of the output state; must contain the frame. Default
            ``[frame]``.
    """

    plane: str | tuple[ArrayLike, ArrayLike] | None = None
    normal: ArrayLike | None = None
    orientation: ArrayLike = (1.0, 0.0, 0.0, 0.0)
    cycles: float | None = None
    duration: float | None = None
    ramp_time: float = 0.0
    orientation_amplitude: float = 0.0
    orientation_axis: ArrayLike | None = None
    site_space: Sequence[str] | None = None


class PlanarCurveChanges(TypedDict, total=False):
    """The fields of :class:`PlanarCurveOptions` as keywords of a curve's constructor."""

    plane: str | tuple[ArrayLike, ArrayLike] | None
    normal: ArrayLike | None
    orientation: ArrayLike
    cycles: float | None
    duration: float | None
    ramp_time: float
    orientation_amplitude: float
    orientation_axis: ArrayLike | None
    site_space: Sequence[str] | None


class CurveArguments(PlanarCurveChanges, total=False):
    """What a curve's constructor passes on to :class:`PlanarCurveTrajectory` as keywords:
    ``period`` (required), ``options`` and the fields of :class:`PlanarCurveOptions`."""

    period: Required[float]
    options: PlanarCurveOptions | None


class PlanarCurveTrajectory(SiteTrajectory):
    """A frame tracing a closed curve in a plane, with a fixed or gently rocking orientation.

    The position is ``p(t) = c + x(φ) u + y(φ) v``: the subclass gives the in-plane curve
    ``(x(φ), y(φ))`` of its size (a circle's radius, ...), closed with period ``2π`` in the
    phase ``φ``, and its derivative. The phase ``φ(t)`` is a
    :class:`~pinkctl.trajectories.phase.RampedPhase` with cruise rate ``ω = 2π / period``:
    with ``ramp_time > 0`` the frame starts from rest, speeds up smoothly over ``ramp_time``,
    and slows down to rest over the last ``ramp_time`` seconds, so a controller starting at
    rest can track it. The linear velocity is exact,
    ``p'(t) = φ'(t) (x'(φ) u + y'(φ) v)``.

    The orientation is ``q(t) = exp(α(t) k / 2) ⊗ q₀`` with ``α(t) = A sin φ(t)``: the fixed
    orientation ``q₀`` rocked about the world axis ``k`` by up to ``A`` rad, in step with the
    curve (``A = 0``, the default, keeps it fixed). The world-frame angular velocity is
    ``k A cos φ(t) φ'(t)``.

    Times are clamped to ``[0, duration]`` (the trajectory never returns None).

    Args:
        frame: Name of the site (tool frame) the trajectory moves.
        center: Curve centre ``c``, world frame [m].
        size: The curve's size [m], > 0 (its meaning is the subclass's).
        size_name: The subclass's name of ``size`` (``"radius"``), for messages and ``repr``.
        period: Time of one cycle at cruise rate [s], > 0.
        options: Plane, timing and orientation (:class:`PlanarCurveOptions`); default: its
            defaults.
        **changes: Fields of :class:`PlanarCurveOptions` (``plane="xy"``, ``ramp_time=1.0``,
            ...), overriding ``options``.

    Raises:
        ValueError: On any malformed or out-of-range argument, or when both ``cycles`` and
            ``duration`` are given.
        TypeError: A keyword that is not a field of :class:`PlanarCurveOptions`.
    """

    def __init__(
        self,
        frame: str,
        center: ArrayLike,
        *,
        size: float,
        size_name: str = "size",
        period: float,
        options: PlanarCurveOptions | None = None,
        **changes: Unpack[PlanarCurveChanges],
    ) -> None:
        self._size = positive_number(size, size_name)
        self._size_name = size_name
        if options is None:
            options = PlanarCurveOptions()
        elif not isinstance(options, PlanarCurveOptions):
            raise InputError(f"options must be PlanarCurveOptions, got {type(options).__name__}")
        o = dataclasses.replace(options, **changes) if changes else options
        super().__init__(frame, o.site_space)
        self._center = real_array(center, "center", (3,))
        self._period = positive_number(period, "period")
        self._u, self._v = plane_axes(o.plane, o.normal)
        self._orientation = unit_quaternions(o.orientation, "orientation", count=1)[0]
        ramp = real_number(o.ramp_time, "ramp_time", low=0.0)
        total = _duration(o, self._period, ramp)
        self._amplitude = real_number(o.orientation_amplitude, "orientation_amplitude")
        axis = o.orientation_axis
        self._axis = self._u.copy() if axis is None else _unit(axis, "orientation_axis")
        self._phase = RampedPhase(rate=2.0 * math.pi / self._period, ramp_time=ramp, duration=total)

    @abstractmethod
    def _curve(self, phi: float) -> tuple[float, float, float, float]:
        """In-plane curve ``(x, y, dx/dφ, dy/dφ)`` at phase ``phi`` [m, m/rad] (size
        ``self._size``)."""

    @property
    def duration(self) -> float:
        """Total time [s], ramps included."""
        return self._phase.duration

    @property
    def center(self) -> np.ndarray:
        """Curve centre, world frame [m] (copy)."""
        return self._center.copy()

    @property
    def axes(self) -> tuple[np.ndarray, np.ndarray]:
        """In-plane unit axes ``(u, v)``, world frame (copies)."""
        return self._u.copy(), self._v.copy()

    @property
    def normal(self) -> np.ndarray:
        """Plane normal ``u × v``, world frame."""
        return np.cross(self._u, self._v)

    @property
    def period(self) -> float:
        """Time of one cycle at cruise rate [s]."""
        return self._period

    @property
    def ramp_time(self) -> float:
        """Length of the start and stop ramps [s]."""
        return self._phase.ramp_time

    def phase(self, time: float) -> float:
        """Phase ``φ`` [rad] at relative ``time`` (clamped to ``[0, duration]``)."""
        return self._phase.evaluate(_check_time(time))[0]

    def sample(self, time: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Pose and velocity at relative ``time``, clamped to ``[0, duration]``.

        Returns:
            ``(position (3,), orientation (4,) wxyz, linear_velocity (3,),
            angular_velocity (3,))``, world frame, SI units.

        Raises:
            ValueError: If ``time`` is not finite.
        """
        phi, phi_dot, _ = self._phase.evaluate(_check_time(time))
        x, y, dx, dy = self._curve(phi)
        position = self._center + x * self._u + y * self._v
        linear_velocity = phi_dot * (dx * self._u + dy * self._v)
        if self._amplitude == 0.0:
            return position, self._orientation.copy(), linear_velocity, np.zeros(3)
        alpha = self._amplitude * math.sin(phi)
        alpha_dot = self._amplitude * math.cos(phi) * phi_dot
        orientation = rotate_by_vector(self._orientation, alpha * self._axis)
        return position, orientation, linear_velocity, alpha_dot * self._axis

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(frame={self._frame!r}, {self._size_name}={self._size}, "
            f"period={self._period}, duration={self.duration:.6g} s)"
        )


def _duration(options: PlanarCurveOptions, period: float, ramp: float) -> float:
    """The run time [s]: ``duration``, else ``cycles`` periods (default 1) after the ramp."""
    if options.cycles is not None and options.duration is not None:
        raise InputError("give either cycles or duration, not both")
    if options.duration is not None:
        return positive_number(options.duration, "duration")
    cycles = positive_number(1.0 if options.cycles is None else options.cycles, "cycles")
    return cycles * period + ramp
