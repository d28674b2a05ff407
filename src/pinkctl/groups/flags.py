"""Bit flags of IK groups: element constraints, group flags and result codes (the seed's).

- :class:`Constraint`: which axes an element constrains. ``X, Y, Z`` are the tip's position
  along the axes of the element's constraint base; ``ALPHA_BETA`` aligns the tip's z axis with
  the target's (two rows: rotation about the target's x and y axes) and ``GAMMA`` adds the
  rotation about z (it needs ``ALPHA_BETA``). The rows of an element come in the order
  x, y, z, alpha, beta, gamma.
- :class:`GroupFlags`: how a group is solved.
- :class:`ResultCode`: what a solve did; 0 (:attr:`ResultCode.OK`) is a plain success,
  ``STEPS_TOO_BIG`` and ``LIMIT_HIT`` are information, ``code & ResultCode.FAILED`` a failure.
"""

from __future__ import annotations

from enum import IntFlag
from typing import Any

from ..errors import InputError

__all__ = ["AXES", "Constraint", "GroupFlags", "ResultCode", "check_constraints", "flag_names"]


class Constraint(IntFlag):
    """Constrained axes of an IK element (combine with ``|``)."""

    X = 1
    Y = 2
    Z = 4
    ALPHA_BETA = 8
    GAMMA = 16
    POSITION = X | Y | Z
    ORIENTATION = ALPHA_BETA | GAMMA
    POSE = POSITION | ORIENTATION


#: Row labels of each constraint bit, with the index of the row in the 6-vector
#: ``[position (3), rotation vector (3)]`` of an element's error.
AXES: tuple[tuple[Constraint, tuple[tuple[str, int], ...]], ...] = (
    (Constraint.X, (("x", 0),)),
    (Constraint.Y, (("y", 1),)),
    (Constraint.Z, (("z", 2),)),
    (Constraint.ALPHA_BETA, (("alpha", 3), ("beta", 4))),
    (Constraint.GAMMA, (("gamma", 5),)),
)


class GroupFlags(IntFlag):
    """How a group is solved.

    Attributes:
        ENABLED: The group is solved (otherwise: result ``NOT_PERFORMED``).
        IGNORE_MAX_STEPS: Joints' max step sizes are ignored; otherwise a step exceeding one is
            scaled by 1/2 until every joint fits (``STEPS_TOO_BIG`` is reported).
        RESTORE_ON_BAD_LIN_TOL: The input configuration is returned when an element misses its
            linear precision.
        RESTORE_ON_BAD_ANG_TOL: Same for the angular precision.
        AVOID_LIMITS: Joints keep their ``limit_margin`` away from their limits: the
            shrunk interval bounds the ``qp`` method's and the cascade's steps; the other
            methods drop the column of a joint on it that moves outward (and recompute the
            step), and stop a joint that would cross it.
        STOP_ON_LIMIT_HIT: The solve ends at the first step that reaches a limit: that step is
            shortened so the first joint to hit stops exactly on its limit.
    """

    ENABLED = 1
    IGNORE_MAX_STEPS = 2
    RESTORE_ON_BAD_LIN_TOL = 4
    RESTORE_ON_BAD_ANG_TOL = 8
    AVOID_LIMITS = 16
    STOP_ON_LIMIT_HIT = 32


class ResultCode(IntFlag):
    """What a solve did (combine with ``&``; 0 is success).

    Attributes:
        OK: Performed, every element within its precision.
        NOT_PERFORMED: Nothing was solved: the group is disabled, has no enabled element, or
            no joint may move.
        CANNOT_INVERT: A step could not be computed (a rank-deficient Jacobian for
            ``pinv_undamped``, non-finite values, an infeasible QP); the solve stopped there.
        NOT_WITHIN_TOLERANCE: Some element misses its linear or angular precision at the end.
        STEPS_TOO_BIG: Some step was halved to respect the joints' max step sizes.
        LIMIT_HIT: Some joint reached a limit (see the group's ``last_report.limit_hits``).
        FAILED: The bits that mean the solution was not reached (``code & FAILED``).
    """

    OK = 0
    NOT_PERFORMED = 1
    CANNOT_INVERT = 2
    NOT_WITHIN_TOLERANCE = 4
    STEPS_TOO_BIG = 8
    LIMIT_HIT = 16
    FAILED = NOT_PERFORMED | CANNOT_INVERT | NOT_WITHIN_TOLERANCE


def check_constraints(value: Any) -> Constraint:
    """``value`` as a non-empty :class:`Constraint` (``GAMMA`` needs ``ALPHA_BETA``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"constraints must be a Constraint combination, got {value!r}")
    if value <= 0 or value & ~int(Constraint.POSE):
        raise InputError(f"constraints must be a non-empty Constraint combination, got {value!r}")
    constraints = Constraint(value)
    if constraints & Constraint.GAMMA and not constraints & Constraint.ALPHA_BETA:
        raise InputError("constraints: GAMMA needs ALPHA_BETA (the seed's rule)")
    return constraints


def flag_names(value: IntFlag, members: tuple[IntFlag, ...]) -> list[str]:
    """Lower-case names of the single-bit ``members`` set in ``value`` (for files)."""
    return [str(member.name).lower() for member in members if value & member]
