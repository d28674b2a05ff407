"""The tool-frame target of an IK controller, read from setpoints.

The target comes from the setpoint's site pose of the tool frame (a position without an
orientation keeps the previous orientation); a pose farther than :data:`MAX_TARGET_DISTANCE`
from the world origin is refused (no robot reaches it, and its QP is numerically
meaningless).
"""

from __future__ import annotations

import math

from pink.tasks import FrameTask

from ..core.poses import SitePoseReader
from ..core.state import SpatialState

__all__ = ["MAX_TARGET_DISTANCE", "FrameTarget"]

#: Frame targets farther than this from the world origin [m] are refused at run time: no
#: robot reaches them, and their QP is numerically meaningless (ProxQP spent 35 s on one
#: 1e8 m away).
MAX_TARGET_DISTANCE = 1e3


class FrameTarget:
    """The target of a frame task (module docstring).

    Args:
        task: The frame task whose target this sets.
    """

    def __init__(self, task: FrameTask) -> None:
        self.task = task
        self._reader = SitePoseReader(task.frame)

    def read(self, sites: SpatialState) -> str | None:
        """Set the task's target from ``sites`` (a site state without the frame leaves it).

        Returns:
            None, or why the pose was refused (the target is then left as it was).
        """
        task = self.task
        pose = self._reader.pose(sites, task.transform_target_to_world)
        if pose is None:
            return None
        x, y, z = pose.translation.tolist()
        if x * x + y * y + z * z > MAX_TARGET_DISTANCE**2:
            distance = math.sqrt(x * x + y * y + z * z)
            return (
                f"target of {task.frame!r} is {distance:.3g} m from the world origin, beyond "
                f"{MAX_TARGET_DISTANCE:g} m: ignored"
            )
        task.set_target(pose)
        return None
