"""pinkctl's warnings and errors."""

from __future__ import annotations

__all__ = ["PinkctlWarning"]


class PinkctlWarning(UserWarning):
    """Something pinkctl inferred, repaired or switched off that the user should know about
    (an assumed velocity limit, a repaired inertia, motion limits off for lack of limits)."""
