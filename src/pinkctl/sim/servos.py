"""Position servos of a compiled model, addressed by joint name, with velocity feed-forward.

:func:`~pinkctl.sim.scene.build_spec` gives every actuated joint a position servo: the
description's own position actuator on that joint when it has one (an MJCF's
``<position joint=...>``, its own gains), else one named like the joint,

.. math::

    \\tau = k_p (u - q) - k_v \\dot{q} - d \\dot{q},

(``gainprm[0] = kp``, ``biasprm[2] = -kv``, ``d`` the joint's own damping); a ball joint
three, named like its coordinates (``<joint>:x`` ..., gear along each axis: MuJoCo's length
of a ball-joint actuator is that component of the rotation vector). Every other scalar joint
of the robot gets a *hold* servo (named ``hold:<joint>``), or keeps the description's own
position actuator, that holds it where the last reset put it.
Commanding :math:`u = q_{des} + ((k_v + d) / k_p) \\dot{q}_{des}` turns the damping terms into
:math:`(k_v + d) (\\dot{q}_{des} - \\dot{q})`: the servo tracks a velocity as well.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from .coordinates import JointCoordinates
from .scene_servos import HOLD_PREFIX

__all__ = ["PositionServos", "is_position_servo"]


def is_position_servo(model: mujoco.MjModel, actuator: int) -> bool:
    """Whether ``actuator`` is a plain position servo on one joint: joint transmission,
    unit gear on its axis, fixed gain ``kp > 0`` and affine bias ``-kp q - kv q̇``."""
    kp = float(model.actuator_gainprm[actuator, 0])
    return (
        int(model.actuator_trntype[actuator]) == int(mujoco.mjtTrn.mjTRN_JOINT)
        and int(model.actuator_gaintype[actuator]) == int(mujoco.mjtGain.mjGAIN_FIXED)
        and int(model.actuator_biastype[actuator]) == int(mujoco.mjtBias.mjBIAS_AFFINE)
        and kp > 0.0
        and float(model.actuator_biasprm[actuator, 1]) == -kp
        and float(model.actuator_gear[actuator, 0]) == 1.0
    )


def _servos_by_joint(model: mujoco.MjModel) -> dict[int, list[int]]:
    """The model's position servos (:func:`is_position_servo`) by the id of their joint."""
    servos: dict[int, list[int]] = {}
    for i in range(model.nu):
        if is_position_servo(model, i):
            servos.setdefault(int(model.actuator_trnid[i, 0]), []).append(i)
    return servos


def _servo_of(
    model: mujoco.MjModel,
    name: str,
    coordinates: JointCoordinates,
    servos: dict[int, list[int]],
) -> int:
    """The actuator id commanding ``name``: the actuator named like it, else the first
    position servo on that (scalar) joint, else -1."""
    actuator = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
    if actuator < 0 and not coordinates.is_ball(name):
        actuator = next(iter(servos.get(coordinates.joint_id.get(name, -1), [])), -1)
    return int(actuator)


def _holds(
    model: mujoco.MjModel, coordinates: JointCoordinates, held_joints: Sequence[str]
) -> list[tuple[int, int]]:
    """``(actuator, qpos address)`` of every servo holding a joint where the last reset put
    it: the ``hold:`` servos and the position servos of ``held_joints``."""
    held = {coordinates.joint_id[n] for n in held_joints if n in coordinates.joint_id}
    return [
        (i, int(model.jnt_qposadr[model.actuator_trnid[i, 0]]))
        for i in range(model.nu)
        if (model.actuator(i).name or "").startswith(HOLD_PREFIX)
        or (int(model.actuator_trnid[i, 0]) in held and is_position_servo(model, i))
    ]


class PositionServos:
    """The servos of a model's actuated joints, and those holding other joints.

    Args:
        model: The compiled model.
        joint_names: Joints (or ball coordinates) with a position servo, in command order:
            the actuator named like each, else a position servo on the joint
            (:func:`is_position_servo`).
        coordinates: The model's joint coordinates.
        held_joints: Joints whose own position servos hold them at their reset position
            (besides the ``hold:`` servos).

    Raises:
        InputError: A joint without a position servo.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        joint_names: Sequence[str],
        coordinates: JointCoordinates,
        held_joints: Sequence[str] = (),
    ) -> None:
        self.model = model
        self.joint_names = list(joint_names)
        self._coordinates = coordinates
        servos = _servos_by_joint(model)
        #: MuJoCo actuator id of each actuated joint.
        self.actuator_of = {
            name: _servo_of(model, name, coordinates, servos) for name in self.joint_names
        }
        missing = [name for name, actuator in self.actuator_of.items() if actuator < 0]
        if missing:
            raise InputError(f"joints {missing} have no position servo in the model")
        self._holds = _holds(model, coordinates, held_joints)

    def hold(self, data: mujoco.MjData) -> None:
        """Command every servo (actuated joints and holds) to its joint's current position."""
        names = self.joint_names
        for name, value in zip(names, self._coordinates.positions(data, names)):
            data.ctrl[self.actuator_of[name]] = value
        for actuator, address in self._holds:
            data.ctrl[actuator] = data.qpos[address]

    def command(
        self,
        data: mujoco.MjData,
        names: Sequence[str],
        positions: ArrayLike,
        velocities: ArrayLike | None = None,
    ) -> None:
        """Write the servo inputs ``u`` of ``names``: positions [rad] or [m], plus the
        feed-forward of ``velocities`` [rad/s] or [m/s] when given (see the module docstring).

        Raises:
            InputError: Positions or velocities that are not one finite number per name, or a
                joint without a servo (nothing is written).
        """
        names = list(names)
        pos, vel = self._checked(names, positions, velocities)
        for k, n in enumerate(names):
            actuator = self.actuator_of[n]
            u = pos[k]
            if vel is not None:
                u += self._feed_forward_gain(actuator, n) * vel[k]
            data.ctrl[actuator] = u

    def _checked(
        self, names: list[str], positions: ArrayLike, velocities: ArrayLike | None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """``(positions, velocities)`` of :meth:`command` as flat float arrays (velocities
        ``None`` when not given), after its checks."""
        pos = np.asarray(positions, dtype=float).reshape(-1)
        if pos.shape != (len(names),) or not np.all(np.isfinite(pos)):
            raise InputError(f"positions must be {len(names)} finite numbers, got {positions!r}")
        unknown = [n for n in names if n not in self.actuator_of]
        if unknown:
            raise InputError(f"joints {unknown} have no actuator; actuated: {self.joint_names}")
        if velocities is None:
            return pos, None
        vel = np.asarray(velocities, dtype=float).reshape(-1)
        if vel.shape != pos.shape or not np.all(np.isfinite(vel)):
            raise InputError(f"velocities must be {len(names)} finite numbers")
        return pos, vel

    def _feed_forward_gain(self, actuator: int, name: str) -> float:
        """``(kv + d) / kp`` of a servo [s] (module docstring), read now: a caller may have
        changed the gains since the build."""
        gain_p = self.model.actuator_gainprm[actuator, 0]
        damping = self.model.dof_damping[self._coordinates.dof_address[name]]
        gain_v = -self.model.actuator_biasprm[actuator, 2] + damping
        return gain_v / gain_p
