"""Rest-to-rest trapezoidal time scaling of a unit path parameter.

A straight segment in some space (joint space, Cartesian position, rotation angle) is written as
``x(t) = x0 + s(t) * d`` with a path parameter ``s`` going from 0 to 1. The entries of ``d`` are the
distances each coordinate travels (rad, m, ...). Per coordinate ``j`` the speed limit
``|s'| |d_j| <= v_j`` and the acceleration limit ``|s''| |d_j| <= a_j`` turn into limits on
``s`` alone:

    s' <= min_j v_j / |d_j|,      |s''| <= min_j a_j / |d_j|.

The time-optimal rest-to-rest profile under those two limits is a trapezoid in ``s'`` (accelerate,
cruise, decelerate), or a triangle when the cruise rate is never reached. With

    p = max_j 2 |d_j| / v_j,      q = max_j 4 |d_j| / a_j

(``p`` is twice the cruise-limited time, ``q`` four times the squared-acceleration-limited time
for a unit move), the closed form is:

* triangle when ``p < sqrt(q)``: set ``p = q = sqrt(q)``;
* trapezoid otherwise: set ``q = q / p``;
* duration ``T = (p + q) / 2``, cruise rate ``s'_max = 2 / p``, acceleration
  ``s''_max = 4 / (p q)`` and blend (acceleration) time ``q / 2``.

Because every coordinate follows the same ``s(t)``, all of them start, switch phases and stop
together, and the motion stays on the straight line between the two end points. Each coordinate's
own peak speed is ``2 |d_j| / p <= v_j`` and its peak acceleration ``4 |d_j| / (p q) <= a_j``;
at least one coordinate reaches its speed or its acceleration limit (the move is time-optimal for
the straight line).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError

__all__ = ["TrapezoidTimeScaling"]


@dataclass(frozen=True)
class TrapezoidTimeScaling:
    """Rest-to-rest trapezoidal profile ``s(t)`` taking a unit path parameter from 0 to 1.

    Attributes:
        duration: Total time ``T`` of the move [s].
        blend_time: Duration of the acceleration phase (equal to the deceleration phase) [s].
            ``2 * blend_time == duration`` for a triangular profile.
        peak_rate: Largest ``s'`` reached [1/s].
        acceleration: Magnitude of ``s''`` in the blend phases [1/s²].
    """

    duration: float
    blend_time: float
    peak_rate: float
    acceleration: float

    @classmethod
    def from_p_q(cls, p: float, q: float) -> TrapezoidTimeScaling:
        """Build the profile from the ``p`` and ``q`` terms of the module docstring.

        Args:
            p: ``max_j 2 |d_j| / v_j`` [s], strictly positive.
            q: ``max_j 4 |d_j| / a_j`` [s²], strictly positive.

        Raises:
            ValueError: If ``p`` or ``q`` is not finite and strictly positive.
        """
        if not (math.isfinite(p) and p > 0.0):
            raise InputError(f"p must be finite and > 0, got {p!r}")
        if not (math.isfinite(q) and q > 0.0):
            raise InputError(f"q must be finite and > 0, got {q!r}")
        root_q = math.sqrt(q)
        if p < root_q:  # the cruise rate is never reached: triangular profile
            p = q = root_q
        else:
            q = q / p
        return cls(
            duration=0.5 * (p + q),
            blend_time=0.5 * q,
            peak_rate=2.0 / p,
            acceleration=4.0 / (p * q),
        )

    @classmethod
    def synchronized(
        cls, distances: ArrayLike, max_velocities: ArrayLike, max_accelerations: ArrayLike
    ) -> TrapezoidTimeScaling:
        """Fastest common profile for coordinates moving ``distances`` under per-coordinate limits.

        Args:
            distances: Distance each coordinate travels (sign ignored), shape (n,).
            max_velocities: Speed limit of each coordinate, shape (n,), > 0.
            max_accelerations: Acceleration limit of each coordinate, shape (n,), > 0.

        Raises:
            ValueError: If every distance is zero, or the limits are not strictly positive.
        """
        d = np.abs(np.asarray(distances, dtype=np.float64))
        v = np.asarray(max_velocities, dtype=np.float64)
        a = np.asarray(max_accelerations, dtype=np.float64)
        if not (np.all(v > 0.0) and np.all(a > 0.0)):
            raise InputError("velocity and acceleration limits must be strictly positive")
        p = float(np.max(2.0 * d / v))
        q = float(np.max(4.0 * d / a))
        if p <= 0.0 or q <= 0.0:
            raise InputError("at least one distance must be non-zero")
        return cls.from_p_q(p, q)

    @property
    def is_triangular(self) -> bool:
        """True when the profile never cruises (the two blend phases meet)."""
        return 2.0 * self.blend_time >= self.duration

    def evaluate(self, t: float) -> tuple[float, float, float]:
        """Path parameter and its derivatives at time ``t``.

        Args:
            t: Time since the start of the move [s]; clamped to ``[0, duration]``.

        Returns:
            ``(s, s', s'')`` with ``s`` in [0, 1], ``s'`` in [1/s] and ``s''`` in [1/s²].
        """
        big_t = self.duration
        tb = self.blend_time
        acc = self.acceleration
        t = min(max(t, 0.0), big_t)
        if t < tb:
            return 0.5 * acc * t * t, acc * t, acc
        remaining = big_t - t
        if remaining < tb:
            return 1.0 - 0.5 * acc * remaining * remaining, acc * remaining, -acc
        return 0.5 * acc * tb * tb + self.peak_rate * (t - tb), self.peak_rate, 0.0
