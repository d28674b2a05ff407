"""Set-up shared by the collision-free IK tests (``test_ik_collision*.py``): the margin, the
robots, tool poses and a world holding one obstacle of every kind."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin

import pinkctl
from pinkctl import World

#: The collision margin the tests check answers against [m] (the IK's default).
MARGIN = 0.01


def load_robot(name: str) -> pinkctl.PinkRobot:
    """A bundled robot, its loader's warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pinkctl.load_pink_supported_robot(name)


def tool_pose(robot: pinkctl.PinkRobot, q: np.ndarray) -> pin.SE3:
    """The world pose of ``robot``'s tool frame at the full configuration ``q``."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return data.oMf[robot.model.getFrameId(robot.tool_frame)].copy()


def busy_world(robot: pinkctl.PinkRobot) -> World:
    """The floor, a tilted box, a ball, a pole (capsule), a can (cylinder) and a rock
    (convex), all within the reach of a 0.8 m arm."""
    world = World.for_robot(robot)
    world.add_box(
        "box", size=(0.1, 0.4, 0.3), position=(0.5, 0.0, 0.3), orientation=(0.9, 0.1, 0.3, 0)
    )
    world.add_sphere("ball", radius=0.1, position=(0.3, 0.3, 0.5))
    world.add_capsule("pole", radius=0.03, length=0.8, position=(0.2, -0.45, 0.4))
    world.add_cylinder("can", radius=0.05, length=0.2, position=(0.45, -0.25, 0.1))
    world.add_convex(
        "rock", [[0, 0, 0], [0.2, 0, 0], [0, 0.1, 0], [0, 0, 0.15]], position=(-0.4, 0.1, 0.3)
    )
    return world
