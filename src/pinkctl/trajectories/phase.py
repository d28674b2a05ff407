"""Phase of a periodic motion with smooth ramps from and back to rest."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError

__all__ = ["RampedPhase"]


@dataclass(frozen=True)
class RampedPhase:
    """Phase ``φ(t)`` [rad] that runs at a constant rate, with optional smooth start and stop.

    Without ramps (``ramp_time == 0``), ``φ(t) = ω t``. With a ramp of length ``T_r`` the rate
    follows the smoothstep ``φ'(t) = ω σ(t / T_r)``, ``σ(x) = 3x² − 2x³``, from 0 up to ``ω``
    over ``[0, T_r]``, stays at ``ω``, and mirrors the ramp down to 0 over the last ``T_r``
    seconds. Both ``φ'`` and ``φ''`` are continuous and zero at both ends, so a curve driven by
    this phase starts and stops at rest without an acceleration step. Integrating,

        φ(t) = ω T_r (x³ − x⁴ / 2),          x = t / T_r,                 t <= T_r
        φ(t) = ω T_r / 2 + ω (t − T_r),                                   T_r <= t <= T − T_r
        φ(t) = ω (T − T_r) − ω T_r (y³ − y⁴ / 2),  y = (T − t) / T_r,    t >= T − T_r

    Each ramp loses ``ω T_r / 2`` of phase compared with running at full rate, so the total
    phase is ``ω (T − T_r)``.

    Attributes:
        rate: Cruise rate ``ω`` [rad/s], > 0.
        ramp_time: Ramp length ``T_r`` [s], >= 0.
        duration: Total time ``T`` [s], >= ``2 T_r``.
    """

    rate: float
    ramp_time: float
    duration: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rate) and self.rate > 0.0):
            raise InputError(f"rate must be finite and > 0, got {self.rate!r}")
        if not (math.isfinite(self.ramp_time) and self.ramp_time >= 0.0):
            raise InputError(f"ramp_time must be finite and >= 0, got {self.ramp_time!r}")
        if not (math.isfinite(self.duration) and self.duration > 0.0):
            raise InputError(f"duration must be finite and > 0, got {self.duration!r}")
        if self.duration < 2.0 * self.ramp_time:
            raise InputError(
                f"duration ({self.duration} s) must be at least twice ramp_time "
                f"({self.ramp_time} s): one ramp to start, one to stop"
            )

    @property
    def total_phase(self) -> float:
        """Phase at the end, ``ω (T − T_r)`` [rad]."""
        return self.rate * (self.duration - self.ramp_time)

    def evaluate(self, t: float) -> tuple[float, float, float]:
        """``(φ, φ', φ'')`` at time ``t`` [s], clamped to ``[0, duration]``."""
        w = self.rate
        tr = self.ramp_time
        big_t = self.duration
        t = min(max(t, 0.0), big_t)
        if tr > 0.0 and t < tr:
            x = t / tr
            return (
                w * tr * (x**3 - 0.5 * x**4),
                w * (3.0 - 2.0 * x) * x * x,
                w * 6.0 * x * (1.0 - x) / tr,
            )
        if tr > 0.0 and t > big_t - tr:
            y = (big_t - t) / tr
            return (
                self.total_phase - w * tr * (y**3 - 0.5 * y**4),
                w * (3.0 - 2.0 * y) * y * y,
                -w * 6.0 * y * (1.0 - y) / tr,
            )
        return w * (t - 0.5 * tr), w, 0.0
