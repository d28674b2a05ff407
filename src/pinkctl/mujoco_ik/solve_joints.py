"""solve_joints: damped least squares on a MuJoCo model, ball and free joints included.

The MuJoCo/React seed's ``GenericIK.solveJoints`` in Python. Each iteration reads the site's
pose and its analytic Jacobian (``mj_jacSite``, ``model.nv`` columns, of which the selected
joints' ``jnt_dofadr`` columns are kept), takes one damped least-squares step on the weighted
error ``e = (w_p (p* - p), w_r r)`` (``r``: the world rotation vector from the site's
orientation to the target's)::

    dv = Jᵀ (J Jᵀ + λ I)⁻¹ e        (λ = damping, added as it is: not squared)

bounds each coordinate of ``dv`` by ``max_step`` (the seed's ``maxStepRad``), moves the
configuration along it with ``mj_integratePos`` (quaternions stay on the unit sphere), and
puts the joints back in their ranges (:func:`~pinkctl.mujoco_ik.joints.project_to_limits`).

Two things differ from the seed's loop, both measured on the ball-joint chain of the tests
(200 random reachable poses from the same start): a joint sitting on a limit (a hinge or slide
at an end of its range, a ball joint at its largest angle) loses the part of the step that
would press it further, and the step is solved again without it (155 poses reached -> 200);
a step that does not lower the error is taken back and tried again with ten times the
damping, an accepted one divides it by ten down to ``damping`` (Levenberg-Marquardt's rule),
so an unreachable target ends at the closest configuration rather than where the first
overshoot stopped. The solve ends when ``|e| < tolerance``, after ``max_iterations`` steps or
after six steps in a row taken back, and returns the best configuration met.

The work happens in ``data``; its ``qpos`` (and the kinematics computed from it) are restored
before returning, also when an exception escapes. Collisions are not looked at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import mujoco
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import choice, positive_number, real_number, real_vector
from ..errors import InputError
from ._checks import SCALAR, count, model_and_data, object_id, restored
from .joints import dof_columns, joint_ids, project_to_limits

__all__ = ["JointSolution", "solve_joints", "target_quaternion"]

#: Rejected steps in a row after which the solve gives up.
_REJECTIONS = 6
#: How much a rejected step multiplies the damping (an accepted one divides it, down to the
#: given damping).
_DAMPING_FACTOR = 10.0
#: Smallest improvement of the weighted error that counts as one.
_IMPROVEMENT = 1e-9
_BALL = int(mujoco.mjtJoint.mjJNT_BALL)
#: How close to its largest angle [rad] a ball joint counts as on its limit.
_AT_LIMIT = 1e-9


@dataclass(frozen=True)
class JointSolution:
    """What :func:`solve_joints` found.

    Attributes:
        qpos: The best configuration met, ``model.nq`` values (MuJoCo's order, ball and free
            quaternions ``(w, x, y, z)``); the unselected joints keep the start's values.
        converged: Whether the weighted error went below the tolerance.
        position_error: Distance from the site to the target position at ``qpos`` [m].
        rotation_error: Angle from the site to the target orientation at ``qpos`` [rad]
            (0.0 for a position-only solve).
        error: The weighted error norm ``|e|`` at ``qpos`` (what ``tolerance`` bounds).
        iterations: Steps taken.
        joint_ids: The joints the solve moved, in column order.
    """

    qpos: NDArray[np.float64]
    converged: bool
    position_error: float
    rotation_error: float
    error: float
    iterations: int
    joint_ids: tuple[int, ...]


def target_quaternion(
    quaternion: ArrayLike, order: str, name: str = "quaternion"
) -> NDArray[np.float64]:
    """A target quaternion as a unit ``(w, x, y, z)``; ``order`` is ``"wxyz"`` (MuJoCo's)
    or ``"xyzw"`` (three.js's). Any non-zero norm is accepted and normalised."""
    values = real_vector(quaternion, name, 4)
    if order == "xyzw":
        values = values[[3, 0, 1, 2]]
    norm = float(np.linalg.norm(values))
    if norm < 1e-9:
        raise InputError(f"{name} must not be zero")
    return values / norm


def _rotation_error(
    site_xmat: NDArray[np.float64], goal: NDArray[np.float64]
) -> NDArray[np.float64]:
    """World rotation vector [rad] turning the site's orientation onto the goal (shortest)."""
    site = np.empty(4)
    mujoco.mju_mat2Quat(site, site_xmat)
    inverse, difference, out = np.empty(4), np.empty(4), np.empty(3)
    mujoco.mju_negQuat(inverse, site)
    mujoco.mju_mulQuat(difference, goal, inverse)
    mujoco.mju_quat2Vel(out, difference, 1.0)
    return out


class _Problem:
    """One solve's fixed parts: the site, the columns, the goal and the weights."""

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        site: int,
        ids: tuple[int, ...],
        position: NDArray[np.float64],
        quaternion: NDArray[np.float64] | None,
        weights: tuple[float, float],
    ) -> None:
        self.model, self.data, self.site, self.ids = model, data, site, ids
        self.columns = dof_columns(model, ids)
        self.position, self.quaternion = position, quaternion
        self.weights = weights
        self.jacp = np.zeros((3, model.nv))
        self.jacr = np.zeros((3, model.nv))
        # the limits a step can press against: limited hinges and slides (one column each),
        # limited ball joints (three columns, the rotation angle bounded)
        self.scalars: list[tuple[int, int, float, float]] = []  # column, address, low, high
        self.balls: list[tuple[int, int, float]] = []  # first column, address, angle limit
        for k, column in enumerate(self.columns):
            j = int(model.dof_jntid[column])
            kind, address = int(model.jnt_type[j]), int(model.jnt_qposadr[j])
            if not model.jnt_limited[j]:
                continue
            if kind in SCALAR:
                self.scalars.append((k, address, *model.jnt_range[j]))
            elif kind == _BALL and column == model.jnt_dofadr[j]:
                self.balls.append((k, address, float(model.jnt_range[j][1])))

    def evaluate(self, qpos: NDArray[np.float64]) -> tuple[NDArray[np.float64], float, float]:
        """Weighted error at ``qpos`` (written into ``data``), its position and angle parts."""
        data = self.data
        data.qpos[:] = qpos
        mujoco.mj_kinematics(self.model, data)
        mujoco.mj_comPos(self.model, data)  # cdof, which mj_jacSite reads
        dp = self.position - data.site_xpos[self.site]
        wp, wr = self.weights
        if self.quaternion is None:
            return wp * dp, float(np.linalg.norm(dp)), 0.0
        dr = _rotation_error(data.site_xmat[self.site], self.quaternion)
        return (
            np.concatenate([wp * dp, wr * dr]),
            float(np.linalg.norm(dp)),
            float(np.linalg.norm(dr)),
        )

    def jacobian(self) -> NDArray[np.float64]:
        """Weighted Jacobian of the error's rows, selected columns (after :meth:`evaluate`)."""
        mujoco.mj_jacSite(self.model, self.data, self.jacp, self.jacr, self.site)
        wp, wr = self.weights
        rows = wp * self.jacp[:, self.columns]
        if self.quaternion is None:
            return rows
        return np.vstack([rows, wr * self.jacr[:, self.columns]])

    def _outward(self, qpos: NDArray[np.float64]) -> list[NDArray[np.float64]]:
        """Unit directions of the step's space that lead past a limit the configuration is
        on: ``-e`` / ``+e`` for a hinge or slide at its low / high end, the rotation axis for
        a ball joint at its largest angle (turning about it grows the angle)."""
        size = self.columns.size
        found = []
        for k, address, low, high in self.scalars:
            sign = -1.0 if qpos[address] <= low else 1.0 if qpos[address] >= high else 0.0
            if sign:
                direction = np.zeros(size)
                direction[k] = sign
                found.append(direction)
        for k, address, limit in self.balls:
            w, axis = qpos[address], qpos[address + 1 : address + 4]
            sine = float(np.linalg.norm(axis))
            if sine > 0.0 and 2.0 * np.arctan2(sine, abs(w)) >= limit - _AT_LIMIT:
                direction = np.zeros(size)
                direction[k : k + 3] = np.sign(w or 1.0) * axis / sine
                found.append(direction)
        return found

    def step(
        self,
        qpos: NDArray[np.float64],
        jacobian: NDArray[np.float64],
        error: NDArray[np.float64],
        damping: float,
    ) -> NDArray[np.float64]:
        """The damped least-squares step, without the motions that press a joint past a
        limit it is on (taken out of the Jacobian, the step solved again): clipping them
        after the step would spoil the other joints' share of it."""
        outward = self._outward(qpos)
        projector = np.eye(self.columns.size)
        while True:
            active = jacobian @ projector
            gram = active @ active.T
            gram[np.diag_indices_from(gram)] += damping
            step = active.T @ np.linalg.solve(gram, error)
            pressing = [d for d in outward if d @ step > 1e-15]
            if not pressing:
                return step
            for direction in pressing:  # directions of distinct joints: orthogonal
                projector -= np.outer(direction, direction)
                outward = [d for d in outward if d is not direction]


def _iterate(
    problem: _Problem, q: NDArray[np.float64], damping: float, stop: tuple[int, float, float | None]
) -> tuple[tuple[NDArray[np.float64], float, float, float], int]:
    """Damped least-squares steps from ``q`` until the weighted error is below the tolerance,
    ``max_iterations`` steps were taken or :data:`_REJECTIONS` steps in a row did not improve
    (each retried from the best with ``λ`` times :data:`_DAMPING_FACTOR`; an accepted step
    divides it again, down to ``damping``). ``stop``: (max_iterations, tolerance, max_step).

    Returns:
        ``(qpos, weighted error, position error, rotation error)`` of the best configuration
        met, and the number of steps taken.
    """
    iterations, tolerance, bound = stop
    model = problem.model
    velocity = np.zeros(model.nv)
    e, dp, dr = problem.evaluate(q)
    best = (q.copy(), float(np.linalg.norm(e)), dp, dr)
    jacobian = problem.jacobian()
    damped, rejected, steps = damping, 0, 0
    while best[1] >= tolerance and steps < iterations and rejected < _REJECTIONS:
        step = problem.step(best[0], jacobian, e, damped)
        if bound is not None:
            step = np.clip(step, -bound, bound)
        velocity[:] = 0.0
        velocity[problem.columns] = step
        q = best[0].copy()
        mujoco.mj_integratePos(model, q, velocity, 1.0)
        project_to_limits(model, problem.ids, q)
        steps += 1
        trial, dp, dr = problem.evaluate(q)
        norm = float(np.linalg.norm(trial))
        if norm < best[1] - _IMPROVEMENT:  # accept; damp less again
            best, e, rejected = (q.copy(), norm, dp, dr), trial, 0
            damped = max(damping, damped / _DAMPING_FACTOR)
            jacobian = problem.jacobian()
        else:  # overshoot or no progress: retry from the best with more damping
            rejected += 1
            damped *= _DAMPING_FACTOR
    return best, steps


def _start(
    model: mujoco.MjModel, ids: tuple[int, ...], qpos: Any, data: mujoco.MjData
) -> NDArray[np.float64]:
    start = data.qpos.copy() if qpos is None else real_vector(qpos, "qpos", model.nq)
    for j in ids:
        kind = int(model.jnt_type[j])
        if kind in (int(mujoco.mjtJoint.mjJNT_BALL), int(mujoco.mjtJoint.mjJNT_FREE)):
            a = int(model.jnt_qposadr[j]) + (3 if kind == int(mujoco.mjtJoint.mjJNT_FREE) else 0)
            if np.linalg.norm(start[a : a + 4]) < 1e-9:
                raise InputError(f"qpos holds a zero quaternion for joint {model.joint(j).name!r}")
    project_to_limits(model, ids, start)
    return start


def _weights(
    position_weight: float, rotation_weight: float, *, position_only: bool
) -> tuple[float, float]:
    """The rows' weights, >= 0, at least one that counts."""
    wp = real_number(position_weight, "position_weight", low=0.0)
    wr = real_number(rotation_weight, "rotation_weight", low=0.0)
    if wp == 0.0 and (position_only or wr == 0.0):
        raise InputError("position_weight and rotation_weight leave nothing to solve for")
    return wp, wr


def solve_joints(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    site: int | str,
    joints: Any,
    position: ArrayLike,
    quaternion: ArrayLike | None = None,
    qpos: ArrayLike | None = None,
    *,
    max_iterations: int = 50,
    damping: float = 0.01,
    position_weight: float = 1.0,
    rotation_weight: float = 0.3,
    tolerance: float = 1e-3,
    max_step: float | None = None,
    quaternion_order: Literal["wxyz", "xyzw"] = "wxyz",
) -> JointSolution:
    """Configuration that puts a site at a target pose (the seed's ``solveJoints``).

    Args:
        model: The MuJoCo model (only read).
        data: Work space of the solve; its ``qpos`` and kinematics are restored.
        site: The site to move, by name or id.
        joints: Joints to move, by name or id, any type (hinge, slide, ball, free); None: the
            hinge and slide joints between the site and the world (the seed's default).
        position: Target position [m], world frame.
        quaternion: Target orientation (normalised; order by ``quaternion_order``); None:
            position only (no rotation rows).
        qpos: Start, ``model.nq`` values; default ``data.qpos``. Its selected joints are put
            in their ranges first.
        max_iterations: Most steps, >= 1.
        damping: λ > 0, added to the diagonal of ``J Jᵀ``.
        position_weight: Weight of the position rows [1/m], >= 0.
        rotation_weight: Weight of the rotation rows [1/rad], >= 0.
        tolerance: Converged when the weighted error norm is below it, >= 0.
        max_step: Bound on every velocity coordinate of one step (rad for rotations, model
            length units for slides and free translations), > 0; None: unbounded.
        quaternion_order: ``"wxyz"`` (MuJoCo, pinkctl) or ``"xyzw"`` (three.js) for
            ``quaternion``; ``qpos`` is always MuJoCo's.

    Returns:
        The best configuration met and how good it is (:class:`JointSolution`); an
        unreachable target gives the closest configuration found, with ``converged=False``.

    Raises:
        InputError: A bad model, data, site, joint, size, NaN, zero quaternion or option.
    """
    model, data = model_and_data(model, data)
    site_id = object_id(model, site, mujoco.mjtObj.mjOBJ_SITE, "site")
    ids = joint_ids(model, site_id, joints)
    goal_position = real_vector(position, "position", 3)
    order = choice(quaternion_order, "quaternion_order", ("wxyz", "xyzw"))
    goal_quaternion = None if quaternion is None else target_quaternion(quaternion, order)
    iterations = count(max_iterations, "max_iterations", low=1)
    damping = positive_number(damping, "damping")
    wp, wr = _weights(position_weight, rotation_weight, position_only=goal_quaternion is None)
    tolerance = real_number(tolerance, "tolerance", low=0.0)
    bound = None if max_step is None else positive_number(max_step, "max_step")
    q = _start(model, ids, qpos, data)

    problem = _Problem(model, data, site_id, ids, goal_position, goal_quaternion, (wp, wr))
    with restored(model, data):
        best, steps = _iterate(problem, q, damping, (iterations, tolerance, bound))
    return JointSolution(
        qpos=best[0],
        converged=best[1] < tolerance,
        position_error=best[2],
        rotation_error=best[3],
        error=best[1],
        iterations=steps,
        joint_ids=ids,
    )
