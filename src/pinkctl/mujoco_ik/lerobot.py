"""The lerobot SO-101 environment's IK helpers, with its signatures (``ik_control``).

:func:`solve_ik`, :func:`compute_ik_levenberg_marquardt` and :func:`compute_ik_pseudoinverse`
take ``(model, data, site_id, dof_ids, target_pos, ...)`` and return joint angles, one per
DOF of ``dof_ids``, as the seed's do (same arguments, defaults and updates). Where pinkctl
differs, on purpose:

- each DOF id is mapped to its own joint's ``qpos`` address and range (the seed indexes
  ``qpos`` and ``jnt_range`` with the DOF id itself, which agrees only on models whose joints
  are all scalar and numbered alike, as the SO-101's are); a DOF of a ball or free joint is
  rejected;
- every function restores ``data.qpos`` and the kinematics when it returns or raises (the
  seed's two ``compute_*`` functions leave the last iterate in ``data``);
- bad arguments raise :class:`~pinkctl.errors.InputError` (a ``ValueError``, as the seed's).

The seed documents ``DOWN`` and ``DEFAULT_ORIENTATION_WEIGHT`` by name only: here ``DOWN`` is
``(0, 0, -1)`` and the weight is 0.1 m of position error per radian of tilt. The approach
error is the world rotation vector turning the site's approach axis onto ``approach_dir``;
its Jacobian is the site's angular Jacobian without the spin about that axis.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import choice, positive_number, real_number, real_vector
from ..errors import InputError
from ._checks import SCALAR, count, model_and_data, object_id, restored

__all__ = [
    "DEFAULT_ORIENTATION_WEIGHT",
    "DOWN",
    "compute_ik_levenberg_marquardt",
    "compute_ik_pseudoinverse",
    "solve_ik",
]

#: The default approach direction: straight down, world frame.
DOWN: NDArray[np.float64] = np.array([0.0, 0.0, -1.0])
#: Metres of position error equivalent to one radian of approach-axis tilt.
DEFAULT_ORIENTATION_WEIGHT = 0.1


def _dof_ids(dof_ids: Any, nv: int) -> np.ndarray:
    """``dof_ids`` as a non-empty 1-D integer array of distinct DOF ids in ``[0, nv)``."""
    try:
        ids = np.asarray(dof_ids).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"dof_ids must be integer DOF ids, got {dof_ids!r}") from None
    if ids.size == 0 or ids.dtype.kind not in "iu":
        raise InputError(f"dof_ids must be a non-empty array of integer DOF ids, got {dof_ids!r}")
    if np.any(ids < 0) or np.any(ids >= nv):
        raise InputError(f"dof_ids must be in [0, {nv}), got {ids.tolist()}")
    if len(set(ids.tolist())) != ids.size:
        raise InputError(f"dof_ids repeats a DOF: {ids.tolist()}")
    return ids


class _Dofs:
    """The DOFs of a call: velocity columns, ``qpos`` addresses and ranges (checked)."""

    def __init__(self, model: mujoco.MjModel, dof_ids: Any) -> None:
        ids = _dof_ids(dof_ids, model.nv)
        joints = model.dof_jntid[ids]
        scalar = [int(model.jnt_type[j]) in SCALAR for j in joints]
        if not all(scalar):
            bad = [int(d) for d, ok in zip(ids, scalar) if not ok]
            raise InputError(f"dof_ids {bad} belong to ball or free joints: use solve_joints")
        self.columns = ids.astype(np.intp)
        self.addresses = model.jnt_qposadr[joints].astype(np.intp)
        ranges = model.jnt_range[joints]
        self.limited = ranges[:, 0] < ranges[:, 1]  # the seed's test for "has limits"
        self.low, self.high = ranges[:, 0], ranges[:, 1]


def _set(model: mujoco.MjModel, data: mujoco.MjData, dofs: _Dofs, q: NDArray[np.float64]) -> None:
    data.qpos[dofs.addresses] = q
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)  # the Jacobians read cdof


def _task(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    site_id: int,
    dofs: _Dofs,
    target_pos: NDArray[np.float64],
    point_offset: NDArray[np.float64] | None,
    approach: tuple[int, NDArray[np.float64], float] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Error and Jacobian of the controlled point (and of the approach axis' tilt)."""
    rotation = data.site_xmat[site_id].reshape(3, 3)
    point = data.site_xpos[site_id].copy()
    if point_offset is not None:
        point += rotation @ point_offset
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    mujoco.mj_jac(model, data, jacp, jacr, point, int(model.site_bodyid[site_id]))
    error, jacobian = target_pos - point, jacp[:, dofs.columns]
    if approach is None:
        return error, jacobian
    axis_index, direction, weight = approach
    axis = rotation[:, axis_index]
    cross = np.cross(axis, direction)
    sine = float(np.linalg.norm(cross))
    angle = float(np.arctan2(sine, float(axis @ direction)))
    if sine > 1e-12:
        tilt = cross * (angle / sine)
    elif angle > 1.0:  # pointing the opposite way: any turn about a perpendicular axis
        perpendicular = np.cross(axis, np.eye(3)[int(np.argmin(np.abs(axis)))])
        tilt = perpendicular / np.linalg.norm(perpendicular) * angle
    else:
        tilt = np.zeros(3)
    without_spin = np.eye(3) - np.outer(axis, axis)
    tilt_jacobian = without_spin @ jacr[:, dofs.columns]
    return (np.concatenate([error, weight * tilt]), np.vstack([jacobian, weight * tilt_jacobian]))


def _common(
    model: Any, data: Any, site_id: Any, dof_ids: Any, target_pos: Any, current_q: Any
) -> tuple[mujoco.MjModel, mujoco.MjData, int, _Dofs, NDArray[np.float64], NDArray[np.float64]]:
    model, data = model_and_data(model, data)
    site = object_id(model, site_id, mujoco.mjtObj.mjOBJ_SITE, "site_id")
    dofs = _Dofs(model, dof_ids)
    target = real_vector(target_pos, "target_pos", 3)
    q = real_vector(current_q, "current_q", dofs.columns.size)
    return model, data, site, dofs, target, q


def _approach(
    approach_axis: Any, approach_dir: Any, orientation_weight: Any
) -> tuple[int, NDArray[np.float64], float] | None:
    if approach_axis is None:
        return None
    if isinstance(approach_axis, (bool, np.bool_)) or approach_axis not in (0, 1, 2):
        raise InputError(f"approach_axis must be 0, 1, 2 or None, got {approach_axis!r}")
    direction = real_vector(approach_dir, "approach_dir", 3)
    norm = float(np.linalg.norm(direction))
    if norm < 1e-9:
        raise InputError("approach_dir must not be zero")
    weight = real_number(orientation_weight, "orientation_weight", low=0.0)
    return int(approach_axis), direction / norm, weight


def compute_ik_levenberg_marquardt(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    site_id: int,
    dof_ids: ArrayLike,
    target_pos: ArrayLike,
    current_q: ArrayLike,
    damping: float = 0.1,
    max_iterations: int = 20,
    tolerance: float = 1e-4,
    point_offset: ArrayLike | None = None,
    approach_axis: int | None = None,
    approach_dir: ArrayLike = DOWN,
    orientation_weight: float = DEFAULT_ORIENTATION_WEIGHT,
) -> NDArray[np.float64]:
    """Joint angles by Levenberg–Marquardt: ``Δq = (JᵀJ + λI)⁻¹ Jᵀ e``, then clipped to the
    joints' ranges, at most ``max_iterations`` times, until ``|e| < tolerance``.

    Args:
        model: The MuJoCo model (only read).
        data: Its data (restored before returning).
        site_id: Site of the end effector.
        dof_ids: DOF ids of the controlled (hinge or slide) joints.
        target_pos: Target of the controlled point [m], world frame.
        current_q: Start, one angle per DOF.
        damping: λ > 0.
        max_iterations: Most updates, >= 0.
        tolerance: Error norm that ends the iteration [m], >= 0.
        point_offset: Controlled point in the site frame [m]; None: the site's origin.
        approach_axis: Site axis (0, 1, 2) to point along ``approach_dir``; None: position
            only.
        approach_dir: World direction of the approach axis (normalised here).
        orientation_weight: Metres of error per radian of tilt, >= 0.

    Returns:
        Joint angles, one per DOF (a new array).
    """
    model, data, site, dofs, target, q = _common(
        model, data, site_id, dof_ids, target_pos, current_q
    )
    damping = positive_number(damping, "damping")
    iterations = count(max_iterations, "max_iterations", low=0)
    tolerance = real_number(tolerance, "tolerance", low=0.0)
    offset = None if point_offset is None else real_vector(point_offset, "point_offset", 3)
    approach = _approach(approach_axis, approach_dir, orientation_weight)
    with restored(model, data):
        for _ in range(iterations):
            _set(model, data, dofs, q)
            error, jacobian = _task(model, data, site, dofs, target, offset, approach)
            if np.linalg.norm(error) < tolerance:
                break
            normal = jacobian.T @ jacobian + damping * np.eye(q.size)
            q = q + np.linalg.solve(normal, jacobian.T @ error)
            q = np.where(dofs.limited, np.clip(q, dofs.low, dofs.high), q)
    return q


def compute_ik_pseudoinverse(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    site_id: int,
    dof_ids: ArrayLike,
    target_pos: ArrayLike,
    current_q: ArrayLike,
    max_iterations: int = 20,
    tolerance: float = 1e-4,
    step_size: float = 1.0,
) -> NDArray[np.float64]:
    """Joint angles by Gauss–Newton: ``Δq = step_size · J⁺ e`` on the site's position, at
    most ``max_iterations`` times, until ``|e| < tolerance``. No joint limits (as the seed).

    Returns:
        Joint angles, one per DOF (a new array).
    """
    model, data, site, dofs, target, q = _common(
        model, data, site_id, dof_ids, target_pos, current_q
    )
    iterations = count(max_iterations, "max_iterations", low=0)
    tolerance = real_number(tolerance, "tolerance", low=0.0)
    step_size = positive_number(step_size, "step_size")
    with restored(model, data):
        for _ in range(iterations):
            _set(model, data, dofs, q)
            error, jacobian = _task(model, data, site, dofs, target, None, None)
            if np.linalg.norm(error) < tolerance:
                break
            q = q + step_size * (np.linalg.pinv(jacobian) @ error)
    return q


def solve_ik(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    site_id: int,
    dof_ids: ArrayLike,
    target_pos: ArrayLike,
    ik_method: str = "levenberg_marquardt",
    ik_damping: float = 0.1,
    ik_iterations: int = 20,
    seed_q: ArrayLike | None = None,
    point_offset: ArrayLike | None = None,
    approach_axis: int | None = None,
    approach_dir: ArrayLike = DOWN,
    orientation_weight: float = DEFAULT_ORIENTATION_WEIGHT,
) -> NDArray[np.float64]:
    """Joint angles that put the end effector at a target: the command of the arm's
    ``<position>`` actuators (the seed's ``solve_ik``). ``model`` to ``target_pos`` as
    :func:`compute_ik_levenberg_marquardt`.

    Args:
        ik_method: ``"levenberg_marquardt"`` or ``"pseudoinverse"``.
        ik_damping: λ of Levenberg–Marquardt.
        ik_iterations: Most iterations.
        seed_q: Start (selects the branch of a redundant arm); default: the DOFs' current
            ``data.qpos``.
        point_offset: As :func:`compute_ik_levenberg_marquardt` (Levenberg–Marquardt only).
        approach_axis: Idem.
        approach_dir: Idem.
        orientation_weight: Idem.

    Returns:
        Joint angles, one per DOF; ``data`` is left as it was.

    Raises:
        InputError: An unknown method, a point offset or approach axis with
            ``"pseudoinverse"``, or a bad argument.
    """
    method = choice(ik_method, "ik_method", ("levenberg_marquardt", "pseudoinverse"))
    model, data = model_and_data(model, data)
    dofs = _Dofs(model, dof_ids)
    start = data.qpos[dofs.addresses].copy() if seed_q is None else seed_q
    if method == "pseudoinverse":
        if point_offset is not None or approach_axis is not None:
            raise InputError(
                "point_offset and approach_axis require ik_method='levenberg_marquardt'"
            )
        return compute_ik_pseudoinverse(
            model, data, site_id, dof_ids, target_pos, start, max_iterations=ik_iterations
        )
    return compute_ik_levenberg_marquardt(
        model,
        data,
        site_id,
        dof_ids,
        target_pos,
        start,
        damping=ik_damping,
        max_iterations=ik_iterations,
        point_offset=point_offset,
        approach_axis=approach_axis,
        approach_dir=approach_dir,
        orientation_weight=orientation_weight,
    )
