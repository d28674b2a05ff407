"""Obstacles read from a MuJoCo scene: :meth:`World.from_mujoco <pinkctl.world.World.from_mujoco>`.

The obstacles of a scene are the colliding geoms (``contype`` or ``conaffinity`` non-zero)
of the bodies that no joint moves and that carry no robot:

- geoms of the world body and of bodies welded to it, unless a joint hangs anywhere below
  their top body (then they are a robot, its fixed base included);
- geoms of mocap bodies, marked ``movable``;
- bodies moved by joints (robots, free objects) are left out: physics moves them, not the
  world.

Geom types: box, sphere, capsule, cylinder, plane (a half-space: MuJoCo's plane is solid
below its local z), mesh (its convex hull, as MuJoCo collides it: a ``convex`` obstacle).
Ellipsoids, height fields and SDF geoms have no obstacle kind: they are skipped with a
warning naming them. Each obstacle takes its geom's name, or ``<body>/geom<k>`` for an
unnamed geom (``world/geom<k>`` on the world body); poses are the geoms' world poses in the
model's initial configuration.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigurationError, DescriptionNotFoundError, InputError, PinkctlWarning
from .mesh import hull_vertices

if TYPE_CHECKING:
    import mujoco

    from .world import World

__all__ = ["read_mujoco"]


def _model(source: str | Path | mujoco.MjModel) -> mujoco.MjModel:
    import mujoco  # when used: IK workers load no MuJoCo

    if isinstance(source, mujoco.MjModel):
        return source
    if not isinstance(source, (str, Path)):
        raise InputError(
            f"source must be a MuJoCo XML path or a mujoco.MjModel, got {type(source).__name__}"
        )
    path = Path(source)
    if not path.is_file():
        raise DescriptionNotFoundError(f"MuJoCo scene not found: {path}")
    try:
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as exc:
        raise ConfigurationError(f"{path}: MuJoCo cannot load it: {exc}") from exc


def _robot_bodies(model: mujoco.MjModel) -> set[int]:
    """Bodies moved by a joint, and every body of a tree that has a joint below its top."""
    jointed_tops = {int(model.body_rootid[model.jnt_bodyid[j]]) for j in range(model.njnt)}
    return {
        b
        for b in range(1, model.nbody)
        if int(model.body_rootid[b]) in jointed_tops or model.body_dofnum[b] > 0
    }


def _name(model: mujoco.MjModel, geom: int, counts: dict[int, int]) -> str:
    name = model.geom(geom).name
    if name:
        return name
    body = int(model.geom_bodyid[geom])
    k = counts.get(body, 0)
    counts[body] = k + 1
    return f"{model.body(body).name or 'world'}/geom{k}"


def _add_geom(
    world: World, model: mujoco.MjModel, data: mujoco.MjData, geom: int, name: str
) -> bool:
    """Add geom ``geom`` to ``world`` as the obstacle ``name`` at its world pose in ``data``
    (movable on a mocap body); False for a geom type with no obstacle kind."""
    import mujoco  # when used: IK workers load no MuJoCo

    types = mujoco.mjtGeom
    movable = bool(model.body_mocapid[int(model.geom_bodyid[geom])] >= 0)
    position = data.geom_xpos[geom].copy()
    quat = np.empty(4)
    mujoco.mju_mat2Quat(quat, data.geom_xmat[geom])
    size = model.geom_size[geom]
    kind = int(model.geom_type[geom])
    if kind == types.mjGEOM_BOX:
        world.add_box(name, 2.0 * size, position, quat, movable=movable)
    elif kind == types.mjGEOM_SPHERE:
        world.add_sphere(name, size[0], position, movable=movable)
    elif kind in (types.mjGEOM_CAPSULE, types.mjGEOM_CYLINDER):
        add = world.add_capsule if kind == types.mjGEOM_CAPSULE else world.add_cylinder
        add(name, size[0], 2.0 * size[1], position, quat, movable=movable)
    elif kind == types.mjGEOM_PLANE:
        normal = data.geom_xmat[geom].reshape(3, 3)[:, 2]
        world.add_halfspace(name, normal, float(normal @ position), movable=movable)
    elif kind == types.mjGEOM_MESH:
        mesh = int(model.geom_dataid[geom])
        start, count = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
        vertices = hull_vertices(model.mesh_vert[start : start + count], f"mesh geom {name}")
        world.add_convex(name, vertices, position, quat, movable=movable)
    else:
        return False
    return True


def read_mujoco(world: World, source: str | Path | mujoco.MjModel) -> World:
    """Fill ``world`` with the obstacles of a MuJoCo scene (module docstring)."""
    import mujoco  # when used: IK workers load no MuJoCo

    model = _model(source)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    robot = _robot_bodies(model)
    counts: dict[int, int] = {}
    skipped = []
    for g in range(model.ngeom):
        body = int(model.geom_bodyid[g])
        if body in robot or (model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0):
            continue
        name = _name(model, g, counts)
        if not _add_geom(world, model, data, g, name):
            skipped.append(f"{name} ({mujoco.mjtGeom(int(model.geom_type[g])).name})")
    if skipped:
        warnings.warn(
            f"MuJoCo geoms with no obstacle kind skipped: {', '.join(skipped)}",
            PinkctlWarning,
            stacklevel=3,
        )
    return world
