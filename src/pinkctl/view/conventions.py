"""The conventions a target's calls are written in: pinkctl's (default) or three.js's.

The MuJoCo/React seed is a three.js library: its quaternions are ``THREE.Quaternion``
(x, y, z, w), its Euler angles ``THREE.Euler`` in the default order ``"XYZ"``, its durations
milliseconds. An :class:`~pinkctl.view.IkTarget` built with ``conventions="threejs"`` (and a
:class:`~pinkctl.view.web.WebViewer` with the same option) reads and writes those:

==================  ==========================================  =================================
                    ``"pinkctl"`` (default; MuJoCo, Isaac Sim)  ``"threejs"`` (the seed)
==================  ==========================================  =================================
quaternion          (w, x, y, z)                                (x, y, z, w)
Euler angles [rad]  roll, pitch, yaw:                           XYZ: ``R = Rx(x) Ry(y) Rz(z)``
                    ``R = Rz(yaw) Ry(pitch) Rx(roll)``
durations           seconds                                     milliseconds (``500`` = 0.5 s)
==================  ==========================================  =================================

Positions are metres in the world frame in both. Time itself stays simulation time in seconds:
a three.js duration of ``500`` ms animates over 0.5 s of simulated time (the seed's browser
clock is wall-clock time; ``InteractiveScene.start()`` runs the simulation at wall-clock pace).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike, NDArray

from .._validation import real_vector
from ..core.poses import canonical_quaternion, matrix_to_quaternion, quaternion_to_matrix
from ..errors import InputError

__all__ = ["PINKCTL", "THREEJS", "Conventions", "GizmoStats", "as_conventions"]

Vector = NDArray[np.float64]
#: Three.js's test for gimbal lock in ``Euler.setFromRotationMatrix`` (order XYZ).
_GIMBAL = 0.9999999


def _xyz_to_matrix(angles: Vector) -> Vector:
    """three.js ``Euler(x, y, z, "XYZ")``: ``R = Rx(x) Ry(y) Rz(z)``."""
    x, y, z = angles.tolist()
    rx = np.array([[1, 0, 0], [0, math.cos(x), -math.sin(x)], [0, math.sin(x), math.cos(x)]])
    ry = np.array([[math.cos(y), 0, math.sin(y)], [0, 1, 0], [-math.sin(y), 0, math.cos(y)]])
    rz = np.array([[math.cos(z), -math.sin(z), 0], [math.sin(z), math.cos(z), 0], [0, 0, 1]])
    return rx @ ry @ rz


def _matrix_to_xyz(m: Vector) -> Vector:
    """The angles three.js's ``Euler.setFromRotationMatrix(m, "XYZ")`` gives (y in
    [-pi/2, pi/2]; at gimbal lock z = 0)."""
    y = math.asin(min(1.0, max(-1.0, m[0, 2])))
    if abs(m[0, 2]) < _GIMBAL:
        return np.array([math.atan2(-m[1, 2], m[2, 2]), y, math.atan2(-m[0, 1], m[0, 0])])
    return np.array([math.atan2(m[2, 1], m[1, 1]), y, 0.0])


class GizmoStats(NamedTuple):
    """The target's pose in a target's conventions (the seed's ``getGizmoStats()``:
    ``{pos, rot}``, plus the quaternion).

    Attributes:
        pos: World position [m], (3,).
        rot: Euler angles [rad], (3,): roll/pitch/yaw or three.js XYZ.
        quaternion: Orientation, (4,): (w, x, y, z) or (x, y, z, w); ``w >= 0``.
    """

    pos: Vector
    rot: Vector
    quaternion: Vector


@dataclass(frozen=True)
class Conventions:
    """How quaternions, Euler angles and durations are written (see the module's table).

    Attributes:
        name: ``"pinkctl"`` or ``"threejs"``.
        quaternion_order: ``"wxyz"`` or ``"xyzw"``.
        euler_order: ``"rpy"`` (``R = Rz Ry Rx``) or ``"XYZ"`` (``R = Rx Ry Rz``).
        seconds_per_unit: Seconds in one unit of duration (1 or 0.001).
    """

    name: Literal["pinkctl", "threejs"]
    quaternion_order: Literal["wxyz", "xyzw"]
    euler_order: Literal["rpy", "XYZ"]
    seconds_per_unit: float

    @property
    def duration_unit(self) -> str:
        """``"s"`` or ``"ms"``."""
        return "s" if self.seconds_per_unit == 1.0 else "ms"

    def quaternion_in(self, quaternion: ArrayLike, name: str = "quaternion") -> Vector:
        """A quaternion written in these conventions, as (w, x, y, z) (not normalised: the
        pose checks downstream normalise it and reject a zero one)."""
        values = real_vector(quaternion, name, 4, unit=f"({', '.join(self.quaternion_order)})")
        return values[[3, 0, 1, 2]] if self.quaternion_order == "xyzw" else values

    def quaternion_out(self, quaternion_wxyz: ArrayLike) -> Vector:
        """A (w, x, y, z) quaternion written in these conventions, unit with ``w >= 0``."""
        wxyz = canonical_quaternion(quaternion_wxyz)
        return wxyz[[1, 2, 3, 0]] if self.quaternion_order == "xyzw" else wxyz

    def euler_in(self, angles: ArrayLike, name: str = "euler") -> Vector:
        """Euler angles [rad] in these conventions, as a unit (w, x, y, z) quaternion."""
        values = real_vector(angles, name, 3, unit="[rad]")
        if self.euler_order == "XYZ":
            return matrix_to_quaternion(_xyz_to_matrix(values))
        return matrix_to_quaternion(pin.rpy.rpyToMatrix(*values.tolist()))

    def euler_out(self, quaternion_wxyz: ArrayLike) -> Vector:
        """The Euler angles [rad] of a (w, x, y, z) quaternion in these conventions."""
        rotation = quaternion_to_matrix(quaternion_wxyz)
        if self.euler_order == "XYZ":
            return _matrix_to_xyz(rotation)
        return np.asarray(pin.rpy.matrixToRpy(rotation), dtype=float)

    def seconds(self, duration: float) -> float:
        """A duration in these conventions' unit, in seconds."""
        return duration * self.seconds_per_unit

    def gizmo_stats(self, position: ArrayLike, quaternion_wxyz: ArrayLike) -> GizmoStats:
        """A pose as :class:`GizmoStats` in these conventions."""
        return GizmoStats(
            pos=np.array(position, dtype=float),
            rot=self.euler_out(quaternion_wxyz),
            quaternion=self.quaternion_out(quaternion_wxyz),
        )


PINKCTL = Conventions("pinkctl", "wxyz", "rpy", 1.0)
THREEJS = Conventions("threejs", "xyzw", "XYZ", 1e-3)
_BY_NAME = {c.name: c for c in (PINKCTL, THREEJS)}


def as_conventions(value: Any, name: str = "conventions") -> Conventions:
    """``"pinkctl"``, ``"threejs"`` or a :class:`Conventions`, as a :class:`Conventions`."""
    if isinstance(value, Conventions):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    raise InputError(f"{name} must be one of {sorted(_BY_NAME)}, got {value!r}")
