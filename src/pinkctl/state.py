"""Deprecated location of the state types: use ``pinkctl`` or :mod:`pinkctl.core.state`.

Kept for one release (0.2) so that code written against 0.1 keeps running.
"""

import warnings

from .core.state import *  # noqa: F403
from .core.state import __all__  # noqa: F401

warnings.warn(
    "pinkctl.state moved to pinkctl.core.state (or import from pinkctl)",
    DeprecationWarning,
    stacklevel=2,
)
