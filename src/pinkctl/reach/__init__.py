"""Reachability maps: where a robot's tool reaches, with which orientations, and how well.

- :func:`reachability_map` solves a global IK query per voxel of a grid and tool
  orientation (warm-started along rows, on a local process pool or Ray);
- :class:`ReachabilityMap` holds the answer per voxel and orientation (reached, solution,
  manipulability, distance to the joint limits) and saves to / loads from ``.npz``;
- :func:`plot_reachability_map` draws slices and a 3-D scatter (the ``plot`` extra);
- :func:`without_joint_limits`: the robot with its joints free, to tell the holes its joint
  limits make.
"""

from .compute import MAP_SEARCH, reachability_map
from .grid import VoxelGrid, without_joint_limits
from .map import ReachabilityMap
from .orientations import spread_orientations
from .plot import plot_reachability_map

__all__ = [
    "MAP_SEARCH",
    "ReachabilityMap",
    "VoxelGrid",
    "plot_reachability_map",
    "reachability_map",
    "spread_orientations",
    "without_joint_limits",
]
