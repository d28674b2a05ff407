"""Motion: joint limits, the viability filter, the trajectory checker and the motion shaper
that owns a controller's command sequence."""

from .check import LIMIT_KINDS, LimitReport, Violation, check_trajectory
from .filter import MotionLimitFilter
from .limits import MotionLimits
from .shaper import (
    HOLD_WINDUP_DECAY,
    HOLD_WINDUP_RECOVERY,
    SATURATION_TOLERANCE,
    MotionShaper,
)

__all__ = [
    "HOLD_WINDUP_DECAY",
    "HOLD_WINDUP_RECOVERY",
    "LIMIT_KINDS",
    "LimitReport",
    "MotionLimitFilter",
    "MotionLimits",
    "MotionShaper",
    "SATURATION_TOLERANCE",
    "Violation",
    "check_trajectory",
]
