"""Position servos of a compiled model, addressed by joint name, with velocity feed-forward.

:func:`~pinkctl.sim.scene.build_spec` gives every actuated joint a position servo named like
the joint,

.. math::

    \\tau = k_p (u - q) - k_v \\dot{q} - d \\dot{q},

(``gainprm[0] = kp``, ``biasprm[2] = -kv``, ``d`` the joint's own damping), and every other
scalar joint a *hold* servo (named ``hold:<joint>``) that keeps it where the last reset put it.
Commanding :math:`u = q_{des} + ((k_v + d) / k_p) \\dot{q}_{des}` turns the damping terms into
:math:`(k_v + d) (\\dot{q}_{des} - \\dot{q})`: the servo tracks a velocity as well.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import mujoco
import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from .scene import HOLD_PREFIX

__all__ = ["PositionServos"]


class PositionServos:
    """The servos of a model's actuated joints, and the hold servos of the others.

    Args:
        model: The compiled model.
        joint_names: Joints with a position servo of the same name, in command order.
        dof_addresses: Velocity address of each scalar joint (for its damping).
    """

    def __init__(
        self, model: mujoco.MjModel, joint_names: Sequence[str], dof_addresses: Mapping[str, int]
    ) -> None:
        self.model = model
        self.joint_names = list(joint_names)
        #: MuJoCo actuator id of each actuated joint.
        self.actuator_of = {
            n: int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, n))
            for n in self.joint_names
        }
        self._joint_damping = {n: float(model.dof_damping[a]) for n, a in dof_addresses.items()}
        self._holds = [
            (i, int(model.jnt_qposadr[model.actuator_trnid[i, 0]]))
            for i in range(model.nu)
            if (model.actuator(i).name or "").startswith(HOLD_PREFIX)
        ]

    def hold(self, data: mujoco.MjData, qpos_addresses: Mapping[str, int]) -> None:
        """Command every servo (actuated joints and holds) to its joint's current position."""
        for name, actuator in self.actuator_of.items():
            data.ctrl[actuator] = data.qpos[qpos_addresses[name]]
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
        pos = np.asarray(positions, dtype=float).reshape(-1)
        if pos.shape != (len(names),) or not np.all(np.isfinite(pos)):
            raise InputError(f"positions must be {len(names)} finite numbers, got {positions!r}")
        unknown = [n for n in names if n not in self.actuator_of]
        if unknown:
            raise InputError(f"joints {unknown} have no actuator; actuated: {self.joint_names}")
        vel = None
        if velocities is not None:
            vel = np.asarray(velocities, dtype=float).reshape(-1)
            if vel.shape != pos.shape or not np.all(np.isfinite(vel)):
                raise InputError(f"velocities must be {len(names)} finite numbers")
        for k, n in enumerate(names):
            actuator = self.actuator_of[n]
            u = pos[k]
            if vel is not None:
                # read the gains now: a caller may have changed them since the build
                gain_p = self.model.actuator_gainprm[actuator, 0]
                gain_v = -self.model.actuator_biasprm[actuator, 2] + self._joint_damping[n]
                u += gain_v / gain_p * vel[k]
            data.ctrl[actuator] = u
