"""Targets a robot certainly reaches: its frame's poses at random configurations.

:func:`sample_poses` draws configurations uniformly within the moved joints' limits (as the
global search's random restarts do) and returns where the frame is at each, so every pose is
reachable by construction: targets for benchmarks and tests, or a pose dataset covering the
workspace as the joints see it (denser where the arm folds, unlike a voxel grid). A
configuration the IK would not return (closer than the collision margin to the world or to
itself, :mod:`pinkctl.ik.collision`) is drawn again, so the default, collision-free search
has an answer for every pose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot
from ..errors import InputError
from .solver import IKSolver

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import IKKeywords

__all__ = ["sample_poses"]


def sample_poses(
    robot: PinkRobot,
    count: int,
    *,
    rng: int | np.random.Generator = 0,
    **options: Unpack[IKKeywords],
) -> list[pin.SE3]:
    """World poses of the solver's frame at ``count`` random configurations.

    Args:
        robot: The robot (only read).
        count: How many poses.
        rng: Seed or generator of the configurations.
        **options: Fields of :class:`~pinkctl.ik.IKOptions` that choose the frame and the
            moved joints (``frame``, ``joint_names``; the other joints stay at
            ``robot.q0``) and the collision check (``world``, ``self_collision``,
            ``collision_margin``; ``world=World(), self_collision=False`` keeps every draw).

    Returns:
        ``count`` poses (``pin.SE3``), in order of drawing.

    Raises:
        InputError: A negative count, or bad options.
    """
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise InputError(f"count: expected a non-negative integer, got {count!r}")
    solver = IKSolver(robot, **options)
    generator = np.random.default_rng(rng)
    data = robot.model.createData()
    fid = robot.model.getFrameId(solver.frame)
    poses: list[pin.SE3] = []
    check = solver.collision
    while len(poses) < count:
        q = solver.subset.sample(generator, robot.q0)
        if check is not None and not check.accepts(q):
            continue
        pin.framesForwardKinematics(robot.model, data, q)
        poses.append(data.oMf[fid].copy())
    return poses
