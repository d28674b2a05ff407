"""When a tick's QP has no solution: the empty box that motion limits explain, and the
most specific reason for any other failure."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from .errors import QPSolveError
from .problem import QPWorkspace

__all__ = ["diagnose", "recover_empty_box"]


def recover_empty_box(
    ws: QPWorkspace,
    tangent_indices: np.ndarray,
    model: pin.Model,
    dt: float,
    v_lower: np.ndarray | None,
    v_upper: np.ndarray | None,
) -> bool:
    """Let the position-range bound yield to the motion bounds where the box is empty.

    pink's configuration limit asks for at most ``gain * (q_max - q)`` of motion toward a
    limit (and, outside the range, for a return of ``gain * (q - q_max)`` in one tick). The
    motion bounds, the velocity limit and ``v_lower``/``v_upper`` (acceleration and jerk
    limits, which cannot brake or return faster), may not allow that: the box is empty and
    pink reports infeasibility. Motion limits are what the hardware enforces, so for those
    coordinates the box collapses to the point of the motion box nearest to the configuration
    bound: ``x = max(-dt v_max, dt v_lower)`` when the range asks for less,
    ``x = min(dt v_max, dt v_upper)`` when it asks for more. A conflict among the motion
    bounds themselves is left as it is (reported by the solver).

    Args:
        ws: The workspace whose box ``lb <= x <= ub`` [rad or m] is repaired in place.
        tangent_indices: Tangent index of each QP variable.
        model: The Pinocchio model (its ``velocityLimit``).
        dt: Control period [s].
        v_lower, v_upper: The caller's velocity box [rad/s], or None.

    Returns:
        Whether the box was empty somewhere.
    """
    crossing = np.flatnonzero(np.greater(ws.lb, ws.ub))
    if not crossing.size:
        return False
    tangent = tangent_indices[crossing]
    v_max = np.asarray(model.velocityLimit, dtype=np.float64)[tangent] * dt
    low = -v_max if v_lower is None else np.maximum(-v_max, v_lower[crossing] * dt)
    high = v_max if v_upper is None else np.minimum(v_max, v_upper[crossing] * dt)
    # the box is empty either because its upper side fell below the motion box or its lower
    # side rose above it
    value = np.where(ws.ub[crossing] < low, low, high)
    usable = (low <= high) & np.isfinite(value)
    ws.lb[crossing[usable]] = value[usable]
    ws.ub[crossing[usable]] = value[usable]
    return True


def diagnose(ws: QPWorkspace, tangent_indices: np.ndarray, error: QPSolveError) -> QPSolveError:
    """A solver failure turned into the most specific reason we can name."""
    lb, ub = ws.lb, ws.ub
    index = tangent_indices
    bad = np.flatnonzero(np.isnan(lb) | np.isnan(ub))
    if bad.size:
        reason = f"NaN in the bounds of tangent coordinates {index[bad].tolist()}"
    elif np.any(lb > ub):
        bad = np.flatnonzero(lb > ub)
        reason = (
            f"infeasible: lower bound above upper bound for tangent coordinates "
            f"{index[bad].tolist()} (lb={lb[bad].tolist()}, ub={ub[bad].tolist()}, "
            "displacements over dt)"
        )
    elif not np.all(np.isfinite(ws.H)) or not np.all(np.isfinite(ws.c)):
        reason = "NaN or infinite value in the objective (H, c)"
    elif ws.n_ineq and np.isnan(ws.h).any():
        reason = "NaN in the inequality vector h (limits or barriers)"
    else:
        return error
    return QPSolveError(f"{reason} [{error.reason}]", solver=error.solver, status=error.status)
