"""Deprecated location of the robot loaders: use ``pinkctl`` or :mod:`pinkctl.core.robot`.
Kept for one release (0.2)."""

import warnings

from ..core.robot import *  # noqa: F403
from ..core.robot import __all__  # noqa: F401

warnings.warn(
    "pinkctl.robot moved to pinkctl.core.robot (or import from pinkctl)",
    DeprecationWarning,
    stacklevel=2,
)
