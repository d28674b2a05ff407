"""Argument checks of :class:`~pinkctl.controllers.PinkIKController` (constructor and setters).

Each raises ``ValueError`` naming the argument and what was expected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pinocchio as pin
import qpsolvers

from ..core.state import RobotState
from ..errors import InputError
from ..qp.backends import missing_solver_message

__all__ = [
    "DT_RANGE",
    "MAX_TARGET_DISTANCE",
    "MAX_WEIGHT",
    "check_cost",
    "check_pink_objects",
    "check_solver",
    "check_solver_options",
    "check_states",
]

#: Largest accepted cost or damping: weights are squared into the QP's Hessian, and beyond
#: this the problem is numerically meaningless (1e12 against a posture cost of 1e-3).
MAX_WEIGHT = 1e6
#: Frame targets farther than this from the world origin [m] are rejected at run time: no
#: robot reaches them, and their QP is numerically meaningless (ProxQP spent 35 s on one
#: 1e8 m away).
MAX_TARGET_DISTANCE = 1e3
#: Accepted control periods [s].
DT_RANGE = (1e-6, 1.0)
#: Attributes of pink tasks and barriers that name model frames (checked at construction).
_FRAME_ATTRIBUTES = ("frame", "root", "floor_frame", "hub_frame")


def check_cost(value: Any, name: str) -> float | np.ndarray:
    """A non-negative scalar cost or a 3-vector of them (at most :data:`MAX_WEIGHT`)."""
    if value is None:
        return 0.0
    if isinstance(value, (bool, str, bytes)):
        raise InputError(f"{name} must be a number or a 3-vector of numbers, got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"{name} must be a number or a 3-vector of numbers, got {value!r}"
        ) from exc
    if arr.shape not in ((), (3,)):
        raise InputError(f"{name} must be a scalar or a 3-vector, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > MAX_WEIGHT):
        raise InputError(f"{name} must be in [0, {MAX_WEIGHT:g}], got {value!r}")
    return float(arr) if arr.shape == () else arr.copy()


def check_states(estimated_state: Any, setpoint_state: Any) -> None:
    if not isinstance(estimated_state, RobotState):
        raise InputError(
            f"estimated_state must be a RobotState, got {type(estimated_state).__name__}"
        )
    if setpoint_state is not None and not isinstance(setpoint_state, RobotState):
        raise InputError(
            f"setpoint_state must be a RobotState or None, got {type(setpoint_state).__name__}"
        )


def check_solver(value: Any, name: str, *, optional: bool) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or value not in qpsolvers.available_solvers:
        raise InputError(missing_solver_message(value, name))
    return value


def check_pink_objects(value: Any, kind: type, name: str, model: pin.Model) -> list[Any]:
    """A list of pink ``kind`` objects whose frame names exist in ``model``."""
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InputError(f"{name} must be a sequence of pink {kind.__name__} objects")
    items = list(value)
    for item in items:
        if not isinstance(item, kind):
            raise InputError(
                f"{name} must hold pink {kind.__name__} objects, got {type(item).__name__}"
            )
        frames = [getattr(item, attr, None) for attr in _FRAME_ATTRIBUTES]
        frames += list(getattr(item, "frames", None) or [])
        for frame in frames:
            if isinstance(frame, str) and not model.existFrame(frame):
                raise InputError(
                    f"{name}: {type(item).__name__} uses frame {frame!r}, which is not a frame "
                    "of the model"
                )
    return items


def check_solver_options(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise InputError(f"solver_options must be a dict with string keys, got {value!r}")
    return dict(value)
