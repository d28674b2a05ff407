"""CoppeliaSim-style IK groups on a loaded robot: elements with constraint masks, strict
priorities between groups, an editable kinematic scene, and a setup saved as TOML.

- :class:`KinematicScene`: the robot plus dummies (frames) and joints added, moved,
  re-parented and removed at run time; joint intervals, dependencies and screw leads.
- :class:`IKElement`: a tip, a target and the constrained axes (:class:`Constraint`).
- :class:`IKGroup`: elements solved together (method, damping, iterations,
  :class:`GroupFlags`, :class:`JointSettings`); ``group.solve(q) -> (q, ResultCode)``.
- :func:`solve`: several groups in strict priority (a cascade of QPs, or null-space
  projection).
- :class:`IKEnvironment`: a scene and its named groups, saved to and loaded from TOML,
  duplicated with ``copy.deepcopy``.
"""

from .element import IKElement
from .environment import IKEnvironment
from .flags import Constraint, GroupFlags, ResultCode
from .group import IK_METHODS, MAX_DAMPING, MAX_ITERATIONS, IKGroup
from .jacobian import GroupError, GroupJacobian
from .joint_settings import JointSettings
from .layout import Column, Row
from .objects import WORLD, JointDependency, JointInterval, NonFiniteDependency
from .scene import KinematicScene
from .solve import GroupReport, GroupResult, solve

__all__ = [
    "IK_METHODS",
    "MAX_DAMPING",
    "MAX_ITERATIONS",
    "WORLD",
    "Column",
    "Constraint",
    "GroupError",
    "GroupFlags",
    "GroupJacobian",
    "GroupReport",
    "GroupResult",
    "IKElement",
    "IKEnvironment",
    "IKGroup",
    "JointDependency",
    "JointInterval",
    "JointSettings",
    "KinematicScene",
    "NonFiniteDependency",
    "ResultCode",
    "Row",
    "solve",
]
