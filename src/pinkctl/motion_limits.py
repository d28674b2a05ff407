"""Deprecated location of the motion limits: use :mod:`pinkctl.motion`. Kept for one release
(0.2)."""

import warnings

from .motion import (
    LIMIT_KINDS,
    LimitReport,
    MotionLimitFilter,
    MotionLimits,
    Violation,
    check_trajectory,
)

__all__ = [
    "LIMIT_KINDS",
    "LimitReport",
    "MotionLimitFilter",
    "MotionLimits",
    "Violation",
    "check_trajectory",
]

warnings.warn("pinkctl.motion_limits moved to pinkctl.motion", DeprecationWarning, stacklevel=2)
