"""Where the floor under a robot lies: the one computation the simulation and the world share.

:func:`floor_height` is the height of the floor that
:meth:`MujocoSimulation.from_robot <pinkctl.MujocoSimulation.from_robot>` puts under a robot
and that :meth:`World.for_robot <pinkctl.world.World.for_robot>` adds as the ``"floor"``
half-space: the robot's configured ``floor`` when it is a number, else just below the lowest
point of the robot's MuJoCo geoms at home (their bounding boxes, every geom MuJoCo compiles
from the description), never above z = 0. Both call this function, so they always agree.

The helpers that compile the robot's description for MuJoCo and put it at home live here too
(the simulation's scene builder imports them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:
    import mujoco

    from ..core.robot import PinkRobot

__all__ = ["FLOOR_CLEARANCE", "floor_height", "home_qpos", "lowest_point", "robot_spec"]

#: Gap between the robot's lowest point at home and the floor [m].
FLOOR_CLEARANCE = 1e-3


def robot_spec(robot: PinkRobot) -> mujoco.MjSpec:
    """The MjSpec of ``robot``'s description as both engines read it (no scene added)."""
    import mujoco  # when used: IK workers load no MuJoCo

    description = robot.description
    if description is None:
        if robot.urdf_path is None:
            raise InputError("robot has no description; load it with load_pink_robot")
        spec = mujoco.MjSpec.from_file(str(robot.urdf_path))
        spec.compiler.fusestatic = False
        spec.compiler.discardvisual = False
        return spec
    if description.kind == "mjcf":
        return mujoco.MjSpec.from_file(str(description.path))
    return mujoco.MjSpec.from_string(description.mujoco_xml)


def add_free_joint(spec: mujoco.MjSpec, robot: PinkRobot) -> None:
    """A free joint on the root body of a floating-base robot (when it has none)."""
    import mujoco  # when used: IK workers load no MuJoCo

    if not robot.floating_base:
        return
    root = next((b for b in spec.worldbody.bodies if b.name), None)
    if root is not None and not any(j.type == mujoco.mjtJoint.mjJNT_FREE for j in root.joints):
        root.add_freejoint(name="root_joint")


def home_qpos(model: mujoco.MjModel, robot: PinkRobot) -> np.ndarray:
    """MuJoCo's ``qpos`` of the robot's home configuration ``robot.q0``
    (:func:`~pinkctl.to_mujoco_qpos`: quaternions reordered, a free joint placed; joints
    MuJoCo lacks left out, the model's ``qpos0`` elsewhere)."""
    import mujoco  # when used: IK workers load no MuJoCo

    missing = {
        name: None
        for name in robot.model.names[1:]
        if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name) < 0
    }
    from ..core.mujoco_qpos import to_mujoco_qpos  # when used: it loads MuJoCo

    return to_mujoco_qpos(robot.model, model, robot.q0, joint_map=missing)


def lowest_point(model: mujoco.MjModel, robot: PinkRobot) -> float:
    """Lowest z of the robot's geoms at home [m]: geom bounding boxes, and for a floating-base
    robot (which stands on the floor) the mesh vertices themselves, where the feet are."""
    import mujoco  # when used: IK workers load no MuJoCo

    data = mujoco.MjData(model)
    data.qpos[:] = home_qpos(model, robot)
    mujoco.mj_forward(model, data)
    lowest = np.inf
    for g in range(model.ngeom):
        if model.geom_bodyid[g] == 0:
            continue
        rotation = data.geom_xmat[g].reshape(3, 3)
        mesh = int(model.geom_dataid[g])
        if robot.floating_base and model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH and mesh >= 0:
            first, count = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
            vertices = model.mesh_vert[first : first + count]
            lowest = min(lowest, float(data.geom_xpos[g, 2] + np.min(vertices @ rotation[2])))
            continue
        center, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        extent_z = float(np.abs(rotation[2]) @ half)
        lowest = min(lowest, float(data.geom_xpos[g, 2] + rotation[2] @ center) - extent_z)
    return lowest


def floor_height(robot: PinkRobot, model: mujoco.MjModel | None = None) -> float | None:
    """Height of the floor under ``robot`` [m] (module docstring); None when the robot's
    ``floor`` is False.

    Args:
        robot: The robot.
        model: The robot's compiled MuJoCo model, when the caller has one (the simulation
            passes the model it is building); else it is compiled here from the robot's
            description (a floating-base robot gets its free joint).
    """
    floor = robot.floor
    if floor is False:
        return None
    if isinstance(floor, (int, float)) and not isinstance(floor, bool):
        return float(floor)
    if model is None:
        spec = robot_spec(robot)
        add_free_joint(spec, robot)
        model = spec.compile()
    return min(0.0, lowest_point(model, robot) - FLOOR_CLEARANCE)
