"""check_trajectory: every position, velocity, acceleration and jerk violation of a sampled
joint trajectory, as a :class:`LimitReport` (definitions in :mod:`pinkctl.motion.filter`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import real_number
from ..errors import InputError
from ._vectors import _as_vector
from .limits import MotionLimits

__all__ = ["LIMIT_KINDS", "LimitReport", "Violation", "check_trajectory"]

#: Machine epsilon of float64 (the unit of the default tolerance floor).
_EPS = np.finfo(np.float64).eps

#: The limit kinds, in derivative order.
LIMIT_KINDS: tuple[str, ...] = ("position", "velocity", "acceleration", "jerk")


@dataclass(frozen=True)
class Violation:
    """One limit violation of one joint at one tick.

    Attributes:
        joint: Joint name.
        kind: ``"position"``, ``"velocity"``, ``"acceleration"`` or ``"jerk"``.
        tick: Sample index k.
        time: ``t0 + k dt`` [s].
        value: The offending value (q_k, v_k, a_k or j_k).
        limit: The limit crossed (the position bound, or ± the derivative limit, with the sign
            of ``value``).
        excess: How far beyond the limit, > 0 (same unit as ``value``).
    """

    joint: str
    kind: str
    tick: int
    time: float
    value: float
    limit: float
    excess: float


@dataclass
class _KindResult:
    joint: np.ndarray  # (M,) joint indices
    tick: np.ndarray  # (M,)
    value: np.ndarray
    limit: np.ndarray
    excess: np.ndarray
    peak_ratio: float  # max over samples and joints of |value| / limit (positions: see below)


@dataclass
class LimitReport:
    """Every limit violation of a sampled joint trajectory (see :func:`check_trajectory`).

    Attributes:
        limits: The limits checked against.
        dt: Sample period [s].
        t0: Time of sample 0 [s].
        num_samples: Number of position samples K.
        kinds: The limit kinds checked.
    """

    limits: MotionLimits
    dt: float
    t0: float
    num_samples: int
    kinds: tuple[str, ...]
    _results: dict[str, _KindResult] = field(repr=False)
    _violations: list[Violation] | None = field(default=None, repr=False)

    @property
    def violations(self) -> list[Violation]:
        """All violations, sorted by tick, then kind (derivative order), then joint."""
        if self._violations is None:
            names = self.limits.joint_names
            rows: list[tuple[int, int, int, Violation]] = []
            for order, kind in enumerate(LIMIT_KINDS):
                res = self._results.get(kind)
                if res is None:
                    continue
                for j, k, val, lim, exc in zip(
                    res.joint.tolist(),
                    res.tick.tolist(),
                    res.value.tolist(),
                    res.limit.tolist(),
                    res.excess.tolist(),
                ):
                    viol = Violation(names[j], kind, k, self.t0 + k * self.dt, val, lim, exc)
                    rows.append((k, order, j, viol))
            rows.sort(key=lambda x: x[:3])
            self._violations = [x[3] for x in rows]
        return self._violations

    def violations_of(self, kind: str) -> list[Violation]:
        """The violations of one kind, sorted by tick then joint."""
        _check_kind(kind)
        return [v for v in self.violations if v.kind == kind]

    def counts(self) -> dict[str, int]:
        """Number of violations per checked kind (a kind never checked is absent)."""
        return {kind: int(self._results[kind].tick.size) for kind in self.kinds}

    @property
    def ok(self) -> bool:
        """True when no limit is violated."""
        return all(res.tick.size == 0 for res in self._results.values())

    def max_ratio(self, kind: str) -> float:
        """Peak ``|value| / limit`` of a kind over every checked sample and joint.

        For positions the ratio is ``|q - c| / h`` with ``c`` the middle of the range and
        ``h`` its half width (1 at a limit; 0 for joints without position limits). Above 1
        means a violation (up to the tolerance). NaN for a kind that was not checked or has
        no checked sample.
        """
        _check_kind(kind)
        res = self._results.get(kind)
        return float("nan") if res is None else res.peak_ratio

    def worst(self, kind: str) -> Violation | None:
        """The violation of ``kind`` with the largest excess relative to its limit."""
        vs = self.violations_of(kind)
        if not vs:
            return None
        return max(vs, key=lambda v: v.excess / max(abs(v.limit), 1e-300))

    def summary_rows(self) -> list[tuple[str, str]]:
        """Rows ``(label, text)`` for a two-column summary table, one per limit kind."""
        rows = []
        for kind in LIMIT_KINDS:
            label = f"limit violations: {kind}"
            if kind not in self.kinds:
                rows.append((label, "not checked (no limit)"))
                continue
            count = int(self._results[kind].tick.size)
            ratio = self._results[kind].peak_ratio
            text = f"{count}"
            if math.isfinite(ratio):
                text += f" (peak {100.0 * ratio:.1f}% of limit)"
            worst = self.worst(kind)
            if worst is not None:
                text += f", worst {worst.joint} at t={worst.time:.3f} s by {worst.excess:.3g}"
            rows.append((label, text))
        return rows

    def __str__(self) -> str:
        rows = self.summary_rows()
        width = max(len(r[0]) for r in rows)
        head = (
            f"LimitReport: {self.num_samples} samples at dt={self.dt:g} s, "
            f"{self.limits.num_joints} joints, {'ok' if self.ok else 'VIOLATED'}"
        )
        return "\n".join([head] + [f"  {k:<{width}}  {v}" for k, v in rows])


def _check_kind(kind: str) -> None:
    if kind not in LIMIT_KINDS:
        raise InputError(f"kind must be one of {LIMIT_KINDS}, got {kind!r}")


def check_trajectory(
    positions: np.ndarray | Sequence[Sequence[float]],
    dt: float,
    limits: MotionLimits,
    *,
    initial_velocity: np.ndarray | Sequence[float] | float | None = 0.0,
    initial_acceleration: np.ndarray | Sequence[float] | float | None = 0.0,
    rtol: float = 1e-9,
    atol: float | None = None,
    t0: float = 0.0,
) -> LimitReport:
    """Find every position, velocity, acceleration and jerk violation of a sampled trajectory.

    Derivatives are the backward differences of the module docstring. The state before the
    first sample is ``initial_velocity`` and ``initial_acceleration`` (default 0: the robot
    starts at rest), so ``v_0`` and ``a_0`` are those values, ``v_1 = (q_1 - q_0) / dt``, and
    so on. Pass None for a value whose history is unknown: with ``initial_velocity=None``
    velocities are checked from sample 1, accelerations from 2 and jerks from 3; with only
    ``initial_acceleration=None`` accelerations from 1 and jerks from 2. Kinds whose limits
    are None are not checked.

    A value counts as a violation when it exceeds its limit by more than
    ``rtol * |limit| + atol_n``. The default ``atol_n`` for the n-th derivative is
    ``2**n * eps * max(1, max_k |q_k|) / dt**n`` (per joint), the size of the rounding that
    storing the positions as float64 puts in an n-th difference; it keeps an exactly
    saturated command from being reported. ``atol``, when given, replaces it for every
    kind.

    Args:
        positions: Samples ``q_k``, shape ``(K, N)`` (N = ``limits.num_joints``).
        dt: Sample period [s].
        limits: The limits.
        initial_velocity: ``v_0`` [rad/s], scalar or ``(N,)``, or None (unknown).
        initial_acceleration: ``a_0`` [rad/s²], scalar or ``(N,)``, or None (unknown).
        rtol: Relative tolerance (default 1e-9).
        atol: Absolute tolerance for every kind (default: the float64 floor above).
        t0: Time of sample 0 [s] (for :attr:`Violation.time`).

    Raises:
        ValueError: On a malformed argument (shape, non-finite value, dt <= 0).
    """
    q = _position_samples(positions, limits)
    dt = real_number(dt, "dt", low=0.0, low_open=True)
    rtol = real_number(rtol, "rtol", low=0.0)
    if atol is not None:
        atol = real_number(atol, "atol", low=0.0)
    n = limits.num_joints
    v0 = None
    if initial_velocity is not None:
        v0 = _as_vector(initial_velocity, n, "initial_velocity", finite=True)
    a0 = None
    if initial_acceleration is not None and v0 is not None:
        a0 = _as_vector(initial_acceleration, n, "initial_acceleration", finite=True)
    scale = np.maximum(1.0, np.abs(q).max(axis=0)) if q.shape[0] else np.ones(n)
    results = {"position": _positions(q, limits, rtol, _floor(0, scale, dt, atol))}
    series = _derivatives(q, dt, v0, a0, limits)
    for order, (kind, limit, start, values) in enumerate(series, start=1):
        if limit is not None:
            tol = rtol * limit + _floor(order, scale, dt, atol)
            results[kind] = _derivative(values, limit, start, tol)
    return LimitReport(
        limits=limits,
        dt=dt,
        t0=float(t0),
        num_samples=q.shape[0],
        kinds=limits.kinds,
        _results=results,
    )


def _position_samples(positions: Any, limits: Any) -> np.ndarray:
    """``positions`` as a finite float array of shape ``(K, N)`` (``limits`` checked too)."""
    if not isinstance(limits, MotionLimits):
        raise InputError(f"limits must be a MotionLimits, got {type(limits).__name__}")
    n = limits.num_joints
    q = np.asarray(positions, dtype=np.float64)
    if q.ndim != 2 or q.shape[1] != n:
        raise InputError(f"positions must have shape (K, {n}), got {q.shape}")
    if not np.isfinite(q).all():
        raise InputError("positions must be finite")
    return q


def _floor(order: int, scale: np.ndarray, dt: float, atol: float | None) -> np.ndarray:
    """The absolute tolerance of the ``order``-th derivative per joint: ``atol`` when given,
    else ``2**order eps scale / dt**order`` (the rounding of float64 positions of magnitude
    ``scale`` in an ``order``-th difference)."""
    if atol is not None:
        return np.full(scale.shape[0], float(atol))
    return (2.0**order) * _EPS * scale / dt**order


def _positions(q: np.ndarray, limits: MotionLimits, rtol: float, floor: np.ndarray) -> _KindResult:
    """The position violations, and the peak ``|q - c| / h`` (``c, h``: the middle and half
    width of each range; 0 for joints without one)."""
    lo, hi = limits.lower, limits.upper
    with np.errstate(invalid="ignore"):
        tol_lo = rtol * np.abs(np.where(np.isfinite(lo), lo, 0.0)) + floor
        tol_hi = rtol * np.abs(np.where(np.isfinite(hi), hi, 0.0)) + floor
        below = lo - q  # (K, N), > 0 when below
        above = q - hi
        bad_lo = below > tol_lo
        bad_hi = above > tol_hi
        finite = np.isfinite(lo) & np.isfinite(hi)
        mid = np.where(finite, 0.5 * (lo + hi), 0.0)
        half = np.where(finite, 0.5 * (hi - lo), np.inf)
    ratio = float((np.abs(q - mid) / half).max()) if q.shape[0] else float("nan")
    ks, js = np.nonzero(bad_lo | bad_hi)
    is_lo = bad_lo[ks, js]
    lim = np.where(is_lo, lo[js], hi[js])
    exc = np.where(is_lo, below[ks, js], above[ks, js])
    return _KindResult(js, ks, q[ks, js], lim, exc, ratio)


def _derivatives(
    q: np.ndarray,
    dt: float,
    v0: np.ndarray | None,
    a0: np.ndarray | None,
    limits: MotionLimits,
) -> list[tuple[str, np.ndarray | None, int, np.ndarray]]:
    """``(kind, limit, start, values)`` of velocity, acceleration and jerk: backward
    differences, ``values[i]`` at sample ``start + i`` (``v0``, ``a0``: the state before the
    first sample, None when unknown)."""
    vel = np.diff(q, axis=0) / dt
    v_start = 1
    if v0 is not None:
        vel = np.concatenate([v0[None, :], vel])
        v_start = 0
    acc = np.diff(vel, axis=0) / dt
    a_start = v_start + 1
    if a0 is not None:
        acc = np.concatenate([a0[None, :], acc])
        a_start = 0
    jerk = np.diff(acc, axis=0) / dt
    return [
        ("velocity", limits.velocity, v_start, vel),
        ("acceleration", limits.acceleration, a_start, acc),
        ("jerk", limits.jerk, a_start + 1, jerk),
    ]


def _derivative(values: np.ndarray, limit: np.ndarray, start: int, tol: np.ndarray) -> _KindResult:
    """The violations of ``|values| <= limit`` beyond ``tol``, and the peak ``|value| / limit``."""
    mag = np.abs(values)
    ks, js = np.nonzero((mag - limit) > tol)
    vals = values[ks, js]
    peak = float((mag / limit).max()) if values.size else float("nan")
    return _KindResult(
        js, ks + start, vals, np.copysign(limit[js], vals), mag[ks, js] - limit[js], peak
    )
