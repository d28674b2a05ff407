"""Per-group joint settings: mode, weight, limit margin and max step size.

- ``mode``: ``"ik"`` (the joint moves when it lies on an element's chain) or ``"passive"``
  (it keeps its value; its Jacobian column is dropped).
- ``weight`` (>= 0): the step minimises ``sum (dq_i / w_i)^2`` among equally good steps; it is
  computed on the scaled variables ``y_i = dq_i / w_i`` (columns scaled by ``w_i``), so a joint
  of weight 0.5 moves about half as much, and weight 0 holds the joint like ``"passive"``.
- ``limit_margin`` [rad or m] (>= 0): with ``GroupFlags.AVOID_LIMITS``, the distance the joint
  keeps from its limits.
- ``max_step`` [rad or m] (> 0): the largest change of the joint's coordinates in one step
  (with ``GroupFlags.IGNORE_MAX_STEPS`` off). None: :data:`DEFAULT_MAX_STEP_ANGULAR` for a
  rotational coordinate (revolute, helical, spherical), :data:`DEFAULT_MAX_STEP_LINEAR` for a
  prismatic one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validation import choice, positive_number, real_number

__all__ = ["DEFAULT_MAX_STEP_ANGULAR", "DEFAULT_MAX_STEP_LINEAR", "JOINT_MODES", "JointSettings"]

#: Modes of a joint in a group.
JOINT_MODES = ("ik", "passive")

#: Default max step of a rotational coordinate [rad] (10 degrees).
DEFAULT_MAX_STEP_ANGULAR = math.radians(10.0)

#: Default max step of a prismatic coordinate [m].
DEFAULT_MAX_STEP_LINEAR = 0.1


@dataclass(frozen=True)
class JointSettings:
    """How one group treats one joint (see the module docstring)."""

    mode: str = "ik"
    weight: float = 1.0
    limit_margin: float = 0.0
    max_step: float | None = None

    def __post_init__(self) -> None:
        choice(self.mode, "mode", JOINT_MODES)
        object.__setattr__(self, "weight", real_number(self.weight, "weight", low=0.0))
        margin = real_number(self.limit_margin, "limit_margin", low=0.0)
        object.__setattr__(self, "limit_margin", margin)
        if self.max_step is not None:
            step = positive_number(self.max_step, "max_step")
            object.__setattr__(self, "max_step", step)

    @property
    def moves(self) -> bool:
        """Whether the joint may move (mode ``"ik"`` and a positive weight)."""
        return self.mode == "ik" and self.weight > 0.0

    def step_limit(self, rotational: bool) -> float:
        """The max step of one coordinate [rad or m]."""
        if self.max_step is not None:
            return self.max_step
        return DEFAULT_MAX_STEP_ANGULAR if rotational else DEFAULT_MAX_STEP_LINEAR
