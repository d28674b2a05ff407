"""MotionShaper: the single owner of a controller's command sequence.

A robot's interface (libfranka, a UR controller, a servo bus) differentiates the *commands* it
receives and rejects a sequence that breaks a position, velocity, acceleration or jerk limit.
What the controller measures only tells it where to linearise its tasks; it must never make
the command jump. :class:`MotionShaper` therefore keeps the last command ``q_{k-1}`` and turns
whatever the controller wants on a tick into the next command ``q_k = q_{k-1} + v dt`` with
``v`` inside the admissible box:

- with acceleration limits (``MotionLimits.acceleration`` set), the box of
  :class:`~pinkctl.motion.MotionLimitFilter`: position, velocity, acceleration and
  jerk limits, and a state from which every joint can still brake inside its range;
- without them, ``|v| <= v_max`` and the position range (a joint outside its range, e.g.
  after a reset there, may only move back toward it).

Three entry points, one per kind of tick:

- :meth:`MotionShaper.follow`: the tasks want joint velocity ``v*`` (wherever the QP
  linearised: the last command or the measurement); the shaper approaches it (see below);
- :meth:`MotionShaper.commit`: the caller already solved inside :meth:`MotionShaper.box`
  (QP rows that must keep holding, e.g. barriers); the shaper records the command;
- :meth:`MotionShaper.brake`: the tick could not be solved (infeasible QP, no estimate, a
  failing callback): the next step of a braking profile, ``v`` the admissible velocity
  closest to 0. A joint under acceleration and jerk limits comes to rest within
  ``v/A + A/J`` seconds plus a few ticks, never with an instant stop.

Approach policy of :meth:`MotionShaper.follow` (acceleration limits only): see
:mod:`pinkctl.motion.approach`. It is *transparent* (while the tasks' velocities form a
sequence inside the limits, the command is that sequence, bit for bit) and, where a limit
binds, it keeps the direction of the tasks' motion instead of clipping joint by joint.

All arrays are over the shaper's joints, in the order of ``limits.joint_names``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from .approach import closing_factor, toward
from .filter import MotionLimitFilter
from .limits import MotionLimits
from .native import NativeShaperKernel, native_available

__all__ = [
    "HOLD_WINDUP_DECAY",
    "HOLD_WINDUP_RECOVERY",
    "MotionShaper",
    "SATURATION_TOLERANCE",
]

#: Fixed target: factor per tick that a cut keeps a joint from reversing (a curved joint path
#: reverses a joint now and then, a limit cycle does it every few ticks; measured at 1 kHz:
#: UR10 settles in 0.2 s, SO-101 position-only in 3 s).
HOLD_WINDUP_DECAY = 0.99
#: Fixed target: factor per tick without such a cut (from 0.04 back to 1 in 320 ticks).
HOLD_WINDUP_RECOVERY = 1.01
#: A cut counts as saturation above this fraction of ``1 + max |wanted|`` [rad/s].
SATURATION_TOLERANCE = 1e-6


class MotionShaper:
    """Owns the command sequence of a set of joints (see the module docstring).

    Args:
        limits: The joints' limits. With ``acceleration`` set, all four limit sets are
            enforced (``MotionLimitFilter``); without it, position and velocity.
        dt: Control period [s], finite and > 0.
        native: Run the filter and :meth:`follow` in the native kernel
            (:mod:`pinkctl.motion.native`; same commands, bit for bit): None uses it when it
            is available, True requires it, False runs the Python path.

    Raises:
        ValueError: If ``limits`` is not a :class:`MotionLimits` or ``dt`` is not positive,
            or ``native=True`` without the kernel.
    """

    def __init__(self, limits: MotionLimits, dt: float, *, native: bool | None = None) -> None:
        if not isinstance(limits, MotionLimits):
            raise InputError(f"limits must be a MotionLimits, got {type(limits).__name__}")
        if native not in (None, True, False):
            raise InputError(f"native must be None, True or False, got {native!r}")
        self._filter: MotionLimitFilter | NativeShaperKernel | None = None
        self._native: NativeShaperKernel | None = None
        if limits.acceleration is not None:
            reference = MotionLimitFilter(limits, dt)
            self._filter = reference
        self._limits = limits
        self._dt = float(dt)
        self._lower = np.asarray(limits.lower, dtype=np.float64)
        self._upper = np.asarray(limits.upper, dtype=np.float64)
        self._velocity_limit = np.asarray(limits.velocity, dtype=np.float64)
        self._negative_velocity_limit = -self._velocity_limit
        self._position: np.ndarray | None = None
        self._velocity = np.zeros(limits.num_joints)
        self._loop_scale = 1.0
        self._scale = 1.0
        self._min_loop_scale = 1.0
        self._ramp = np.zeros(0)
        self._acceleration = np.zeros(0)
        self._deadbeat = np.zeros(0)
        # follow's reference motion: the part of the last v* the command did not take, and
        # whether the last tick was a follow (else the reference is at rest)
        self._lag = np.zeros(limits.num_joints)
        self._follows = False
        if limits.acceleration is not None:
            self._acceleration = np.asarray(limits.acceleration, dtype=np.float64)
            ramp = np.zeros_like(self._acceleration)
            if limits.jerk is not None:
                ramp = self._acceleration / limits.jerk
            self._ramp = ramp + self._dt
            # the loop gain the slowest acceleration ramp can follow without ringing
            self._min_loop_scale = min(1.0, 2.0 * self._dt / float(np.max(self._ramp)))
            constants = reference.constants
            # a gap closed in one tick: half the acceleration (and jerk) step of a tick
            self._deadbeat = 0.5 * np.minimum(constants.acceleration_dt, constants.jerk_step)
            if native or (native is None and native_available()[0]):
                self._native = NativeShaperKernel(
                    reference,
                    velocity_limit=self._velocity_limit,
                    ramp=self._ramp,
                    acceleration=self._acceleration,
                    min_loop_scale=self._min_loop_scale,
                    windup=(HOLD_WINDUP_DECAY, HOLD_WINDUP_RECOVERY),
                    saturation_tolerance=SATURATION_TOLERANCE,
                )
                self._filter = self._native

    # ------------------------------------------------------------------ properties
    @property
    def limits(self) -> MotionLimits:
        """The limits enforced on the command sequence."""
        return self._limits

    @property
    def dt(self) -> float:
        """Control period [s]."""
        return self._dt

    @property
    def native(self) -> bool:
        """True when the native kernel runs the filter and :meth:`follow`."""
        return self._native is not None

    @property
    def smooth(self) -> bool:
        """True when acceleration (and jerk) limits are enforced."""
        return self._filter is not None

    @property
    def ready(self) -> bool:
        """True once :meth:`reset` gave the sequence a start."""
        return self._position is not None

    @property
    def position(self) -> np.ndarray:
        """The last command ``q_{k-1}`` [rad or m] (read-only).

        Raises:
            RuntimeError: Before :meth:`reset`.
        """
        if self._position is None:
            raise RuntimeError("MotionShaper: call reset() first")
        return self._position

    @property
    def velocity(self) -> np.ndarray:
        """Velocity of the last command ``(q_{k-1} - q_{k-2}) / dt`` [rad/s] (read-only)."""
        return self._velocity

    @property
    def at_rest(self) -> bool:
        """True when the last command did not move (and, with motion limits, is not
        accelerating)."""
        if self._filter is not None and self._position is not None:
            return not (np.any(self._filter.v) or np.any(self._filter.a))
        return not np.any(self._velocity)

    @property
    def scale(self) -> float:
        """The share of the wanted velocity :meth:`follow` took on the last tick, in ``[0, 1]``
        (1 when the command is the wanted velocity; else the fraction of the step toward it
        times the velocity-limit and, for a fixed target, the braking factor). A caller moving
        other coordinates along, such as a floating base, scales them alike."""
        return self._native.scale if self._native is not None else self._scale

    @property
    def loop_scale(self) -> float:
        """The anti-windup loop-gain factor in ``(0, 1]`` (see the module docstring)."""
        return self._native.loop_scale if self._native is not None else self._loop_scale

    # ------------------------------------------------------------------ sequence
    def reset(self, positions: np.ndarray | Sequence[float]) -> None:
        """Start the sequence at rest at ``positions`` (the measured joint positions).

        Raises:
            ValueError: Wrong shape or a non-finite value; the shaper is unchanged.
        """
        q = np.array(positions, dtype=np.float64)
        if q.shape != (self._limits.num_joints,) or not np.isfinite(q).all():
            raise InputError(
                f"positions must be {self._limits.num_joints} finite numbers, got {q.tolist()}"
            )
        if self._filter is not None:
            self._filter.reset(q)
        q.setflags(write=False)
        self._position = q
        self._velocity = np.zeros_like(q)
        self._velocity.setflags(write=False)
        self._loop_scale = 1.0
        self._follows = False
        if self._native is not None:
            self._native.loop_scale = 1.0

    def rewind(self, turns: np.ndarray) -> None:
        """Shift the last command by ``2 pi turns`` (whole turns, joints without a range).

        A continuous joint's angle is only known up to whole turns: when the measurement is
        a turn or more away from the command (a sensor that unwraps differently), the
        sequence is re-anchored on the measured winding. Velocity and acceleration are kept.

        Raises:
            ValueError: If ``turns`` is not integral, or non-zero on a joint with a range.
        """
        q = self.position
        turns = np.asarray(turns, dtype=np.float64)
        if turns.shape != q.shape or not np.array_equal(turns, np.round(turns)):
            raise InputError(f"turns must be {q.size} whole numbers, got {turns.tolist()}")
        if np.any((turns != 0.0) & (np.isfinite(self._lower) | np.isfinite(self._upper))):
            raise InputError("only joints without position limits can be rewound")
        shifted = q + 2.0 * np.pi * turns
        if self._filter is not None:
            self._filter.reset(shifted, self._filter.v, self._filter.a)
        shifted.setflags(write=False)
        self._position = shifted

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """Admissible command velocities ``(lower, upper)`` [rad/s] for this tick.

        ``lower <= upper`` always; a command in the box keeps every enforced limit.
        """
        q = self.position
        if self._filter is not None:
            return self._filter.bounds()
        dt = self._dt
        # a joint outside its range (started there) may only move back toward it
        lower = np.maximum(-self._velocity_limit, (np.minimum(self._lower, q) - q) / dt)
        upper = np.minimum(self._velocity_limit, (np.maximum(self._upper, q) - q) / dt)
        return lower, upper

    def commit(self, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Send ``q_k = q_{k-1} + v dt`` with ``v`` clipped into :meth:`box`.

        Returns:
            The command positions ``q_k`` and velocity ``(q_k - q_{k-1}) / dt`` (read-only).
        """
        self._follows = False
        if self._native is not None:
            return self._record(*self._native.commit(velocity))
        if self._filter is not None:
            lower, upper = self._filter.bounds()
            return self._send(np.minimum(np.maximum(velocity, lower), upper))
        q = self.position
        v = np.minimum(velocity, self._velocity_limit)
        np.maximum(v, self._negative_velocity_limit, out=v)
        positions = v * self._dt
        positions += q
        if np.count_nonzero(positions > self._upper) or np.count_nonzero(positions < self._lower):
            # a joint outside its range (started there) may only move back toward it
            np.minimum(positions, np.maximum(self._upper, q), out=positions)
            np.maximum(positions, np.minimum(self._lower, q), out=positions)
            v = (positions - q) / self._dt
        return self._record(positions, v)

    def _send(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Record ``v`` (inside the filter's box) as the next command."""
        assert self._filter is not None
        self._filter.update(v)
        return self._record(self._filter.q, self._filter.v)

    def _record(self, positions: np.ndarray, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        positions.setflags(write=False)
        velocity.setflags(write=False)
        self._position = positions
        self._velocity = velocity
        return positions, velocity

    def brake(self) -> tuple[np.ndarray, np.ndarray]:
        """The next step of a braking profile: the admissible velocity closest to 0.

        Without acceleration limits this holds the last command.
        """
        return self.commit(np.zeros(self._limits.num_joints))

    def follow(
        self, wanted: np.ndarray, *, holding: bool, gain: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """The next command toward the velocity ``wanted`` the tasks ask for.

        Args:
            wanted: ``v*`` [rad/s], the tasks' velocity (without the velocity limit when
                acceleration limits are enforced: see the module docstring).
            holding: The tasks' target did not move since the last tick.
            gain: The tasks' gain in ``(0, 1]`` (``v* dt / gain`` is the motion left);
                ``<= 0`` disables the braking envelope (such tasks ask for no motion).

        Returns:
            The command positions and velocity, as :meth:`commit`.
        """
        at_rest = holding or not self._follows  # the reference motion is 0
        self._follows = True
        if self._native is not None:  # the everyday tick: _record inline
            positions, velocity = self._native.follow(wanted, at_rest, gain)
            positions.setflags(write=False)
            velocity.setflags(write=False)
            self._position = positions
            self._velocity = velocity
            return positions, velocity
        if self._filter is None:
            return self.commit(wanted)
        return self._follow_filter(self._filter, wanted, at_rest, gain)

    def _follow_filter(
        self,
        limit_filter: MotionLimitFilter | NativeShaperKernel,
        wanted: np.ndarray,
        at_rest: bool,
        gain: float,
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`follow` through the Python filter (:mod:`~pinkctl.motion.approach`): close
        the gap to the reference motion within the braking envelope, keep the velocity
        limits' direction, then the filter's acceleration and jerk bounds."""
        gap = wanted
        if not at_rest:
            gap = gain * self._lag
            # a target that jumps (its motion beyond the velocity limits) is a fixed one
            at_rest = max((np.abs(wanted - gap) - self._velocity_limit).tolist()) > 0.0
            if at_rest:
                gap = wanted
        closing = closing_factor(
            gap, gain, self._dt, self._ramp, self._acceleration, self._deadbeat
        )
        if at_rest:
            closing *= self._loop_scale
        else:
            self._loop_scale = 1.0
        target = wanted - (1.0 - closing) * gap if closing < 1.0 else wanted
        # the velocity limits, keeping the direction
        limit = min((self._velocity_limit / np.maximum(np.abs(target), 1e-300)).tolist())
        if limit < 1.0:
            target = target * limit
        lower, upper = limit_filter.bounds()
        command, fraction = toward(limit_filter.v, target, lower, upper)
        self._scale = fraction * min(limit, 1.0) * (closing if at_rest else 1.0)
        if at_rest:
            self._wind(command, target, max(np.abs(wanted).tolist()))
        positions, velocity = self._send(command)
        self._lag = wanted - velocity
        return positions, velocity

    def _wind(self, command: np.ndarray, target: np.ndarray, top_speed: float) -> None:
        """Anti-windup of a fixed target (:mod:`~pinkctl.motion.approach`, item 5)."""
        cut = np.abs(command - target) * (command * target < 0.0)
        tolerance = SATURATION_TOLERANCE * (1.0 + top_speed * min(self._scale, 1.0))
        if max(cut.tolist()) > tolerance:
            self._loop_scale = max(self._min_loop_scale, HOLD_WINDUP_DECAY * self._loop_scale)
        elif self._loop_scale < 1.0:
            self._loop_scale = min(1.0, self._loop_scale * HOLD_WINDUP_RECOVERY)
