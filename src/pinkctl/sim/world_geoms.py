"""A :class:`~pinkctl.world.World`'s obstacles in a MuJoCo simulation.

:func:`add_obstacles` adds every obstacle of a world to an :class:`mujoco.MjSpec` as geoms of
the same shape, size and pose, named as the obstacle (a mesh of several convex pieces:
``name[k]``, as :class:`~pinkctl.world.CollisionScene` names them):

- box: ``size`` = half the obstacle's edge lengths; sphere: its radius;
- capsule and cylinder: ``size = (radius, length / 2)`` (MuJoCo's half-length of the
  cylindrical part, along the local z axis as the obstacle's);
- half-space: a plane (MuJoCo's plane is solid below its local z, the half-space's normal);
  a plane of the world body named as the obstacle (the simulation's ``"floor"``) is replaced
  by it (its look kept), not doubled;
- mesh and convex: one mesh asset per convex piece (MuJoCo collides its convex hull, which is
  the piece).

Each obstacle is a body of its name at its pose holding its geoms: a static body welded to
the world, or a mocap body for a ``movable`` one. (Geoms of the world body itself cannot
move: MuJoCo's midphase keeps their bounding volumes from compile time.) Every geom collides
with the robot (``contype`` and ``conaffinity`` 1, as the robot's collision geoms).
:class:`WorldGeoms` then follows the world at run time: :meth:`WorldGeoms.sync` (which
:meth:`MujocoSimulation.step <pinkctl.sim.MujocoSimulation.step>` calls) compares the world's
``version`` with the one it last wrote and puts each moved obstacle at its new pose (a mocap
body's pose in the data, a static body's in the model). An obstacle removed from the world
stops colliding and is hidden until one of the same shape comes back under its name; one added
(or reshaped) after the simulation was built is not simulated (a warning says so: build the
simulation again).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from ..errors import InputError, PinkctlWarning
from ..world import Obstacle, World
from .contacts import ContactReport, robot_body_ids, robot_contacts

if TYPE_CHECKING:
    from ..core.robot import PinkRobot

__all__ = ["OBSTACLE_RGBA", "FollowsWorld", "WorldGeoms", "add_obstacles"]

#: Default colour of an obstacle's geoms (a movable one is drawn in :data:`MOVABLE_RGBA`).
OBSTACLE_RGBA = (0.85, 0.45, 0.2, 0.8)
MOVABLE_RGBA = (0.25, 0.45, 0.9, 0.8)
#: Half-sizes [m] a half-space's plane is drawn with (it collides as an infinite plane).
PLANE_SIZE = (3.0, 3.0, 0.05)

_GEOM = mujoco.mjtGeom


def _geom_type_and_size(obstacle: Obstacle) -> tuple[int, list[float]]:
    dims = obstacle.dimensions
    kind = obstacle.kind
    if kind == "box":
        return _GEOM.mjGEOM_BOX, [0.5 * v for v in dims["size"]]
    if kind == "sphere":
        return _GEOM.mjGEOM_SPHERE, [dims["radius"], 0.0, 0.0]
    if kind in ("capsule", "cylinder"):
        kind_id = _GEOM.mjGEOM_CAPSULE if kind == "capsule" else _GEOM.mjGEOM_CYLINDER
        return kind_id, [dims["radius"], 0.5 * dims["length"], 0.0]
    if kind == "halfspace":
        return _GEOM.mjGEOM_PLANE, list(PLANE_SIZE)
    return _GEOM.mjGEOM_MESH, [0.0, 0.0, 0.0]


def _geom_names(obstacle: Obstacle) -> list[str]:
    if obstacle.kind in ("mesh", "convex") and len(obstacle.pieces) > 1:
        return [f"{obstacle.name}[{k}]" for k in range(len(obstacle.pieces))]
    return [obstacle.name]


def add_obstacles(
    spec: mujoco.MjSpec,
    world: World,
    *,
    style: Mapping[str, Mapping[str, Any]] | None = None,
    world_body: bool = False,
) -> None:
    """Add ``world``'s obstacles to ``spec`` (module docstring).

    Args:
        spec: The scene, before it is compiled.
        world: The obstacles (world frame of the scene).
        style: Extra geom attributes by obstacle name (``rgba``, ``friction``, ``solref``,
            ``size`` of a plane, ...), applied to each of its geoms.
        world_body: Hang the static obstacles' geoms on the world body instead of bodies of
            their own: for obstacles that never move (:class:`WorldGeoms` cannot move them).

    Raises:
        InputError: An obstacle whose name a geom, mesh or body of ``spec`` has already
            (other than a plane taken over by a half-space), or a style of no obstacle.
    """
    if not isinstance(world, World):
        raise InputError(f"world must be a pinkctl.World, got {type(world).__name__}")
    style = dict(style or {})
    unknown = sorted(set(style) - set(world))
    if unknown:
        raise InputError(f"style names no obstacle of the world: {unknown}")
    for obstacle in world.obstacles:
        attributes = {
            "rgba": list(MOVABLE_RGBA if obstacle.movable else OBSTACLE_RGBA),
            "contype": 1,
            "conaffinity": 1,
            "group": 0,
        }
        kind, attributes["size"] = _geom_type_and_size(obstacle)
        if kind == _GEOM.mjGEOM_PLANE:
            _take_over_plane(spec, obstacle.name, attributes)
        attributes.update(style.get(obstacle.name, {}))
        _add_obstacle(spec, obstacle, kind, attributes, world_body and not obstacle.movable)


def _take_over_plane(spec: mujoco.MjSpec, name: str, attributes: dict[str, Any]) -> None:
    """A half-space named like a plane of the world body (the scene's floor) takes it over:
    its size, colour and material go to ``attributes`` and the plane is deleted.

    Raises:
        InputError: A geom of that name that is not such a plane.
    """
    existing = spec.geom(name)
    if existing is None:
        return
    if existing.type != _GEOM.mjGEOM_PLANE or existing.parent.name != "world":
        raise InputError(f"the scene has a geom named {name!r} already")
    attributes.update(size=list(existing.size), rgba=list(existing.rgba))
    if existing.material:
        attributes["material"] = existing.material
    spec.delete(existing)


def _add_obstacle(
    spec: mujoco.MjSpec, obstacle: Obstacle, kind: int, attributes: dict[str, Any], fixed: bool
) -> None:
    names = _geom_names(obstacle)
    for name in names:
        if spec.geom(name) is not None or spec.mesh(name) is not None:
            raise InputError(f"the scene has a geom or mesh named {name!r} already")
    pose = {"pos": list(obstacle.position), "quat": list(obstacle.orientation)}
    if fixed:
        body = spec.worldbody
        attributes.update(pose)
    elif spec.body(obstacle.name) is not None:
        raise InputError(f"the scene has a body named {obstacle.name!r} already")
    else:
        body = spec.worldbody.add_body(name=obstacle.name, mocap=obstacle.movable, **pose)
    for name, piece in zip(names, obstacle.pieces or (None,)):
        if piece is not None:
            spec.add_mesh(name=name, uservert=np.asarray(piece).reshape(-1).tolist())
            attributes["meshname"] = name
        body.add_geom(name=name, type=kind, **attributes)


class WorldGeoms:
    """The obstacles of ``world`` in a model compiled from a spec that :func:`add_obstacles`
    filled, kept at the world's poses (module docstring).

    Args:
        world: The world the spec was filled from (the simulation keeps following it).
        model: The compiled model.

    Attributes:
        world: The world followed.
        geom_ids: Each obstacle's geom ids in ``model``, by obstacle name.
    """

    def __init__(self, world: World, model: mujoco.MjModel) -> None:
        self.world = world
        self.model = model
        self._records = {o.name: o for o in world.obstacles}
        self._bodies = {n: model.body(n).id for n in self._records}
        self.geom_ids = {
            name: tuple(model.geom(g).id for g in _geom_names(obstacle))
            for name, obstacle in self._records.items()
        }
        # what each geom was built with, restored when its obstacle comes back
        self._built = {
            n: (
                model.geom_contype[list(g)],
                model.geom_conaffinity[list(g)],
                model.geom_rgba[list(g), 3],
            )
            for n, g in self.geom_ids.items()
        }
        self._version = world.version
        self._warned: set[str] = set()

    def sync(self, data: mujoco.MjData, *, force: bool = False) -> bool:
        """Write the world's obstacle poses into ``model`` and ``data`` when the world changed
        since the last call (always with ``force``, e.g. after a reset). True when it wrote."""
        world = self.world
        if world.version == self._version and not force:
            return False
        lost = [name for name, record in self._records.items() if not self._follow(data, record)]
        lost += [n for n in world if n not in self._records]
        if set(lost) - self._warned:
            self._warned.update(lost)
            warnings.warn(
                f"obstacles added or reshaped after the simulation was built are not "
                f"simulated: {lost}",
                PinkctlWarning,
                stacklevel=3,
            )
        self._version = world.version
        return True

    def _follow(self, data: mujoco.MjData, record: Obstacle) -> bool:
        """Show the obstacle built from ``record`` at the world's pose, or hide its geoms
        (no contacts, not drawn) when the world lost it or reshaped it. False when reshaped
        (the model cannot follow it)."""
        model = self.model
        obstacle = self.world.get(record.name)
        same = obstacle is not None and (obstacle.kind, obstacle.dimensions) == (
            record.kind,
            record.dimensions,
        )
        geoms = list(self.geom_ids[record.name])
        contype, conaffinity, alpha = self._built[record.name] if same else (0, 0, 0.0)
        model.geom_contype[geoms], model.geom_conaffinity[geoms] = contype, conaffinity
        model.geom_rgba[geoms, 3] = alpha
        if same:
            self._place(data, obstacle)  # type: ignore[arg-type]
        return obstacle is None or same

    def _place(self, data: mujoco.MjData, obstacle: Obstacle) -> None:
        """Put an obstacle's body at its world pose: the mocap pose of a movable one, the
        model's body pose of a static one [m], (w, x, y, z)."""
        model = self.model
        body = self._bodies[obstacle.name]
        mocap = int(model.body_mocapid[body])
        if mocap >= 0:
            data.mocap_pos[mocap], data.mocap_quat[mocap] = obstacle.position, obstacle.orientation
        else:
            model.body_pos[body], model.body_quat[body] = obstacle.position, obstacle.orientation


class FollowsWorld:
    """What :class:`~pinkctl.sim.MujocoSimulation` adds for a world: the obstacles it follows
    and the robot's contacts (a mixin over its ``model``, ``data`` and ``robot``)."""

    model: mujoco.MjModel
    data: mujoco.MjData
    robot: PinkRobot | None
    #: The world's obstacles in the model (None: built without a world).
    obstacles: WorldGeoms | None = None
    _robot_bodies: list[int] | None = None

    @property
    def world(self) -> World | None:
        """The world the simulation follows (``from_robot(..., world=)``), or None."""
        return None if self.obstacles is None else self.obstacles.world

    def _follow_world(self, world: World | None) -> None:
        if world is not None:
            self.obstacles = WorldGeoms(world, self.model)

    def _sync_world(self, *, force: bool = False) -> None:
        if self.obstacles is not None:
            self.obstacles.sync(self.data, force=force)

    def contacts(self) -> ContactReport:
        """The robot's contacts now (:mod:`pinkctl.sim.contacts`): with obstacles (the
        floor and the world's), with itself, with other moving bodies; counts and depths.

        Raises:
            InputError: A simulation without a robot.
        """
        if self.robot is None:
            raise InputError("contacts() needs a simulation built from a robot")
        if self._robot_bodies is None:
            self._robot_bodies = robot_body_ids(self.model, self.robot)
        return robot_contacts(self.model, self.data, self._robot_bodies)
