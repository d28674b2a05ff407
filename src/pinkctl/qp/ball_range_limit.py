"""BallRangeLimit: the range of ball joints, a bound on their rotation angle, as a pink limit.

A ball joint's range (MJCF ``<joint type="ball" range="0 θmax">``) bounds the angle
:math:`\\theta = \\lVert r \\rVert` of its rotation :math:`R = \\exp r` away from the joint
frame, whatever the axis (MuJoCo's own reading of it). Pinocchio's quaternion bounds cannot
say that, and pink's :class:`~pink.limits.ConfigurationLimit` leaves ball joints free.

Along the tangent displacement :math:`\\Delta` of the joint (its angular displacement in the
child frame), the angle changes by :math:`\\mathrm{d}\\theta = \\hat r^\\top \\Delta` (the
axis :math:`\\hat r = r / \\theta` is a fixed vector of :math:`J_{\\log}`), so the limit is one
row per joint, as pink's configuration limit writes its bounds,

.. math::

    \\hat r^\\top \\Delta \\le \\gamma\\, (\\theta_{\\max} - \\theta),

with the gain :math:`\\gamma \\in (0, 1]` (``gain``): each step closes at most the fraction
:math:`\\gamma` of the margin left, so the angle approaches the bound without crossing it
(to second order in the step: a displacement across the axis turns the rotation away from
the bound's normal). With an acceleration limit :math:`a` of the joint (``accelerations``:
a command whose acceleration is limited cannot stop at once), the step is also at most
:math:`\\mathrm{d}t \\sqrt{2 a (\\theta_{\\max} - \\theta)}`, the speed from which it can
still stop within the margin (pink's acceleration limit's braking term). At
:math:`\\theta = 0` the axis is undefined and the row is empty (no step of a
velocity-limited joint reaches a bound from there in one tick).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pinocchio as pin
from pink.limits import Limit

from .._validation import real_number
from ..core.ball_joints import is_ball_joint, rotation_vector
from ..errors import InputError

__all__ = ["BallRangeLimit"]

#: Below this angle [rad] the rotation axis is undefined and the row stays empty.
_AXIS_EPSILON = 1e-9


class BallRangeLimit(Limit):
    """Keep the rotation angle of ball joints within their range (module docstring).

    Args:
        model: The Pinocchio model.
        ranges: Maximum rotation angle [rad] of each limited ball joint, by name, in
            (0, π].
        gain: Fraction in (0, 1] of the margin to the bound a step may close (pink's
            ``config_limit_gain``).
        accelerations: Acceleration limit [rad/s²] of limited joints, by name, for the
            braking term (joints not named: none).

    Attributes:
        model: The model.
        joints: ``(name, idx_q, idx_v, max angle, acceleration or inf)`` of each limited
            joint.
        gain: The gain.

    Raises:
        InputError: An unknown joint, one that is not a ball joint, or a range outside
            (0, π].
    """

    def __init__(
        self,
        model: pin.Model,
        ranges: Mapping[str, float],
        *,
        gain: float = 0.5,
        accelerations: Mapping[str, float] | None = None,
    ):
        if not isinstance(model, pin.Model):
            raise InputError(f"model must be a pinocchio.Model, got {type(model).__name__}")
        if not isinstance(ranges, Mapping):
            raise InputError(f"ranges must map ball joint names to angles, got {ranges!r}")
        self.model = model
        self.gain = real_number(gain, "gain", low=0.0, high=1.0, low_open=True)
        accelerations = dict(accelerations or {})
        joints: list[tuple[str, int, int, float, float]] = []
        for name, angle in ranges.items():
            if not isinstance(name, str) or not model.existJointName(name):
                raise InputError(f"ranges: {name!r} is not a joint of the model")
            index = model.getJointId(name)
            if not is_ball_joint(model, index):
                raise InputError(f"ranges: joint {name!r} is not a ball joint")
            limit = real_number(angle, f"ranges[{name!r}]", low=0.0, high=np.pi, low_open=True)
            joint = model.joints[index]
            braking = np.inf
            if name in accelerations:
                braking = real_number(accelerations[name], f"accelerations[{name!r}]", low=0.0)
            joints.append((name, int(joint.idx_q), int(joint.idx_v), limit, braking))
        self.joints = tuple(joints)

    def angles(self, q: np.ndarray) -> np.ndarray:
        """The rotation angle [rad] of each limited joint at configuration ``q``."""
        return np.array(
            [np.linalg.norm(rotation_vector(q[iq : iq + 4])) for _, iq, _, _, _ in self.joints]
        )

    def compute_qp_inequalities(
        self, configuration: Any, dt: float
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """``(G, h)`` with ``G Δq <= h``: one row per limited ball joint over the tangent
        displacement ``Δq`` (``model.nv``) over a step of ``dt`` [s], or None without limited
        joints."""
        if not self.joints:
            return None
        q = np.asarray(configuration.q)
        G = np.zeros((len(self.joints), self.model.nv))
        h = np.empty(len(self.joints))
        for row, (_, idx_q, idx_v, limit, braking) in enumerate(self.joints):
            rotation = rotation_vector(q[idx_q : idx_q + 4])
            angle = float(np.linalg.norm(rotation))
            if angle > _AXIS_EPSILON:
                G[row, idx_v : idx_v + 3] = rotation / angle
            margin = limit - angle
            h[row] = self.gain * margin
            if margin > 0.0 and braking < np.inf:
                h[row] = min(h[row], dt * np.sqrt(2.0 * braking * margin))
        return G, h
