"""A checker of command sequences against the four motion limits, written in the tests (not
pinkctl's own :mod:`pinkctl.motion.check`): shared by the closed-loop collision tests."""

from __future__ import annotations

import numpy as np


def check_limits(commands: np.ndarray, limits, dt: float) -> None:
    """Every command within position, velocity, acceleration and jerk limits (``commands[0]``
    is the start, at rest: it is counted three times)."""
    q = np.vstack([commands[:1], commands[:1], commands])
    v = np.diff(q, axis=0) / dt
    a = np.diff(v, axis=0) / dt
    j = np.diff(a, axis=0) / dt
    assert np.all(commands >= np.asarray(limits.lower) - 1e-9)
    assert np.all(commands <= np.asarray(limits.upper) + 1e-9)
    assert np.all(np.abs(v) <= np.asarray(limits.velocity) * (1 + 1e-6) + 1e-9)
    if limits.acceleration is not None:
        assert np.all(np.abs(a) <= np.asarray(limits.acceleration) * (1 + 1e-6) + 1e-6)
    if limits.jerk is not None:
        assert np.all(np.abs(j) <= np.asarray(limits.jerk) * (1 + 1e-6) + 1e-3)
