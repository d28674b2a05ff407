"""The world around a robot: named obstacles shared by everything that avoids them.

One :class:`World` is shared by the simulation, the controller, the IK and the maps, so that
all of them see the same obstacles. Its obstacles are immutable
:class:`~pinkctl.world.Obstacle` records; every change (add, move, remove) makes a new record
and bumps :attr:`World.version`, which consumers compare to sync cheaply. Every argument is
checked before anything changes: a rejected call leaves the world as it was.

Frames and units: poses are in the world frame (the frame of the robot's universe joint, the
simulation's world), lengths in m, orientations unit (w, x, y, z) quaternions (any non-zero
scale is accepted and normalised; the record keeps ``w >= 0``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import real_number
from ..errors import InputError
from ._checks import checked_name, positive, quaternion, unit, vector
from .floor import floor_height
from .mesh import hull_vertices, mesh_pieces
from .mujoco_scene import read_mujoco
from .obstacle import Obstacle, halfspace
from .toml_file import read_world, write_world

if TYPE_CHECKING:
    import mujoco

    from ..core.robot import PinkRobot

__all__ = ["FLOOR", "World"]

#: Name of the floor obstacle of :meth:`World.for_robot`.
FLOOR = "floor"

Vector3 = tuple[float, float, float]


def _position(value: Any) -> Vector3:
    x, y, z = vector(value, "position")
    return (x + 0.0, y + 0.0, z + 0.0)


class World(Mapping[str, Obstacle]):
    """Named obstacles in the world frame (module docstring).

    A mapping from names to :class:`~pinkctl.world.Obstacle` records, in the order they were
    added: ``world["table"]``, ``"table" in world``, ``len(world)``, iteration over names,
    ``world.obstacles`` for the records. Two worlds compare equal when they hold equal
    obstacles in any order.
    """

    def __init__(self) -> None:
        self._obstacles: dict[str, Obstacle] = {}
        self._version = 0

    # ------------------------------------------------------------------ construction
    @classmethod
    def for_robot(cls, robot: PinkRobot) -> World:
        """A world with the floor the simulation puts under ``robot``: the half-space
        ``z <= h`` named ``"floor"``, ``h`` = :func:`~pinkctl.world.floor_height` (the
        robot's ``floor``, or just below its lowest point at home, never above 0); no floor
        when the robot's ``floor`` is False. Remove or move it like any obstacle."""
        world = cls()
        height = floor_height(robot)
        if height is not None:
            world.add_halfspace(FLOOR, normal=(0.0, 0.0, 1.0), offset=height)
        return world

    @classmethod
    def load(cls, path: str | Path) -> World:
        """Read a world from a TOML file (see :mod:`pinkctl.world.toml_file`).

        Raises:
            DescriptionNotFoundError: No such file (or a mesh it names).
            ConfigurationError: A malformed file, naming the file, the obstacle and the key.
        """
        return read_world(cls(), Path(path))

    def save(self, path: str | Path) -> None:
        """Write the world to a TOML file that :meth:`load` reads back equal (mesh paths
        relative to the file's folder when they lie under it)."""
        write_world(self, Path(path))

    @classmethod
    def from_mujoco(cls, source: str | Path | mujoco.MjModel) -> World:
        """The obstacles of a MuJoCo scene (see :mod:`pinkctl.world.mujoco_scene`)."""
        return read_mujoco(cls(), source)

    def copy(self) -> World:
        """A new world with the same obstacles (records are shared: they are immutable)."""
        other = World()
        other._obstacles = dict(self._obstacles)
        return other

    # ------------------------------------------------------------------ read access
    @property
    def version(self) -> int:
        """A counter bumped by every change of the world: equal versions of one world mean
        equal obstacles."""
        return self._version

    @property
    def obstacles(self) -> tuple[Obstacle, ...]:
        """The obstacles in the order they were added."""
        return tuple(self._obstacles.values())

    def __getitem__(self, name: str) -> Obstacle:
        try:
            return self._obstacles[name]
        except (KeyError, TypeError):
            known = list(self._obstacles)
            raise KeyError(f"no obstacle named {name!r}; obstacles: {known}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._obstacles))

    def __len__(self) -> int:
        return len(self._obstacles)

    def __repr__(self) -> str:
        return f"World({len(self)} obstacles: {', '.join(self._obstacles)})"

    def report(self) -> str:
        """One line per obstacle (kind, dimensions, pose)."""
        lines = [f"world: {len(self)} obstacles"]
        lines += ["  " + o.describe() for o in self._obstacles.values()]
        return "\n".join(lines)

    # ------------------------------------------------------------------ changes
    def _new_name(self, name: Any) -> str:
        name = checked_name(name)
        if name in self._obstacles:
            raise InputError(f"name: an obstacle named {name!r} exists already")
        return name

    def _known(self, name: Any) -> Obstacle:
        if not isinstance(name, str) or name not in self._obstacles:
            raise InputError(f"name: no obstacle named {name!r}; obstacles: {list(self)}")
        return self._obstacles[name]

    def _movable(self, value: Any) -> bool:
        if not isinstance(value, (bool, np.bool_)):
            raise InputError(f"movable must be True or False, got {value!r}")
        return bool(value)

    def add(self, obstacle: Obstacle) -> Obstacle:
        """Add a record (e.g. one of another world) under its own name."""
        if not isinstance(obstacle, Obstacle):
            raise InputError(f"obstacle must be an Obstacle, got {type(obstacle).__name__}")
        self._new_name(obstacle.name)
        self._obstacles[obstacle.name] = obstacle
        self._version += 1
        return obstacle

    def _add(
        self,
        name: str,
        kind: str,
        dims: dict[str, Any],
        pose: tuple[Any, Any, Any],
        pieces: tuple[np.ndarray, ...] = (),
    ) -> Obstacle:
        """Check ``pose`` = (position, orientation, movable), then add the record."""
        position, orientation, movable = pose
        where = (_position(position), quaternion(orientation), self._movable(movable))
        return self.add(Obstacle(name, kind, dims, *where, pieces))

    def add_box(
        self,
        name: str,
        size: Any,
        position: Any = (0.0, 0.0, 0.0),
        orientation: Any = None,
        *,
        movable: bool = False,
    ) -> Obstacle:
        """A box of full edge lengths ``size`` = (x, y, z) [m] centred at ``position``."""
        name = self._new_name(name)
        x, y, z = vector(size, "size")
        for k, value in enumerate((x, y, z)):
            positive(value, f"size[{k}]")
        return self._add(name, "box", {"size": (x, y, z)}, (position, orientation, movable))

    def add_sphere(
        self, name: str, radius: Any, position: Any = (0.0, 0.0, 0.0), *, movable: bool = False
    ) -> Obstacle:
        """A sphere of ``radius`` [m] centred at ``position``."""
        name = self._new_name(name)
        dims = {"radius": positive(radius, "radius")}
        return self._add(name, "sphere", dims, (position, None, movable))

    def add_capsule(
        self,
        name: str,
        radius: Any,
        length: Any,
        position: Any = (0.0, 0.0, 0.0),
        orientation: Any = None,
        *,
        movable: bool = False,
    ) -> Obstacle:
        """A capsule along its local z axis, centred at ``position``: ``length`` [m] is the
        length of its cylindrical part (0 for a sphere), ``radius`` [m] that of the part and
        of its two half-sphere caps (total length ``length + 2 radius``)."""
        name = self._new_name(name)
        dims = {
            "radius": positive(radius, "radius"),
            "length": positive(length, "length", allow_zero=True),
        }
        return self._add(name, "capsule", dims, (position, orientation, movable))

    def add_cylinder(
        self,
        name: str,
        radius: Any,
        length: Any,
        position: Any = (0.0, 0.0, 0.0),
        orientation: Any = None,
        *,
        movable: bool = False,
    ) -> Obstacle:
        """A solid cylinder along its local z axis, centred at ``position``: ``radius`` and
        full ``length`` [m]."""
        name = self._new_name(name)
        dims = {"radius": positive(radius, "radius"), "length": positive(length, "length")}
        return self._add(name, "cylinder", dims, (position, orientation, movable))

    def add_halfspace(
        self, name: str, normal: Any, offset: Any = 0.0, *, movable: bool = False
    ) -> Obstacle:
        """The solid half-space ``normal . x <= offset`` [m] (world frame): a floor
        (``normal=(0, 0, 1)``, ``offset`` its height), a table top, a wall. A normal that is
        not unit is normalised, ``offset`` divided by the same norm (the same half-space)."""
        name = self._new_name(name)
        raw = vector(normal, "normal")
        norm = float(np.linalg.norm(raw))
        direction = unit(raw, "normal")
        value = real_number(offset, "offset")
        if direction != raw:
            value = value / norm
        record = halfspace(name, direction, value + 0.0, self._movable(movable))
        return self.add(record)

    def add_mesh(
        self,
        name: str,
        path: str | Path,
        position: Any = (0.0, 0.0, 0.0),
        orientation: Any = None,
        scale: Any = None,
        *,
        movable: bool = False,
    ) -> Obstacle:
        """Convex pieces of a mesh file (:mod:`pinkctl.world.mesh`): each connected
        component of each sub-mesh becomes its convex hull. ``scale``: one factor or one
        per axis (positive), applied to the file's vertices (e.g. 0.001 for a file in mm);
        the pose places the file's origin."""
        name = self._new_name(name)
        if not isinstance(path, (str, Path)) or not str(path):
            raise InputError(f"path must be a file path, got {path!r}")
        factors = _scale(scale)
        file = Path(path).expanduser().resolve()
        pose = (_position(position), quaternion(orientation), self._movable(movable))
        pieces = mesh_pieces(file, factors)
        dims = {"path": str(file), "scale": factors}
        return self.add(Obstacle(name, "mesh", dims, *pose, pieces))

    def add_convex(
        self,
        name: str,
        vertices: Any,
        position: Any = (0.0, 0.0, 0.0),
        orientation: Any = None,
        *,
        movable: bool = False,
    ) -> Obstacle:
        """The convex hull of ``vertices`` (N, 3) [m], given in the obstacle's frame."""
        name = self._new_name(name)
        try:
            points = np.array(vertices, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("vertices must be an (N, 3) array of real numbers") from None
        if points.ndim != 2 or points.shape[1] != 3:
            raise InputError(f"vertices must have shape (N, 3), got {points.shape}")
        hull = hull_vertices(points, "vertices")
        dims = {"vertices": tuple(tuple(float(v) for v in p) for p in hull)}
        return self._add(name, "convex", dims, (position, orientation, movable), (hull,))

    def move(self, name: str, position: Any = None, orientation: Any = None) -> Obstacle:
        """Put obstacle ``name`` at a new pose (None keeps that part of the pose). A move to
        the pose it has changes nothing (not :attr:`version` either: a caller that moves an
        obstacle every tick to where a tracker sees it costs its consumers nothing while it
        stands still).

        Returns:
            The new record (the same one when the pose did not change).
        """
        old = self._known(name)
        if position is None and orientation is None:
            raise InputError("move needs a position, an orientation or both")
        where = old.position if position is None else _position(position)
        turn = old.orientation if orientation is None else quaternion(orientation)
        record = old.moved(where, turn)
        if record.position == old.position and record.orientation == old.orientation:
            return old
        self._obstacles[old.name] = record
        self._version += 1
        return record

    def replace(self, obstacle: Obstacle) -> Obstacle:
        """Put a record in place of the obstacle of its name (e.g. the record of another
        world's obstacle after a move); the same record changes nothing."""
        if not isinstance(obstacle, Obstacle):
            raise InputError(f"obstacle must be an Obstacle, got {type(obstacle).__name__}")
        if self._known(obstacle.name) is not obstacle:
            self._obstacles[obstacle.name] = obstacle
            self._version += 1
        return obstacle

    def remove(self, name: str) -> Obstacle:
        """Remove obstacle ``name``; returns its record."""
        record = self._known(name)
        del self._obstacles[record.name]
        self._version += 1
        return record


def _scale(value: Any) -> Vector3:
    if value is None:
        return (1.0, 1.0, 1.0)
    if np.ndim(value) == 0:
        factor = positive(value, "scale")
        return (factor, factor, factor)
    x, y, z = vector(value, "scale")
    for k, v in enumerate((x, y, z)):
        positive(v, f"scale[{k}]")
    return (x, y, z)
