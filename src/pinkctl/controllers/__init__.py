"""Controllers: the BaseController contract, the IK controller, and composition wrappers."""

from .base import BaseController
from .containers import (
    ChainedController,
    CombinedController,
    ControllerContainer,
    ParallelController,
    SelectableController,
    SequentialController,
)
from .gripper import GripperController
from .pink_ik import EXACT_SOLVERS, ControllerStatus, PinkIKController
from .trajectory_follower import HoldingTrajectoryFollower, TrajectoryFollower

__all__ = [
    "BaseController",
    "ChainedController",
    "CombinedController",
    "ControllerContainer",
    "ControllerStatus",
    "EXACT_SOLVERS",
    "GripperController",
    "HoldingTrajectoryFollower",
    "ParallelController",
    "PinkIKController",
    "SelectableController",
    "SequentialController",
    "TrajectoryFollower",
]
