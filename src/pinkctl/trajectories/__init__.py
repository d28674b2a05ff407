"""Trajectories: time-parametrised references for a controller to follow.

* :class:`Trajectory`: the interface (``duration``, ``get_target_state(time)``).
* :class:`Path` and :class:`MinimalTimeJointTrajectory`: joint-space waypoints and the fastest
  rest-to-rest trajectory through them.
* :class:`PoseWaypointTrajectory`, :class:`FigureEightTrajectory`, :class:`CircleTrajectory`:
  Cartesian references for one site (tool frame), with exact velocities; the two planar
  curves share their placement and timing options (:class:`PlanarCurveOptions`).
* :class:`TrapezoidTimeScaling` and :class:`RampedPhase`: the time scalings they are built on.
"""

from .circle import CircleTrajectory
from .figure_eight import FigureEightTrajectory
from .minimal_time_joint_trajectory import MinimalTimeJointTrajectory
from .path import Path
from .phase import RampedPhase
from .planar_curve import (
    CurveArguments,
    PlanarCurveChanges,
    PlanarCurveOptions,
    PlanarCurveTrajectory,
    plane_axes,
)
from .pose_waypoint_trajectory import PoseWaypointTrajectory
from .time_scaling import TrapezoidTimeScaling
from .trajectory import Trajectory

__all__ = [
    "CircleTrajectory",
    "CurveArguments",
    "FigureEightTrajectory",
    "MinimalTimeJointTrajectory",
    "Path",
    "PlanarCurveChanges",
    "PlanarCurveOptions",
    "PlanarCurveTrajectory",
    "PoseWaypointTrajectory",
    "RampedPhase",
    "Trajectory",
    "TrapezoidTimeScaling",
    "plane_axes",
]
