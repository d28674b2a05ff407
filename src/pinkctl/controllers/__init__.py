"""Controllers: the BaseController contract, the IK controller, and composition wrappers."""

from ..qp import EXACT_SOLVERS
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
from .pink_ik import PinkIKController
from .status import ControllerStatus
from .tick_mode import TickMode
from .trajectory_follower import HoldingTrajectoryFollower, TrajectoryFollower
from .whole_body import FrameCosts

__all__ = [
    "BaseController",
    "ChainedController",
    "CombinedController",
    "ControllerContainer",
    "ControllerStatus",
    "EXACT_SOLVERS",
    "FrameCosts",
    "GripperController",
    "HoldingTrajectoryFollower",
    "ParallelController",
    "PinkIKController",
    "TickMode",
    "SelectableController",
    "SequentialController",
    "TrajectoryFollower",
]
