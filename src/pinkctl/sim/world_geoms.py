"""A :class:`~pinkctl.world.World`'s obstacles in a MuJoCo simulation.

:func:`add_obstacles` adds every obstacle of a world to an :class:`mujoco.MjSpec` as geoms of
the same shape, size and pose, named as the obstacle (a mesh of several convex pieces:
``name[k]``, as :class:`~pinkctl.world.CollisionScene` names them):

- box: ``size`` = half the obstacle's edge lengths; sphere: its radius;
- capsule and cylinder: ``size = (radius, length / 2)`` (MuJoCo's half-length of the
  cylindrical part, along the local z axis as the obstacle's);
- half-space: a plane (MuJoCo's plane is solid below its local z, the half-space's normal);
  a plane geom named as the obstacle that the scene already has (the simulation's ``"floor"``)
  is put at the half-space's pose instead of a second plane;
- mesh and convex: one mesh asset per convex piece (MuJoCo collides its convex hull, which is
  the piece).

A static obstacle's geoms hang on the world body; a ``movable`` one is a mocap body of the
obstacle's name holding its geoms. Every geom collides with the robot (``contype`` and
``conaffinity`` 1, as the robot's collision geoms). :class:`WorldGeoms` then follows the world
at run time: :meth:`WorldGeoms.sync` (which :meth:`MujocoSimulation.step
<pinkctl.sim.MujocoSimulation.step>` calls) compares the world's ``version`` with the one it
last wrote and puts each moved obstacle at its new pose (a mocap body's pose; a static
obstacle's geom poses in the model). An obstacle removed from the world stops colliding and
is hidden; one added after the simulation was built is not simulated (a warning says so:
build the simulation again).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np
import pinocchio as pin

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
) -> None:
    """Add ``world``'s obstacles to ``spec`` (module docstring).

    Args:
        spec: The scene, before it is compiled.
        world: The obstacles (world frame of the scene).
        style: Extra geom attributes by obstacle name (``rgba``, ``friction``, ``solref``,
            ``size`` of a plane, ...), applied to each of its geoms.

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
        extra = dict(style.get(obstacle.name, {}))
        kind, size = _geom_type_and_size(obstacle)
        names = _geom_names(obstacle)
        existing = spec.geom(obstacle.name)
        if existing is not None and kind == _GEOM.mjGEOM_PLANE and not obstacle.movable:
            if existing.type != _GEOM.mjGEOM_PLANE or existing.parent.name != "world":
                raise InputError(f"the scene has a geom named {obstacle.name!r} already")
            existing.pos, existing.quat = list(obstacle.position), list(obstacle.orientation)
            for key, value in extra.items():
                setattr(existing, key, value)
            continue
        for name in names:
            if spec.geom(name) is not None or spec.mesh(name) is not None:
                raise InputError(f"the scene has a geom or mesh named {name!r} already")
        pose = {"pos": list(obstacle.position), "quat": list(obstacle.orientation)}
        if obstacle.movable:
            if spec.body(obstacle.name) is not None:
                raise InputError(f"the scene has a body named {obstacle.name!r} already")
            parent = spec.worldbody.add_body(name=obstacle.name, mocap=True, **pose)
            pose = {}
        else:
            parent = spec.worldbody
        rgba = MOVABLE_RGBA if obstacle.movable else OBSTACLE_RGBA
        attributes = {"rgba": list(rgba), "contype": 1, "conaffinity": 1, "group": 0}
        attributes.update(pose, **extra)
        pieces = obstacle.pieces or (None,)
        for name, piece in zip(names, pieces):
            if piece is not None:
                spec.add_mesh(name=name, uservert=np.asarray(piece).reshape(-1).tolist())
                attributes["meshname"] = name
            attributes.setdefault("size", size)
            parent.add_geom(name=name, type=kind, **attributes)


@dataclass(frozen=True)
class _Placed:
    """The geoms of one obstacle in a compiled model."""

    geoms: tuple[int, ...]
    local: tuple[pin.SE3, ...]  # each geom in the obstacle's frame
    mocap: int  # mocap id of its body, -1 for a static obstacle


def _geom_pose(model: mujoco.MjModel, geom: int) -> pin.SE3:
    w, x, y, z = model.geom_quat[geom]
    rotation = pin.Quaternion(w, x, y, z).normalized().toRotationMatrix()
    return pin.SE3(rotation, model.geom_pos[geom].copy())


def _wxyz(placement: pin.SE3) -> np.ndarray:
    x, y, z, w = pin.Quaternion(placement.rotation).coeffs()
    return np.array([w, x, y, z])


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
        self._placed: dict[str, _Placed] = {}
        for obstacle in world.obstacles:
            geoms = []
            for name in _geom_names(obstacle):
                geoms.append(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name))
            body = int(model.geom_bodyid[geoms[0]])
            mocap = int(model.body_mocapid[body])
            frame = pin.SE3.Identity() if mocap >= 0 else obstacle.placement
            local = tuple(frame.actInv(_geom_pose(model, g)) for g in geoms)
            self._placed[obstacle.name] = _Placed(tuple(geoms), local, mocap)
        self.geom_ids = {name: placed.geoms for name, placed in self._placed.items()}
        self._version = world.version
        self._shown = {name: world[name] for name in self._placed}
        self._warned: set[str] = set()

    def sync(self, data: mujoco.MjData, *, force: bool = False) -> bool:
        """Write the world's obstacle poses into ``model`` and ``data`` when the world changed
        since the last call (always with ``force``, e.g. after a reset). True when it wrote."""
        world = self.world
        if world.version == self._version and not force:
            return False
        model = self.model
        for name, placed in self._placed.items():
            obstacle = world.get(name)
            if obstacle is None:
                for geom in placed.geoms:  # removed: no contacts, not drawn
                    model.geom_contype[geom] = model.geom_conaffinity[geom] = 0
                    model.geom_rgba[geom, 3] = 0.0
                continue
            if placed.mocap >= 0:
                data.mocap_pos[placed.mocap] = obstacle.position
                data.mocap_quat[placed.mocap] = obstacle.orientation
            elif force or obstacle is not self._shown.get(name):
                placement = obstacle.placement
                for geom, local in zip(placed.geoms, placed.local):
                    pose = placement * local
                    model.geom_pos[geom] = pose.translation
                    model.geom_quat[geom] = _wxyz(pose)
            self._shown[name] = obstacle
        added = [n for n in world if n not in self._placed and n not in self._warned]
        if added:
            self._warned.update(added)
            warnings.warn(
                f"obstacles added after the simulation was built are not simulated: {added}",
                PinkctlWarning,
                stacklevel=3,
            )
        self._version = world.version
        return True


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
