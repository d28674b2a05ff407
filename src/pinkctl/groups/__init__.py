"""CoppeliaSim-style IK groups on a loaded robot (or on an empty scene): elements with
constraint masks, strict priorities between groups, an editable kinematic scene, and a setup
saved as TOML (docs/groups.md maps every function of the seed to these names).

- :class:`KinematicScene`: the robot's frames and joints plus dummies (frames) and joints
  added, moved, re-parented and removed at run time; joint intervals, dependencies, screw
  leads, IK settings, positions; the targets of tips.
- :class:`IKElement`: a tip, its target and the constrained axes (:class:`Constraint`).
- :class:`IKGroup`: elements solved together (method, damping, iterations,
  :class:`GroupFlags`, :class:`JointSettings`); ``group.solve(q) -> (q, ResultCode)``;
  ``group.find_config(q)`` (:func:`find_config`).
- :func:`solve`: several groups in strict priority (a cascade of QPs, or the seed's
  null-space projection).
- :func:`chain_jacobian`: the Jacobian and error of a chain, without a group.
- :class:`IKEnvironment`: a scene and its named groups, saved to and loaded from TOML,
  duplicated with ``copy.deepcopy``; :class:`IKEnvironments`: several by handle.
"""

from .chain import chain_jacobian
from .element import IKElement
from .environment import IKEnvironment
from .find_config import DEFAULT_METRIC, FindResult, FoundConfig, find_config
from .flags import Constraint, GroupFlags, ResultCode
from .group import IK_METHODS, MAX_DAMPING, MAX_ITERATIONS, IKGroup
from .jacobian import GroupError, GroupJacobian
from .joint_models import JOINT_TYPES
from .joint_settings import JOINT_MODES, JointSettings
from .layout import Column, Row
from .objects import WORLD, JointDependency, JointInterval, NonFiniteDependency
from .scene import KinematicScene
from .scene_objects import PARENT, SceneObject
from .solve import PRIORITIES, GroupReport, GroupResult, solve
from .workspace import NO_ENVIRONMENT, IKEnvironments

__all__ = [
    "DEFAULT_METRIC",
    "IK_METHODS",
    "JOINT_MODES",
    "JOINT_TYPES",
    "MAX_DAMPING",
    "MAX_ITERATIONS",
    "NO_ENVIRONMENT",
    "PARENT",
    "PRIORITIES",
    "WORLD",
    "Column",
    "Constraint",
    "FindResult",
    "FoundConfig",
    "GroupError",
    "GroupFlags",
    "GroupJacobian",
    "GroupReport",
    "GroupResult",
    "IKElement",
    "IKEnvironment",
    "IKEnvironments",
    "IKGroup",
    "JointDependency",
    "JointInterval",
    "JointSettings",
    "KinematicScene",
    "NonFiniteDependency",
    "ResultCode",
    "Row",
    "SceneObject",
    "chain_jacobian",
    "find_config",
    "solve",
]
