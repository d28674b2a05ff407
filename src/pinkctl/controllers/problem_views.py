"""Read access to an IK controller's QP objects: its tasks, limits, barriers and motion limits."""

from __future__ import annotations

from pink.barriers import Barrier
from pink.limits import Limit
from pink.tasks import FrameTask, PostureTask, Task

from ..motion.limits import MotionLimits
from ..motion.shaper import MotionShaper
from .ik_problem import IKProblem

__all__ = ["ProblemViews"]


class ProblemViews:
    """Mixed into :class:`~pinkctl.controllers.PinkIKController`: its QP objects."""

    _problem: IKProblem
    _shaper: MotionShaper

    def get_frame_task(self) -> FrameTask:
        """The tool-frame task (costs and target can be changed at run time)."""
        return self._problem.frame

    def get_posture_task(self) -> PostureTask | None:
        """The posture task, or None when ``posture_cost`` is 0."""
        return self._problem.posture

    @property
    def motion_limits(self) -> MotionLimits | None:
        """The acceleration/jerk limits enforced on the command sequence, or None."""
        return self._shaper.limits if self._shaper.smooth else None

    @property
    def tasks(self) -> list[Task]:
        """Tasks of the QP: frame, posture (if any), extras."""
        return list(self._problem.tasks)

    @property
    def limits(self) -> list[Limit]:
        """Limits: configuration, velocity, extras (TickMode.APPROACH: the QP holds the
        first, the shaper the velocity)."""
        return list(self._problem.limits)

    @property
    def barriers(self) -> list[Barrier]:
        """Barriers of the QP."""
        return list(self._problem.barriers)
