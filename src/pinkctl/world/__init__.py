"""The world around a robot and the robot's own geometry, for collision checks.

- :class:`World`: named obstacles (boxes, spheres, capsules, cylinders, half-spaces, meshes,
  convex hulls) in the world frame, movable at run time, saved as TOML, read from MuJoCo
  scenes;
- :class:`RobotGeometry`: the robot's collision shapes and the link pairs never checked;
- :class:`CollisionScene`: both together, with the reference distance queries (signed
  distances, witness points, normals, the distance's Jacobian row);
- :func:`floor_height`: where the floor under a robot lies (the simulation's and the
  world's).
"""

from .floor import FLOOR_CLEARANCE, floor_height
from .obstacle import KINDS, Obstacle
from .robot_geometry import Exclusion, RobotGeometry
from .scene import CollisionScene, PairDistance, ScenePair
from .world import FLOOR, World

__all__ = [
    "FLOOR",
    "FLOOR_CLEARANCE",
    "KINDS",
    "CollisionScene",
    "Exclusion",
    "Obstacle",
    "PairDistance",
    "RobotGeometry",
    "ScenePair",
    "World",
    "floor_height",
]
