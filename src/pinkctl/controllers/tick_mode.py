"""How the QP and the motion shaper share an IK controller's tick."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

import numpy as np
from pink import Configuration

from ..motion.shaper import MotionShaper
from ..qp import QPSolveError, TickQP

if TYPE_CHECKING:
    from .joint_mapping import JointMapping

__all__ = ["TickMode", "solve_in_box"]


class TickMode(Enum):
    """How the QP and the motion shaper share a tick (fixed at construction).

    Attributes:
        PLAIN: No motion limits: every limit in the QP, then the shaper's ``commit`` clips to
            the range and the velocity limits.
        APPROACH: Motion limits and no objects beyond the range and velocity limits: the QP
            holds the position range only (a velocity limit would make a large error a
            bang-bang signal) and the shaper's ``follow`` scales its velocity onto the
            velocity, acceleration and jerk limits, with its approach policy near a holding
            target.
        BOXED: Motion limits and extra limits or barriers (rows): the QP is solved inside the
            shaper's velocity box, so that the rows keep holding, then ``commit``.
    """

    PLAIN = "plain"
    APPROACH = "approach"
    BOXED = "boxed"

    @classmethod
    def of(cls, motion_limits: bool, rows: bool) -> TickMode:
        """The mode of a controller with or without motion limits and QP rows."""
        if not motion_limits:
            return cls.PLAIN
        return cls.BOXED if rows else cls.APPROACH


def solve_in_box(
    qp: TickQP,
    configuration: Configuration,
    dt: float,
    shaper: MotionShaper,
    joints: JointMapping,
) -> np.ndarray:
    """The QP's velocity inside the shaper's velocity box (:attr:`TickMode.BOXED`; a floating
    base's coordinates are free).

    When the rows ask for a stop the joints cannot make under their acceleration and jerk
    limits (e.g. a barrier reached at speed), the QP is solved without the box: the hardware
    limits win (the shaper's ``commit`` enforces them) and the rows are met as closely as
    they allow.

    Raises:
        QPSolveError: The QP has no solution even without the box.
    """
    lower, upper = shaper.box()
    if joints.n_base:
        free = np.full(joints.n_base, np.inf)
        lower, upper = np.concatenate([-free, lower]), np.concatenate([free, upper])
    try:
        return qp.solve(configuration, dt, lower, upper)
    except QPSolveError:
        return qp.solve(configuration, dt)
