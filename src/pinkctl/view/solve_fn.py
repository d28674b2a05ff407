"""A custom IK function in place of the built-in QP step (the seed's ``ikSolveFn``), and the
seed's own solver as one.

The function is the user's: it may raise, return None or return something that is not joint
positions. :func:`call_solve_fn` turns every such answer into a reason, so that a bad answer
keeps the last command in force instead of stopping the control loop.

:func:`dls_solve_fn` is the MuJoCo/React seed's built-in solver, with its options, as an
``ik_solve_fn``. The seed's ``useIkController`` solves each frame by damped least squares on
MuJoCo's site Jacobian, configurable (50 iterations, damping 0.01, position weight 1.0,
rotation weight 0.3, tolerance 1e-3). pinkctl's :class:`~pinkctl.view.IkTarget` runs one QP
step per tick instead; :func:`dls_solve_fn` gives it the seed's solver::

    target.ik_solve_fn = dls_solve_fn(target, max_iterations=100, damping=0.05)

The solve is :func:`pinkctl.mujoco_ik.solve_joints` on the target's simulation (its model,
site and joints; the other joints stay where they are, and the live ``qpos`` is never
changed). Quaternions arrive in the target's conventions ((x, y, z, w) with
``conventions="threejs"``). Like the seed's, an unreachable target gives the closest
configuration found (the seed answers ``null`` only when the solve fails).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import integer, positive_number, real_number
from ..errors import InputError
from ..mujoco_ik import solve_joints

if TYPE_CHECKING:
    from .target import IkTarget

__all__ = ["IkSolveFn", "call_solve_fn", "dls_solve_fn"]

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


def dls_solve_fn(
    target: IkTarget,
    *,
    max_iterations: int = 50,
    damping: float = 0.01,
    position_weight: float = 1.0,
    rotation_weight: float = 0.3,
    tolerance: float = 1e-3,
    max_step: float | None = None,
) -> IkSolveFn:
    """The seed's built-in DLS solver for ``target`` (see the module docstring).

    Args:
        target: The :class:`~pinkctl.view.IkTarget` whose site and joints it moves.
        max_iterations: Iterations per solve (the seed's 50 per frame), >= 1.
        damping: Added to ``J Jᵀ`` (not squared), > 0.
        position_weight: Weight of the position rows, >= 0.
        rotation_weight: Weight of the rotation rows, >= 0.
        tolerance: Weighted error norm that ends a solve, >= 0.
        max_step: Bound on each velocity coordinate of one iteration [rad] or [m]; None:
            unbounded (the seed's ``maxStepRad``).

    Returns:
        ``fn(position, quaternion, current_q) -> q`` (:data:`~pinkctl.view.IkSolveFn`).

    Raises:
        ValueError: (:class:`~pinkctl.errors.InputError`) a malformed option, named, or a
            ``target`` that is not an :class:`~pinkctl.view.IkTarget`.
    """
    from .target import IkTarget  # the target module imports this package's helpers

    if not isinstance(target, IkTarget):
        raise InputError(f"target must be an IkTarget, got {type(target).__name__}")
    options: dict[str, Any] = {  # checked now: in the control loop a bad one is a reason
        "max_iterations": integer(max_iterations, "max_iterations", low=1),
        "damping": positive_number(damping, "damping"),
        "position_weight": real_number(position_weight, "position_weight", low=0.0),
        "rotation_weight": real_number(rotation_weight, "rotation_weight", low=0.0),
        "tolerance": real_number(tolerance, "tolerance", low=0.0),
        "max_step": None if max_step is None else positive_number(max_step, "max_step"),
    }
    sim = target.sim
    site, joints = target.site, target.joint_names
    addresses = [sim.model.joint(name).qposadr[0] for name in joints]
    options["quaternion_order"] = target.conventions.quaternion_order

    def solve(
        position: np.ndarray, quaternion: np.ndarray | None, current_q: np.ndarray
    ) -> np.ndarray:
        qpos = sim.data.qpos.copy()
        qpos[addresses] = current_q
        solution = solve_joints(
            sim.model, sim.data, site, joints, position, quaternion, qpos, **options
        )
        return solution.qpos[addresses]

    return solve
