"""A custom IK function in place of the built-in QP step (the seed's ``ikSolveFn``).

The function is the user's: it may raise, return None or return something that is not joint
positions. :func:`call_solve_fn` turns every such answer into a reason, so that a bad answer
keeps the last command in force instead of stopping the control loop.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["IkSolveFn", "call_solve_fn"]

#: ``ik_solve_fn(position, quaternion, current_q) -> q | None``: position (3,) [m] and
#: quaternion (w, x, y, z) of the target (world frame; the quaternion is None only from
#: :meth:`IkTarget.solve_ik <pinkctl.view.target.IkTarget.solve_ik>` without one),
#: ``current_q`` the selected joints' positions; returns the selected joints' positions, or
#: None when it has no answer.
IkSolveFn = Callable[[np.ndarray, "np.ndarray | None", np.ndarray], "ArrayLike | None"]


def _joint_positions(answer: object, size: int) -> tuple[np.ndarray | None, str | None]:
    """A custom solver's answer as ``size`` joint positions, or None and the reason."""
    if answer is None:
        return None, "ik_solve_fn returned None: the last command is kept"
    try:
        q = np.asarray(answer, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        return None, f"ik_solve_fn returned something that is not numbers: {exc}"
    if q.size != size or not np.all(np.isfinite(q)):
        return None, (
            f"ik_solve_fn returned {q.size} values (finite: {bool(np.all(np.isfinite(q)))}); "
            f"expected {size} finite joint positions"
        )
    return q, None


def call_solve_fn(
    solve_fn: IkSolveFn, position: np.ndarray, quaternion: np.ndarray | None, current_q: np.ndarray
) -> tuple[np.ndarray | None, str | None]:
    """Call ``solve_fn`` on copies of the target pose; never raises.

    Args:
        solve_fn: The user's function (:data:`IkSolveFn`).
        position: Target position [m], world frame.
        quaternion: Target orientation (w, x, y, z), or None (position only).
        current_q: The selected joints' positions (passed as given).

    Returns:
        ``(q, None)`` with one finite position per entry of ``current_q``, or ``(None,
        reason)`` when the function raised or gave no usable answer.
    """
    try:
        answer = solve_fn(
            position.copy(), None if quaternion is None else quaternion.copy(), current_q
        )
    except Exception as exc:  # a user function must not kill the control loop
        return None, f"ik_solve_fn raised {type(exc).__name__}: {exc}"
    return _joint_positions(answer, current_q.size)
