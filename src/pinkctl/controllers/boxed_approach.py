"""The approach policy of a tick with collision rows (:attr:`TickMode.BOXED
<pinkctl.controllers.tick_mode.TickMode>`, acceleration limits only).

A tick without rows hands the tasks' velocity to the shaper's
:meth:`~pinkctl.motion.MotionShaper.follow`, whose approach policy
(:mod:`pinkctl.motion.approach`) closes the gap to the target within a braking envelope. A
tick with rows used to commit the QP's velocity inside the shaper's box instead: the tasks'
dead-beat velocity, clipped to the box every tick, is a bang-bang signal with no braking
planned, so the arm overshot and wandered (franka beside a box: 20-90 mm from a reachable
target at up to 2 rad/s, forever), and a round-off difference, once on the box's edge, was
integrated without feedback (``tests/test_collision_check.py``). :class:`BoxedApproach`
gives these ticks the same policy:

1. ``v*``: the tasks' velocity with the collision rows and the range limits only (no
   velocity box, as a tick without rows), a QP compiled once;
2. the approach of :meth:`~pinkctl.motion.MotionShaper.follow` (items 1-4 of
   :mod:`~pinkctl.motion.approach`): the gap to the reference motion closed within the
   braking envelope, the velocity limits kept in direction, the command moved from the last
   velocity toward it as far as the shaper's box allows; the reference motion is the
   previous tick's when that tick was one of these, else none (a fixed target);
3. when the command breaks a row, the nearest velocity of the box that meets every row
   (a small QP over rates [m/s]: over a step's displacement, the solver's feasibility
   tolerance was the jerk box's whole width, and ur5's elbow kept its speed through the
   margin of ``upper_arm - wrist_1``, commands 21 mm deep).

None (the caller then solves the QP with the rows inside the box, as before) when a QP has no
solution: rows that conflict go to the caller's relaxation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import qpsolvers
from pink import Configuration

from ..motion.approach import closing_factor, toward
from ..qp import CollisionRows, QPSolveError, TickQP
from .tick_mode import TickMode

if TYPE_CHECKING:
    import pinocchio as pin
    from pink.limits import Limit

    from ..motion.shaper import MotionShaper
    from ._arguments import QPSettings
    from .ik_problem import IKProblem

__all__ = ["BoxedApproach"]


class BoxedApproach:
    """The approach policy of the ticks with collision rows (module docstring).

    Args:
        qp: The tasks' QP with the range limits and the collision rows (no velocity box).
        shaper: The controller's motion shaper (acceleration limits set).
        gain: The frame task's gain.
    """

    def __init__(self, qp: TickQP, tasks: TickQP, shaper: MotionShaper, gain: float) -> None:
        self.qp, self.tasks, self._shaper, self.gain = qp, tasks, shaper, gain
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # (v*, command) of the last
        #: The tasks' velocity without the rows on this tick, or None (not one of these
        #: ticks): a row it breaks holds the command back (the controller's status BLOCKED).
        self.desired: np.ndarray | None = None

    @classmethod
    def compile(
        cls,
        problem: IKProblem,
        model: pin.Model,
        columns: np.ndarray,
        settings: QPSettings,
        limit: Limit,
        shaper: MotionShaper,
    ) -> BoxedApproach | None:
        """The policy of a controller (its problem over the QP variables ``columns``, its
        collision limit), or None without acceleration limits (the box is then the velocity
        and range limits: no braking to plan)."""
        if not shaper.smooth:
            return None
        qp = problem.compile(model, columns, TickMode.APPROACH, settings, limit)
        tasks = problem.compile(model, columns, TickMode.APPROACH, settings)
        gain = float(problem.frame.gain) if problem.frame is not None else 1.0
        return cls(qp, tasks, shaper, gain)

    def velocity(
        self,
        configuration: Configuration,
        dt: float,
        rows: CollisionRows,
        columns: np.ndarray,
        box: tuple[np.ndarray, np.ndarray],
    ) -> np.ndarray | None:
        """This tick's velocity of the QP variables (module docstring), inside ``box`` and
        meeting ``rows`` (over ``columns``), or None."""
        shaper, gain = self._shaper, self.gain
        self.desired = None
        try:
            wanted = self.qp.solve(configuration, dt)
            desired = self.tasks.solve(configuration, dt)
        except QPSolveError:
            self._last = None
            return None
        last, self._last = self._last, None  # the last tick was one of these, below
        limits = shaper._velocity_limit
        gap = wanted
        if last is not None and np.allclose(last[1], shaper.velocity, rtol=0.0, atol=1e-9):
            gap = gain * (last[0] - last[1])
            if max((np.abs(wanted - gap) - limits).tolist()) > 0.0:  # a target that jumped
                gap = wanted
        closing = closing_factor(
            gap, gain, dt, shaper._ramp, shaper._acceleration, shaper._deadbeat
        )
        target = wanted - (1.0 - closing) * gap if closing < 1.0 else wanted
        scale = min((limits / np.maximum(np.abs(target), 1e-300)).tolist())
        if scale < 1.0:
            target = target * scale
        lower, upper = box
        command, _ = toward(shaper.velocity, target, lower, upper)
        # over rates, not a step's displacement: a solver's feasibility tolerance (1e-6) in
        # metres per step is 5e-4 m/s at 500 Hz, the jerk box's whole width on a link a
        # third of a metre out (ur5's elbow held its speed into upper_arm-wrist_1)
        G, h = rows.G[:, columns], rows.h / dt
        if np.count_nonzero(G @ command > h):
            nearest = qpsolvers.solve_qp(
                np.eye(command.size), -command, G, h, lb=lower, ub=upper, solver="daqp"
            )
            if nearest is None:
                return None
            command = np.minimum(np.maximum(nearest, lower), upper)
        self._last, self.desired = (wanted, command), desired
        return command
