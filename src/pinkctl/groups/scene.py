"""KinematicScene: a loaded robot (or nothing) plus frames and joints added at run time.

The scene is the seed's IK environment content: an object tree (:mod:`pinkctl.groups.
scene_objects`: the robot's frames and joints, dummies and joints added, moved, re-parented
and erased, targets of tips) and joint properties (:mod:`pinkctl.groups.scene_joints`:
intervals, dependencies, screw leads, IK settings, positions), on a Pinocchio model
(:mod:`pinkctl.groups.scene_base`: rebuilt by structural edits, ``revision`` counts them).

Configurations ``q`` of the scene are the robot's coordinates first (unchanged), then the
scene joints'. :meth:`KinematicScene.neutral` is the robot's home configuration with the
scene joints at zero.
"""

from __future__ import annotations

from .scene_joints import SceneJoints
from .scene_objects import SceneObjects

__all__ = ["KinematicScene"]


class KinematicScene(SceneObjects, SceneJoints):
    """A robot and the dummies and joints added to it (see the module docstring).

    Args:
        robot: The robot (its model is copied; the robot is not modified), or None for an
            empty scene (only the world) built from dummies and joints.
    """
