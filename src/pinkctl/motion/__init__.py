"""Motion: the command sequence a controller sends, shaped within the robot's limits."""

from .shaper import (
    HOLD_WINDUP_DECAY,
    HOLD_WINDUP_RECOVERY,
    SATURATION_TOLERANCE,
    WINDUP_DECAY,
    WINDUP_RECOVERY,
    MotionShaper,
)

__all__ = [
    "HOLD_WINDUP_DECAY",
    "HOLD_WINDUP_RECOVERY",
    "MotionShaper",
    "SATURATION_TOLERANCE",
    "WINDUP_DECAY",
    "WINDUP_RECOVERY",
]
