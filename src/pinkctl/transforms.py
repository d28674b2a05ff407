"""Deprecated location of the joint and pose conversions: use ``pinkctl``,
:mod:`pinkctl.core.joints` or :mod:`pinkctl.core.poses`. Kept for one release (0.2)."""

import warnings

from .core.joints import *  # noqa: F403
from .core.joints import __all__ as _joints
from .core.poses import *  # noqa: F403
from .core.poses import __all__ as _poses

__all__ = [*_joints, *_poses]

warnings.warn(
    "pinkctl.transforms moved to pinkctl.core.joints and pinkctl.core.poses",
    DeprecationWarning,
    stacklevel=2,
)
