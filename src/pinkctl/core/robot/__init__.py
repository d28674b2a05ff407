"""Robots: one description pipeline from URDF/MJCF + SRDF + configuration to Pinocchio and MuJoCo.

- :func:`load_pink_robot` loads any URDF or MJCF file with an optional configuration
  (:mod:`pinkctl.core.robot.config`); what is not configured is inferred
  (:mod:`pinkctl.core.robot.inference`) and reported in ``robot.inferred``.
- :func:`load_pink_supported_robot` loads a robot of the catalog, :func:`supported_robots`
  lists them.
- :class:`RobotSource` (``robot.source``) loads a robot again elsewhere (worker processes).
- :mod:`pinkctl.core.robot.description` normalises a description once for both engines;
  :mod:`pinkctl.core.robot.meshes` resolves and converts its meshes;
  :mod:`pinkctl.core.robot.frames` resolves frames by name;
  :mod:`pinkctl.core.robot.joint_settings` (joints, limits, servos),
  :mod:`pinkctl.core.robot.home` and :mod:`pinkctl.core.robot.srdf` hold the loader's steps.
"""

from .config import RobotConfig, read_config
from .description import RobotDescription, read_description
from .frames import resolve_frame
from .loader import (
    load_pink_robot,
    load_pink_supported_robot,
    robot_configurations_dir,
    supported_robots,
)
from .meshes import MeshNotFoundError
from .model import PinkRobot
from .source import RobotSource, model_digest
from .srdf import srdf_state

__all__ = [
    "MeshNotFoundError",
    "PinkRobot",
    "RobotConfig",
    "RobotDescription",
    "RobotSource",
    "load_pink_robot",
    "load_pink_supported_robot",
    "model_digest",
    "read_config",
    "read_description",
    "resolve_frame",
    "robot_configurations_dir",
    "srdf_state",
    "supported_robots",
]
