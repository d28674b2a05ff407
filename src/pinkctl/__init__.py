"""pinkctl: QP-based differential inverse kinematics control of robots."""

from .robot import PinkRobot, load_pink_robot, load_pink_supported_robot, supported_robots

__all__ = [
    "PinkRobot",
    "load_pink_robot",
    "load_pink_supported_robot",
    "supported_robots",
]

__version__ = "0.1.0"
