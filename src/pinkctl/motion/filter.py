"""Joint motion limits at the controller rate: the bounds a command must respect, and a checker.

(This module is long because the viability bound's derivation, about a hundred lines, is
documented next to the code that implements it; the code itself is one class.)

A robot arm such as the Franka Panda stops with an error when a command exceeds any of its
joint position, velocity, acceleration or jerk limits. This module makes those four limit
sets usable by a differential-IK controller:

- :class:`MotionLimits` holds the per-joint limits (positions in rad or m, velocities in
  rad/s or m/s, accelerations in rad/s², jerks in rad/s³).
- :class:`MotionLimitFilter` turns them into a box ``v_lower <= v <= v_upper`` on the next
  commanded joint velocity, given the commands sent so far. Every command in the box keeps
  all four limit sets *and* leaves the joint in a state from which it can still be stopped
  inside its range, so the box is never empty on the following ticks either.
- :func:`check_trajectory` finds every limit violation of a sampled joint trajectory and
  returns a :class:`LimitReport`.

Definitions (what the checker checks and what the filter guarantees)
---------------------------------------------------------------------
Commands are sampled at the controller period ``dt``: positions ``q_0, q_1, ...``. The
derivatives are backward differences of the samples::

    v_k = (q_k - q_{k-1}) / dt        velocity at tick k
    a_k = (v_k - v_{k-1}) / dt        acceleration at tick k
    j_k = (a_k - a_{k-1}) / dt        jerk at tick k

The state before the first sample (``v_0``, ``a_0``) is the initial state: zero for a robot at
rest. A trajectory satisfies the limits when, for every joint and tick, ``lower <= q_k <=
upper``, ``|v_k| <= velocity``, ``|a_k| <= acceleration`` and ``|j_k| <= jerk``.

The viability bound
-------------------
Work with one joint and its upper position limit (the lower one is the mirror image: flip the
signs of q, v and a). Let ``V, A, J`` be the velocity, acceleration and jerk limits and
``B <= A`` the deceleration the bound plans to brake with (below). Before tick k the joint is
at ``q = q_{k-1}`` with velocity ``v_{k-1}`` and acceleration ``a_{k-1}``; the command
chooses ``v = v_k`` and hence ``a = (v - v_{k-1}) / dt``. Write ``r = upper - q`` for the
room left before the move and ``s = sqrt(2 B r)``. The filter requires::

    (B)  z := v + max(a + B, 0)² / (2 J)  <=  s - B dt / 2

- (B) implies ``q_k <= upper``: ``v dt <= s dt - B dt²/2 <= s²/(2B) = r`` because
  ``(s - B dt)² >= 0``.
- (B) is recursively feasible. Brake on the next tick with ``a' = max(a - J dt, -B)`` (or,
  if ``a < -B`` already, ``a' = min(a + J dt, -B)``); both respect the jerk and acceleration
  limits. Then ``z' <= z - B dt``: when ``a' = a - J dt >= -B`` the difference is exactly
  ``-B dt - J dt²/2``, otherwise the quadratic term vanishes and ``v' <= v - B dt``. The
  room after the move is ``r' = r - v dt`` and ``2 B r' >= s² - 2 B dt s + B² dt² =
  (s - B dt)²``, so ``s' - B dt/2 >= s - 3 B dt/2 >= z - B dt >= z'``: (B) holds again at
  tick k + 1, and by induction forever.
- Without a jerk limit the quadratic term is dropped and (B) is the exact discrete braking
  curve of a double integrator: braking at ``-B`` from ``v = s - B dt/2`` ends within ``r``.
  With one, ``(a + B)²/(2J)`` is the velocity still gained (or not yet lost) while the
  acceleration ramps from ``a`` down to ``-B`` at the jerk limit.

Velocity is handled the same way: ``v + max(a, 0)²/(2J) <= V`` (the velocity reached once
the acceleration is ramped to zero) is kept invariant by the same braking step. Every
constraint on the upper side is monotone in v, so solving each for v is closed form (a
quadratic) and the box is their intersection; no iteration, no loop over joints.

The braking deceleration ``B`` may be any value up to ``A``; the filter takes
``B = min(0.999 A, sqrt(J V)/2, V/(4 dt), cbrt(J² (upper - lower))/2)``. The factor 0.999 keeps
the braking command strictly inside the acceleration box (so rounding never empties the box);
the other terms only bind for limit sets where building up the full deceleration takes longer
than stopping does (slow jerk, narrow range or very coarse ``dt``), where braking at ``A``
would make the bound needlessly conservative. For Franka ``B = 0.999 A`` on every joint.

The braking step decreases v, so it also satisfies every other upper-side constraint; it can
only conflict with the *lower*-side constraints if both sides bind at once, which needs a
velocity limit below about ``2 B²/J + 4 B dt`` or a range below about
``(2 B²/J + 8 B dt)² / (2 B)`` (Franka at 1 kHz: 0.12 rad/s and 1e-3 rad, against velocity
limits over 2 rad/s and ranges over 3 rad). Limit sets
with ``V/A`` between 0.02 s and 1 s, ``A/J`` between 0.5 ms and 50 ms, ranges from 0.2 rad and
``dt`` from 0.1 ms to 30 ms are exercised by ``tests/test_motion_limits.py`` (adversarial
request sequences and a property test): the box is never empty from a viable start.

Conservatism: at cruise the braking curve differs from the continuous-time time-optimal
jerk-limited one by ``B²/(2J) + B dt/2`` in velocity (Franka joint 1 at 1 kHz: 0.0225 rad/s
of 2.175 rad/s); braking from full speed into a limit takes 0.02 % to 0.8 % more distance
than the continuous-time optimum ``V²/(2A) + V A/(2J)`` (Franka, 1 kHz), and a joint
driven into a limit comes to rest ``(B²/(2J) + B dt/2)²/(2B)`` short of it (Franka: 1e-5 to
3e-5 rad). A joint *at rest* closer to a limit than that is outside the set the bound keeps
invariant (although it is safe): the filter then treats it as a recovery and moves it out by
about that distance.

Floating-point margin: the filter shrinks every limit by a relative ``margin`` (default
``1e-6``; position limits by ``margin`` times the range) so that rounding of the commanded
positions, seen by the checker as ``2**n eps |q| / dt**n`` in the n-th difference, never turns
an exactly saturated command into a reported violation.

Starting outside the limits
---------------------------
If the state is not viable (after :meth:`MotionLimitFilter.reset` with a position outside the
range, a velocity above its limit, or a joint moving too fast towards a limit), the
constraints cannot all hold. They are then met in priority order, each level taking the point
closest to it when it cannot be met: jerk, acceleration, velocity (limit and its viability),
next position inside the range, braking bound (B). A level that contradicts itself (its lower
bound above its upper one) keeps the side the joint is heading to (velocity) or nearest to
(position). The box then collapses to the single command that pushes back toward the
admissible set as fast as the higher levels allow. A joint that starts outside its range with
an outward velocity first brakes (as fast as the acceleration and jerk limits allow: about
``v0/A + A/J``) and then moves back toward the range on every tick until it is inside.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import real_number
from ..errors import InputError
from ._vectors import _as_vector, _readonly
from .limits import MotionLimits

__all__ = ["FilterConstants", "MotionLimitFilter"]

# Hot-path ufuncs, bound once.
_add, _subtract, _multiply, _divide = np.add, np.subtract, np.multiply, np.divide
_minimum, _maximum, _sqrt, _negative = np.minimum, np.maximum, np.sqrt, np.negative

#: Bound (B) uses this fraction of the (shrunk) acceleration limit for braking.
_BRAKE_FRACTION = 1.0 - 1e-3

#: Infinite position limits are replaced inside the filter by this distance [rad or m].
_FAR = 1e15


@dataclass(frozen=True)
class FilterConstants:
    """What a :class:`MotionLimitFilter` derives from its limits, per joint (shrunk by the
    margin; the native kernel in :mod:`pinkctl.motion.native` computes with these).

    Attributes:
        upper: Upper position limit [rad or m] (``1e15`` for none).
        negated_lower: Minus the lower position limit (``1e15`` for none).
        velocity: Velocity limit ``V`` [rad/s].
        acceleration_dt: ``A dt`` [rad/s] (inf without acceleration limits).
        brake_dt: ``B dt``, the braking deceleration of bound (B) times ``dt``.
        two_brake: ``2 B``.
        half_brake_dt: ``B dt / 2``.
        jerk_step: ``w = J dt²`` [rad/s], the velocity change per tick of a jerk step.
        jerk_step_squared: ``w²``.
        two_jerk_step: ``2 w``.
        inv_dt: ``1 / dt`` [1/s].
        has_acceleration: Acceleration limits are enforced.
        has_jerk: Jerk limits are enforced.
    """

    upper: np.ndarray
    negated_lower: np.ndarray
    velocity: np.ndarray
    acceleration_dt: np.ndarray
    brake_dt: np.ndarray
    two_brake: np.ndarray
    half_brake_dt: np.ndarray
    jerk_step: np.ndarray
    jerk_step_squared: np.ndarray
    two_jerk_step: np.ndarray
    inv_dt: np.ndarray
    has_acceleration: bool
    has_jerk: bool

    def __post_init__(self) -> None:
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                _readonly(value)


class MotionLimitFilter:
    """Admissible box for the next commanded joint velocity under all four limit sets.

    The filter follows the commands sent at the controller period ``dt`` (see the module
    docstring for the definitions and the math). On each tick:

    1. :meth:`bounds` returns ``(v_lower, v_upper)``: every velocity ``v`` in that box, sent as
       the next command ``q_k = q_{k-1} + v dt``, satisfies the position, velocity,
       acceleration and jerk limits at tick k and leaves a state from which the joint can
       still be stopped inside its range (so the next box is not empty either).
    2. :meth:`update` records the velocity actually sent.

    :meth:`step` does both with a desired velocity clipped into the box.

    In a QP (differential IK), use the box as bounds on the joint velocities, intersected with
    any others; clip the solution into the box before :meth:`update` (solver tolerances). When
    no solution is available, do not hold the previous position (an instant stop breaks the
    acceleration and jerk limits): send ``step(zeros)``, the admissible command closest to
    standing still, which brakes as fast as the limits allow. For a continuous joint, ``q``
    is its angle, unwrapped (only differences matter when it has no position limits).

    The box is never empty (``v_lower <= v_upper`` always). When the state is not viable
    (after a reset outside the limits) it collapses toward the command that recovers fastest;
    :attr:`recovering` tells when that happened on the last :meth:`bounds` call.

    Args:
        limits: The joint limits.
        dt: Controller period [s].
        margin: Relative safety margin: every limit is shrunk by this fraction (position
            limits by this fraction of the range) to absorb floating-point rounding.

    Raises:
        ValueError: If ``dt`` is not finite and positive or ``margin`` not in [0, 0.1].
    """

    def __init__(self, limits: MotionLimits, dt: float, *, margin: float = 1e-6) -> None:
        if not isinstance(limits, MotionLimits):
            raise InputError(f"limits must be a MotionLimits, got {type(limits).__name__}")
        dt = real_number(dt, "dt", low=0.0, low_open=True)
        margin = real_number(margin, "margin", low=0.0, high=0.1)
        self._limits = limits
        self._dt = dt
        self._margin = margin
        n = limits.num_joints
        self._n = n
        shrink = 1.0 - margin
        lower, upper = limits.lower, limits.upper
        finite = np.isfinite(lower) & np.isfinite(upper)
        pad = np.where(finite, margin * (upper - lower), 0.0)
        lower = np.where(np.isfinite(lower), lower + pad, -_FAR)
        upper = np.where(np.isfinite(upper), upper - pad, _FAR)
        vel = limits.velocity * shrink
        acc = np.full(n, np.inf) if limits.acceleration is None else limits.acceleration * shrink
        jerk = None if limits.jerk is None else limits.jerk * shrink
        # Bound (B) brakes slightly below the acceleration limit, so that the braking command
        # lies strictly inside the acceleration box instead of on its edge.
        brake = np.minimum(acc * _BRAKE_FRACTION, vel / (4.0 * dt))
        w = np.full(n, np.inf)  # velocity change per tick of a jerk step
        if jerk is not None:
            span = np.where(finite, upper - lower, np.inf)
            brake = np.minimum(brake, 0.5 * np.sqrt(jerk * vel))
            brake = np.minimum(brake, 0.5 * np.cbrt(span * jerk**2))
            w = jerk * dt * dt
        self._has_acc = limits.acceleration is not None
        self._has_jerk = jerk is not None
        self._constants = FilterConstants(
            upper=upper,
            negated_lower=-lower,
            velocity=vel,
            acceleration_dt=acc * dt,
            brake_dt=brake * dt,
            two_brake=2.0 * brake,
            half_brake_dt=0.5 * (brake * dt),
            jerk_step=w,
            jerk_step_squared=w * w,
            two_jerk_step=2.0 * w,
            inv_dt=np.full(n, 1.0 / dt),
            has_acceleration=self._has_acc,
            has_jerk=self._has_jerk,
        )
        # Mirrored ("upper side") constants: row 0 is the joint, row 1 its mirror image.
        c = self._constants
        self._h2 = np.stack([c.upper, c.negated_lower])
        self._vel2 = np.stack([vel, vel])
        self._adt2 = np.stack([c.acceleration_dt] * 2)
        self._bdt2 = np.stack([c.brake_dt] * 2)
        self._two_acc2 = np.stack([c.two_brake] * 2)
        self._half_adt2 = np.stack([c.half_brake_dt] * 2)
        self._inv_dt2 = np.stack([c.inv_dt] * 2)
        rows = 4 if self._has_acc else 2
        self._w = np.stack([w] * rows)
        self._wsq = self._w * self._w
        self._two_w = 2.0 * self._w
        self._w2 = self._w[:2]
        # State (mirrored stacks) and work buffers.
        self._ready = False
        self._q2 = np.zeros((2, n))
        self._v2 = np.zeros((2, n))
        self._a2 = np.zeros((2, n))
        self._dyn2 = np.zeros((2, n))  # upper bounds from acceleration and jerk
        self._dyn_lo2 = np.zeros((2, n))
        self._dt2 = np.full((2, n), dt)
        self._zero = np.zeros((rows, n))
        self._zero2 = self._zero[:2]
        self._g = np.zeros((rows, n))
        self._t = np.zeros((rows, n))
        self._off = np.zeros((rows, n))  # v_{k-1} (velocity rows), v_{k-1} - B dt (braking)
        self._r2 = np.zeros((2, n))
        self._p2 = np.zeros((2, n))
        self._m2 = np.zeros((2, n))
        self._vc2 = np.zeros((2, n))
        self._qn2 = np.zeros((2, n))
        self._vn2 = np.zeros((2, n))
        self._recovering = False
        self._fresh = False

    # ------------------------------------------------------------------ properties

    @property
    def limits(self) -> MotionLimits:
        """The limits given at construction."""
        return self._limits

    @property
    def dt(self) -> float:
        """Controller period [s]."""
        return self._dt

    @property
    def margin(self) -> float:
        """Relative safety margin."""
        return self._margin

    @property
    def constants(self) -> FilterConstants:
        """The per-joint constants the bounds are computed with (read-only arrays)."""
        return self._constants

    @property
    def q(self) -> np.ndarray:
        """Last commanded position ``q_{k-1}`` (a copy)."""
        self._require_reset()
        return self._q2[0].copy()

    @property
    def v(self) -> np.ndarray:
        """Last commanded velocity ``v_{k-1}`` (a copy)."""
        self._require_reset()
        return self._v2[0].copy()

    @property
    def a(self) -> np.ndarray:
        """Last commanded acceleration ``a_{k-1}`` (a copy)."""
        self._require_reset()
        return self._a2[0].copy()

    @property
    def recovering(self) -> bool:
        """True when the last :meth:`bounds` could not meet every constraint.

        This happens only from a state that is not viable (outside the limits, or too fast
        toward one); the box then holds the fastest recovery command.
        """
        return self._recovering

    # ------------------------------------------------------------------ state

    def _require_reset(self) -> None:
        if not self._ready:
            raise RuntimeError("MotionLimitFilter: call reset(q) before using the filter")

    def reset(
        self,
        q: np.ndarray | Sequence[float],
        v: np.ndarray | Sequence[float] | float | None = None,
        a: np.ndarray | Sequence[float] | float | None = None,
    ) -> None:
        """Set the state before the next command.

        Args:
            q: Current commanded joint positions [rad or m], shape ``(N,)``.
            v: Current joint velocities [rad/s] (default 0: at rest).
            a: Current joint accelerations [rad/s²] (default 0).

        Raises:
            ValueError: If a shape is wrong or a value is not finite; the filter is unchanged.
        """
        n = self._n
        q_arr = _as_vector(q, n, "q", finite=True)
        v_arr = np.zeros(n) if v is None else _as_vector(v, n, "v", finite=True)
        a_arr = np.zeros(n) if a is None else _as_vector(a, n, "a", finite=True)
        self._q2[0] = q_arr
        np.negative(q_arr, out=self._q2[1])
        self._v2[0] = v_arr
        np.negative(v_arr, out=self._v2[1])
        self._a2[0] = a_arr
        np.negative(a_arr, out=self._a2[1])
        self._ready = True
        self._prepare(self._a2 * self._dt)

    def update(self, v: np.ndarray | Sequence[float]) -> None:
        """Record the velocity command sent on this tick: ``q_k = q_{k-1} + v dt``.

        The state is then re-derived from the rounded position exactly as
        :func:`check_trajectory` differentiates it, so both see the same numbers.

        Raises:
            ValueError: If ``v`` has the wrong shape or is not finite; the filter is unchanged.
            RuntimeError: Before :meth:`reset`.
        """
        if not self._ready:
            self._require_reset()
        v = np.asarray(v, dtype=np.float64)
        if v.shape != (self._n,):
            raise InputError(f"v must have shape ({self._n},), got {v.shape}")
        if not math.isfinite(sum(v.tolist())) and not np.isfinite(v).all():
            raise InputError(f"v must be finite, got {v.tolist()}")
        dt = self._dt2
        step2, qn2, vn2, du2 = self._vc2, self._qn2, self._vn2, self._a2
        step2[0] = v
        _negative(v, step2[1])
        _multiply(step2, dt, step2)
        _add(self._q2, step2, qn2)  # q_k (row 1: -q_k, a bit-exact mirror)
        _subtract(qn2, self._q2, vn2)
        _divide(vn2, dt, vn2)  # v_k, exactly as the checker computes it
        _subtract(vn2, self._v2, du2)  # a_k dt
        self._q2, self._qn2 = qn2, self._q2
        self._v2, self._vn2 = vn2, self._v2
        self._prepare(du2)
        _divide(du2, dt, du2)  # a_k, exactly as the checker computes it

    def _prepare(self, du2: np.ndarray) -> None:
        """Precompute what the next :meth:`bounds` needs from the state; ``du2 = a dt``."""
        v2 = self._v2
        dyn = self._dyn2
        if self._has_acc:
            # Acceleration box [v - A dt, v + A dt]; jerk box [c - W, c + W], c = v + a dt.
            # When they do not meet (only after a reset with |a| > A) the jerk box wins.
            _add(v2, self._adt2, dyn)  # v + A dt
            if self._has_jerk:
                c, tmp = self._vc2, self._dyn_lo2
                _add(v2, du2, c)
                _add(c, self._w2, tmp)  # c + W
                _minimum(dyn, tmp, out=dyn)
                _subtract(c, self._w2, tmp)  # c - W
                _maximum(dyn, tmp, out=dyn)
        else:
            dyn.fill(np.inf)
        off = self._off
        off[0:2] = v2
        if self._has_acc:
            _subtract(v2, self._bdt2, off[2:4])
        self._fresh = False

    # ------------------------------------------------------------------ bounds

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The admissible box ``(v_lower, v_upper)`` for the next commanded velocity [rad/s].

        Returns new arrays of shape ``(N,)`` with ``v_lower <= v_upper``.

        Raises:
            RuntimeError: Before :meth:`reset`.
        """
        if not self._fresh:
            if not self._ready:
                self._require_reset()
            self._compute()
        m = self._m2
        return _negative(m[1]), m[0].copy()

    def _compute(self) -> None:
        """Fill ``self._m2`` with ``[v_upper, -v_lower]``."""
        g, t, r, p, m = self._g, self._t, self._r2, self._p2, self._m2
        v2 = self._v2
        # Velocity rows: v <= v_{k-1} + h(V - v_{k-1}), i.e. v + max(a, 0)²/(2J) <= V.
        _subtract(self._vel2, v2, g[0:2])
        # Next position inside the range: v <= (upper - q_{k-1}) / dt.
        _subtract(self._h2, self._q2, r)
        _multiply(r, self._inv_dt2, p)
        if self._has_acc:
            # Braking rows, bound (B): with w = v - v_{k-1} + B dt,
            # w + max(w, 0)²/(2W) <= sqrt(2 B r) + B dt/2 - v_{k-1}.
            gb = g[2:4]
            _maximum(r, self._zero2, out=gb)
            _multiply(gb, self._two_acc2, gb)
            _sqrt(gb, gb)
            _add(gb, self._half_adt2, gb)
            _subtract(gb, v2, gb)
        if self._has_jerk:
            # h(G) = max x with x + max(x, 0)²/(2W) <= G = min(G, sqrt(W² + 2 W max(G, 0)) - W)
            _maximum(g, self._zero, out=t)
            _multiply(t, self._two_w, t)
            _add(t, self._wsq, t)
            _sqrt(t, t)
            _subtract(t, self._w, t)
            _minimum(g, t, out=g)
        _add(g, self._off, g)  # upper bounds on v (rows 1, 3: on -v)
        _minimum(self._dyn2, g[0:2], out=m)
        _minimum(m, p, out=m)
        if self._has_acc:
            _minimum(m, g[2:4], out=m)
        d = self._vn2  # scratch: v_upper - v_lower
        _add(m[0], m[1], d[0])
        if min(d[0].tolist(), default=0.0) >= 0.0:
            self._recovering = False
        else:
            self._recover()
        self._fresh = True

    def _recover(self) -> None:
        """Meet the constraints level by level, nearest point first (not-viable states)."""
        g, p = self._g, self._p2
        r = self._r2
        v = self._v2[0]
        # Level 1: acceleration and jerk (prepared in _prepare, never crossing).
        lo = np.negative(self._dyn2[1])
        hi = self._dyn2[0].copy()
        tol = 1e-9 * self._vel2[0]
        crossed = False

        def meet(
            lo: np.ndarray, hi: np.ndarray, c_lo: np.ndarray, c_hi: np.ndarray, favor_hi: Any
        ) -> tuple[np.ndarray, np.ndarray, bool]:
            bad = c_lo > c_hi
            if bad.any():  # the level contradicts itself: keep the favoured side
                c_lo = np.where(bad & favor_hi, c_hi, c_lo)
                c_hi = np.where(bad & ~favor_hi, c_lo, c_hi)
            new_lo = np.minimum(np.maximum(lo, c_lo), hi)
            new_hi = np.maximum(np.minimum(hi, c_hi), lo)
            miss = bool(((c_lo - hi) > tol).any() or ((lo - c_hi) > tol).any() or bad.any())
            return new_lo, new_hi, miss

        lo, hi, miss = meet(lo, hi, -g[1], g[0], v > 0.0)
        crossed |= miss
        lo, hi, miss = meet(lo, hi, -p[1], p[0], r[0] < r[1])
        crossed |= miss
        if self._has_acc:
            lo, hi, miss = meet(lo, hi, -g[3], g[2], r[0] < r[1])
            crossed |= miss
        self._m2[0] = hi
        np.negative(lo, self._m2[1])
        self._recovering = crossed

    # ------------------------------------------------------------------ convenience

    def clip(self, v_desired: np.ndarray | Sequence[float]) -> np.ndarray:
        """``v_desired`` clipped into :meth:`bounds`."""
        lower, upper = self.bounds()
        return np.minimum(np.maximum(np.asarray(v_desired, dtype=np.float64), lower), upper)

    def step(self, v_desired: np.ndarray | Sequence[float]) -> np.ndarray:
        """Clip ``v_desired`` into the box, record it with :meth:`update` and return it."""
        v = self.clip(v_desired)
        self.update(v)
        return v

    def next_position(self, v: np.ndarray) -> np.ndarray:
        """The position ``q_{k-1} + v dt`` that command ``v`` leads to."""
        self._require_reset()
        return self._q2[0] + np.asarray(v, dtype=np.float64) * self._dt
