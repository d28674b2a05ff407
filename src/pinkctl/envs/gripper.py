"""The gripper command of the environments: a normalised opening mapped to a servo target.

The grasp component of an action is an *absolute* opening in [0, 1]: 0 is closed, 1 is open.
:func:`normalized_to_ctrl` turns it into the position-servo target of the gripper joint
(radians for a revolute jaw, metres for a prismatic finger) over the joint's ``ctrlrange``;
:func:`ctrl_to_normalized` is its inverse. On the SO-101 the jaw is closed at the low end of
its range (-0.17 rad) and open at the high end (1.75 rad).
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

from .._validation import real_number
from ..errors import InputError
from .scene import limit_margin

__all__ = ["ctrl_to_normalized", "gripper_servo", "normalized_to_ctrl"]


def _range(ctrlrange: Sequence[float] | np.ndarray) -> tuple[float, float]:
    values = np.asarray(ctrlrange, dtype=float).reshape(-1)
    if values.shape != (2,) or not np.all(np.isfinite(values)) or not values[0] < values[1]:
        raise InputError(f"ctrlrange must be two finite numbers (low < high), got {ctrlrange!r}")
    return float(values[0]), float(values[1])


def normalized_to_ctrl(
    norm: float, ctrlrange: Sequence[float] | np.ndarray, *, closed_at_low: bool = True
) -> float:
    """Servo target of a normalised gripper opening.

    Args:
        norm: Opening in [0, 1] (0 closed, 1 open); values outside are clipped to [0, 1].
        ctrlrange: ``(low, high)`` servo range of the gripper joint [rad] or [m].
        closed_at_low: Whether the low end of the range is the closed gripper.

    Returns:
        The servo target in ``ctrlrange``.

    Raises:
        ValueError: If ``norm`` is not a finite number or ``ctrlrange`` is not an increasing
            pair of finite numbers.
    """
    low, high = _range(ctrlrange)
    opening = min(max(real_number(norm, "norm"), 0.0), 1.0)
    fraction = opening if closed_at_low else 1.0 - opening
    return low + fraction * (high - low)


def ctrl_to_normalized(
    ctrl: float, ctrlrange: Sequence[float] | np.ndarray, *, closed_at_low: bool = True
) -> float:
    """Normalised opening of a servo target: the inverse of :func:`normalized_to_ctrl`.

    A target outside ``ctrlrange`` maps outside [0, 1] (no clipping), so a measured joint
    position pushed past its range shows as such.

    Raises:
        ValueError: If ``ctrl`` is not a finite number or ``ctrlrange`` is malformed.
    """
    low, high = _range(ctrlrange)
    fraction = (real_number(ctrl, "ctrl") - low) / (high - low)
    return fraction if closed_at_low else 1.0 - fraction


def gripper_servo(
    model: mujoco.MjModel, joint: str, given: tuple[float, float] | None
) -> tuple[int, int, tuple[float, float]]:
    """The gripper joint's actuator id, ``qpos`` address and ``(closed, open)`` servo
    targets (``given``, else its range narrowed by the joint-limit margin, as the arm's)."""
    actuator = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, joint)
    if actuator < 0:
        raise InputError(f"gripper_joint {joint!r} has no servo in sim")
    low, high = (float(v) for v in model.jnt_range[model.joint(joint).id])
    margin = limit_margin(low, high)  # as the arm: never pushed into the limit zone
    targets = (low + margin, high - margin)
    if given is not None:
        targets = (float(given[0]), float(given[1]))
    return int(actuator), int(model.joint(joint).qposadr[0]), targets
