"""Deprecated location of the demo: use :mod:`pinkctl.app.demo`. Kept for one release (0.2)."""

import warnings

from .app.demo import *  # noqa: F403
from .app.demo import __all__  # noqa: F401

warnings.warn("pinkctl.demo moved to pinkctl.app.demo", DeprecationWarning, stacklevel=2)
