r"""The approach policy of :meth:`~pinkctl.motion.MotionShaper.follow` (acceleration limits only).

It is *transparent*: while the tasks' velocities ``v*`` form a sequence inside the limits, the
command is ``v*`` itself, bit for bit. When a limit binds:

1. the reference motion: for a moving target, the tasks' velocity is split into the motion
   of the target ``f`` and a gap ``g`` the command has not closed yet: the part of the last
   ``v*`` the command did not take, ``g = gain (v*_{k-1} - v_{k-1})`` (the QP asks for it
   again, times its gain), and ``f = v* - g``. For a fixed target (and on the first tick
   after ``reset``, ``commit`` or ``brake``, and when ``f`` breaks the
   velocity limits: a target that jumped) ``f = 0`` and ``g = v*``;
2. one factor ``s`` for every joint closes the gap at a speed each joint can still stop
   from, relative to the reference, within the motion left ``d = |g| dt / gain``: braking
   at ``A/2`` after a jerk-limited ramp of ``A/J + dt`` seconds stops from ``|u|``
   within ``u^2 / A + u (A/J + dt) <= d``, hence

   .. math::

       s \le \frac{2\,dt}{\sqrt{\gamma^2 T^2 + 4 \gamma |g| dt / A} + \gamma T},
       \quad T = A/J + dt

   (``gamma`` the gain), written without the difference of square roots that cancels to 0
   for tiny gaps. A gap the joint can close in one tick (``|g| <= min(A dt, J dt^2) / 2``)
   is closed at once (dead-beat): then ``s = 1`` and the command is ``v*``;
3. the wanted command ``f + s g`` is scaled, keeping its direction, into the velocity
   limits;
4. the command moves from the admissible velocity nearest the last one toward it, by one
   fraction ``alpha`` for every joint: the largest the box allows. No joint is clipped on
   its own, so the direction of the change, in joint space and hence in task space, is the
   tasks' one and the null space is not stirred;
5. anti-windup, fixed targets only: while a cut keeps a joint from reversing, the loop gain
   ``loop_scale`` shrinks (:data:`~pinkctl.motion.HOLD_WINDUP_DECAY`, not below the gain
   the slowest jerk ramp can follow, ``2 dt / max(T)``) and grows back once free
   (:data:`~pinkctl.motion.HOLD_WINDUP_RECOVERY`): near a singular direction the dead-beat
   step turns over from tick to tick, and jerk-limited joints that cannot follow it fall
   into a limit cycle (a UR10 3.6 cm from its target: 1 mm, 0.16 rad/s, forever) unless
   the loop slows down.
   A moving target restarts the loop at gain 1.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PINNED", "closing_factor", "toward"]

#: The share of its step below which a joint's room in its box counts as none (pinned).
PINNED = 1e-6


def closing_factor(
    gap: np.ndarray,
    gain: float,
    dt: float,
    ramp: np.ndarray,
    acceleration: np.ndarray,
    deadbeat: np.ndarray,
) -> float:
    """The factor ``s`` in ``(0, 1]`` that closes ``gap`` [rad/s] within the braking envelope
    (item 2); 1 for ``gain <= 0``.

    Args:
        gap: The gap ``g`` per joint [rad/s].
        gain: The tasks' gain.
        dt: Control period [s].
        ramp: ``A/J + dt`` per joint [s].
        acceleration: ``A`` per joint [rad/s^2].
        deadbeat: The gap closed at once per joint [rad/s], ``min(A dt, J dt^2) / 2``.
    """
    if gain <= 0.0:
        return 1.0
    speed = np.abs(gap)
    g_ramp = gain * ramp
    root = np.sqrt(g_ramp * g_ramp + (4.0 * gain * dt) * speed / acceleration)
    envelope = (2.0 * dt) / (root + g_ramp)
    at_once = deadbeat / np.maximum(speed, deadbeat)  # 1: closed in one tick
    return min(1.0, *np.maximum(envelope, at_once).tolist())


def toward(
    last: np.ndarray, target: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> tuple[np.ndarray, float]:
    """The velocity ``c + alpha (target - c)`` with ``c`` the admissible velocity nearest
    ``last`` and ``alpha`` the largest fraction in ``[0, 1]`` the box ``[lower, upper]`` allows
    on every joint (item 4); ``target`` itself when it is in the box. Returns it and ``alpha``.

    A joint *pinned* in the step's direction (at rest on the edge of its box, with room for
    less than :data:`PINNED` of its step: a knee at its position limit whose braking bound
    leaves it no motion that way) keeps its edge and ``alpha`` is the other joints' largest:
    otherwise one such joint would freeze every other joint at its last velocity, tick after
    tick, for as long as the tasks ask it to move on."""
    start = np.minimum(np.maximum(last, lower), upper)
    step = target - start
    room = np.where(step > 0.0, upper - start, lower - start)
    ratios = np.divide(room, step, out=np.ones_like(step), where=step != 0.0)
    fraction = max(0.0, min(1.0, *ratios.tolist()))
    if fraction < PINNED:
        edge = np.abs(np.where(step > 0.0, upper, lower))
        pinned = (ratios < PINNED) & (edge <= PINNED * np.abs(step))
        if np.count_nonzero(pinned):  # the others move; the pinned ones keep their edge
            fraction = min(1.0, *np.where(pinned, 1.0, ratios).tolist())
    if fraction == 1.0:
        command = target
    else:
        command = step * fraction
        command += start
    return np.minimum(np.maximum(command, lower), upper), fraction
