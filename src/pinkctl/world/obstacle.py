"""One obstacle of a :class:`~pinkctl.world.World`: an immutable record and its coal shapes.

An obstacle is a shape in its own frame placed in the world frame by a pose (``position``
[m], ``orientation`` a unit (w, x, y, z) quaternion with ``w >= 0``). The shapes, in their
own frame:

- ``box``: ``size`` = full edge lengths (x, y, z) [m], centred on the origin;
- ``sphere``: ``radius`` [m];
- ``capsule``: ``radius`` and ``length`` [m], the axis along local z, ``length`` the length of
  the cylindrical part (the capsule's total length is ``length + 2 radius``), centred;
- ``cylinder``: ``radius`` and ``length`` (full length) [m], axis along local z, centred;
- ``halfspace``: the solid side ``normal . x <= offset`` (world frame, ``normal`` unit); its
  pose is canonical: the plane's point nearest the origin (``offset * normal``) and the
  shortest rotation taking z to ``normal`` (moving a half-space moves its plane);
- ``mesh``: convex pieces of a mesh file (``path``, ``scale``): each connected component of
  each sub-mesh becomes its convex hull;
- ``convex``: the convex hull of ``vertices`` [m].

Records compare equal when name, kind, dimensions, pose and ``movable`` are equal.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import coal
import numpy as np
import pinocchio as pin

from .._validation import real_number
from ..errors import InputError
from ._checks import checked_name, positive, quaternion, unit, vector

__all__ = ["KINDS", "Obstacle", "convex_shape"]

#: The obstacle kinds, in the order the documentation lists them.
KINDS = ("box", "sphere", "capsule", "cylinder", "halfspace", "mesh", "convex")
#: The dimensions of each kind.
DIMENSIONS = {
    "box": ("size",),
    "sphere": ("radius",),
    "capsule": ("radius", "length"),
    "cylinder": ("radius", "length"),
    "halfspace": ("normal", "offset"),
    "mesh": ("path", "scale"),
    "convex": ("vertices",),
}


def convex_shape(vertices: np.ndarray) -> coal.Convex:
    """The coal convex polytope of the hull of ``vertices`` (N, 3) (qhull, triangles kept)."""
    points = coal.StdVec_Vec3s()
    for point in np.asarray(vertices, dtype=np.float64):
        points.append(point)
    return coal.Convex.convexHull(points, True, None)


def _shapes(kind: str, dims: Mapping[str, Any], pieces: tuple[np.ndarray, ...]) -> tuple:
    if kind == "box":
        return (coal.Box(*dims["size"]),)
    if kind == "sphere":
        return (coal.Sphere(dims["radius"]),)
    if kind == "capsule":
        return (coal.Capsule(dims["radius"], dims["length"]),)
    if kind == "cylinder":
        return (coal.Cylinder(dims["radius"], dims["length"]),)
    if kind == "halfspace":
        return (coal.Halfspace(np.array([0.0, 0.0, 1.0]), 0.0),)
    return tuple(convex_shape(p) for p in pieces)


def _check_dimensions(kind: str, dims: Mapping[str, Any], placement: pin.SE3) -> None:
    if kind == "box":
        for k, value in enumerate(vector(dims["size"], "size")):
            positive(value, f"size[{k}]")
    if kind in ("sphere", "capsule", "cylinder"):
        positive(dims["radius"], "radius")
    if kind in ("capsule", "cylinder"):
        positive(dims["length"], "length", allow_zero=kind == "capsule")
    if kind == "halfspace":
        normal = np.array(unit(vector(dims["normal"], "normal"), "normal"))
        offset = real_number(dims["offset"], "offset")
        along = float(normal @ placement.translation)
        if not (np.allclose(placement.rotation[:, 2], normal) and abs(along - offset) < 1e-9):
            raise InputError("a half-space's pose must match its normal and offset")


@dataclass(frozen=True)
class Obstacle:
    """An obstacle: a named shape at a pose in the world frame (module docstring).

    Attributes:
        name: Unique name in its world.
        kind: One of :data:`KINDS`.
        dimensions: The shape's dimensions by name (read-only): ``size`` (box); ``radius``
            (sphere, capsule, cylinder); ``length`` (capsule, cylinder); ``normal``,
            ``offset`` (half-space); ``path``, ``scale`` (mesh); ``vertices`` (convex).
        position: Origin of the shape's frame in the world frame [m].
        orientation: Rotation of the shape's frame, unit (w, x, y, z) with ``w >= 0``.
        movable: Whether the obstacle is meant to move at run time (a simulation makes it
            a mocap body). Every obstacle can be moved with
            :meth:`~pinkctl.world.World.move`; this flag says how consumers should build it.
        pieces: Convex pieces of a ``mesh`` or ``convex`` obstacle: the vertices (N, 3) [m]
            of each piece's hull in the obstacle's frame (read-only); empty otherwise.
    """

    name: str
    kind: str
    dimensions: Mapping[str, Any]
    position: tuple[float, float, float]
    orientation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    movable: bool = False
    pieces: tuple[np.ndarray, ...] = field(default=(), compare=False, repr=False)
    _shapes: tuple = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        # a record built by hand is held to the rules of the World's add_ methods
        checked_name(self.name)
        if self.kind not in DIMENSIONS:
            raise InputError(f"kind must be one of {list(KINDS)}, got {self.kind!r}")
        if not isinstance(self.dimensions, Mapping) or set(self.dimensions) != set(
            DIMENSIONS[self.kind]
        ):
            raise InputError(f"dimensions of a {self.kind} must be {list(DIMENSIONS[self.kind])}")
        x, y, z = vector(self.position, "position")
        object.__setattr__(self, "position", (x, y, z))
        object.__setattr__(self, "orientation", quaternion(self.orientation))
        if not isinstance(self.movable, bool):
            raise InputError(f"movable must be True or False, got {self.movable!r}")
        if (self.kind in ("mesh", "convex")) != bool(self.pieces):
            raise InputError(f"a {self.kind} {'needs' if not self.pieces else 'has no'} pieces")
        _check_dimensions(self.kind, self.dimensions, self.placement)
        object.__setattr__(self, "dimensions", MappingProxyType(dict(self.dimensions)))
        for piece in self.pieces:
            piece.setflags(write=False)
        if not self._shapes:
            object.__setattr__(self, "_shapes", _shapes(self.kind, self.dimensions, self.pieces))

    def __reduce__(self) -> tuple:
        # pickled by value (worker processes get the world this way); the coal shapes are
        # built again from the dimensions and pieces
        pieces = tuple(np.array(p) for p in self.pieces)
        values = (self.position, self.orientation, self.movable, pieces)
        return (Obstacle, (self.name, self.kind, dict(self.dimensions), *values))

    def __hash__(self) -> int:
        return hash((self.name, self.kind, self.position, self.orientation, self.movable))

    @property
    def placement(self) -> pin.SE3:
        """The pose as a ``pin.SE3`` (world from obstacle frame; a copy of the record's)."""
        return self._pose.copy()

    @cached_property
    def _pose(self) -> pin.SE3:
        # worked out once per record: consumers read it every tick an obstacle moves
        w, x, y, z = self.orientation
        rotation = pin.Quaternion(w, x, y, z).toRotationMatrix()
        return pin.SE3(rotation, np.array(self.position))

    @property
    def shapes(self) -> tuple:
        """The coal shapes of the obstacle, one per piece, in the obstacle's frame (shared by
        every record of the same shape: moving an obstacle keeps them)."""
        return self._shapes

    def moved(
        self,
        position: tuple[float, float, float],
        orientation: tuple[float, float, float, float],
    ) -> Obstacle:
        """The same obstacle at a new pose (a half-space's pose made canonical again).

        ``position`` and ``orientation`` are a checked pose (:meth:`World.move` checks them:
        finite floats, a unit quaternion with ``w >= 0``); the dimensions stay the record's,
        so they are not checked again (a moving obstacle is moved every tick).
        """
        if self.kind == "halfspace":
            w, x, y, z = orientation
            normal = pin.Quaternion(w, x, y, z).toRotationMatrix()[:, 2]
            normal_t = unit(tuple(float(v) for v in normal), "orientation")
            offset = float(np.dot(normal_t, position))
            return halfspace(self.name, normal_t, offset, self.movable, self._shapes)
        record = object.__new__(Obstacle)
        fields = dict(self.__dict__, position=position, orientation=orientation)
        fields.pop("_pose", None)  # the cached placement is the old pose's
        record.__dict__.update(fields)
        return record

    def describe(self) -> str:
        """One line: name, kind, dimensions and pose (mm and degrees, for reports)."""
        dims = []
        for key, value in self.dimensions.items():
            if key == "vertices":
                dims.append(f"{len(value)} vertices")
            elif isinstance(value, tuple):
                dims.append(f"{key}=({', '.join(f'{v:.4g}' for v in value)})")
            else:
                dims.append(f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}")
        where = ", ".join(f"{v:.4g}" for v in self.position)
        angle = 2.0 * math.degrees(math.acos(min(1.0, self.orientation[0])))
        moving = " movable" if self.movable else ""
        return f"{self.name}: {self.kind} {' '.join(dims)} at ({where}) m, {angle:.1f} deg{moving}"


def halfspace(
    name: str, normal: tuple[float, ...], offset: float, movable: bool, shapes: tuple = ()
) -> Obstacle:
    """The half-space ``normal . x <= offset`` (``normal`` unit) with its canonical pose."""
    rotation = pin.Quaternion.FromTwoVectors(np.array([0.0, 0.0, 1.0]), np.array(normal))
    x, y, z, w = rotation.coeffs().tolist()
    position = tuple(offset * n + 0.0 for n in normal)
    if any(not math.isfinite(v) for v in position):
        raise InputError(f"offset must be finite, got {offset!r}")
    return Obstacle(
        name,
        "halfspace",
        {"normal": tuple(normal), "offset": offset},
        (position[0], position[1], position[2]),
        quaternion((w, x, y, z)),
        movable,
        (),
        shapes,
    )
