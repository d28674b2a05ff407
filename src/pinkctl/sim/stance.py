"""Gravity compensation of a floating-base robot standing on the floor.

A fixed-base arm compensates gravity body by body (``gravcomp = 1``, as its firmware does).
A humanoid cannot: its weight must go through its feet into the floor, or it floats. Its
bodies keep their weight, and the joints get the quasi-static torques that carry it instead,
as a humanoid's whole-body controller feeds them forward from its model and foot sensors:

.. math::

    J_{b}^T F = g_b, \\qquad \\tau = g_j - J_{j}^T F,

where ``g = qfrc_bias`` (gravity; Coriolis terms vanish at rest) splits into the free joint's
rows ``g_b`` and the joints' rows ``g_j``, and ``J = [J_b  J_j]`` stacks the 6-D Jacobians of the
bodies touching the floor (at their origins). ``F`` is the least-norm set of wrenches of those
bodies that carries the whole weight; ``τ`` goes to ``qfrc_applied`` of the joints, so the
position servos only correct what is not quasi-static. In the air (no body touching the
floor) nothing is applied.
"""

from __future__ import annotations

import mujoco
import numpy as np

__all__ = ["StanceCompensation"]


class StanceCompensation:
    """The joints' feed-forward of a standing floating-base robot (module docstring).

    Args:
        model: The compiled model; its first joint is the robot's free joint.
        floor: Name of the floor geom.
        floor: Name of the floor geom.

    The robot's degrees of freedom are those of the free joint's tree (the free joint's 6
    first); other trees (scene objects) get no torque.
    """

    def __init__(self, model: mujoco.MjModel, floor: str) -> None:
        self._model = model
        self._floor = int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, floor))
        root = int(model.body_rootid[model.jnt_bodyid[0]])
        tree = model.body_rootid[model.dof_bodyid] == root
        self._n = int(np.flatnonzero(tree)[-1]) + 1
        self._jacobian = np.zeros((6, model.nv))

    def feet(self, data: mujoco.MjData) -> list[int]:
        """The bodies touching the floor now (ids, sorted)."""
        model, floor = self._model, self._floor
        touching = set()
        for contact in data.contact[: data.ncon]:
            if contact.geom1 == floor:
                touching.add(int(model.geom_bodyid[contact.geom2]))
            elif contact.geom2 == floor:
                touching.add(int(model.geom_bodyid[contact.geom1]))
        return sorted(touching)

    def torques(self, data: mujoco.MjData) -> np.ndarray:
        """``τ`` of the robot's joints (``robot_dofs - 6``) at ``data``'s last forward pass."""
        feet = self.feet(data)
        bias = data.qfrc_bias[: self._n]
        if not feet:
            return np.zeros(self._n - 6)
        rows = []
        for body in feet:
            jacobian = self._jacobian
            mujoco.mj_jacBody(self._model, data, jacobian[:3], jacobian[3:], body)
            rows.append(jacobian[:, : self._n].copy())
        stacked = np.vstack(rows)
        wrenches = np.linalg.lstsq(stacked[:, :6].T, bias[:6], rcond=None)[0]
        return bias[6:] - stacked[:, 6:].T @ wrenches

    def apply(self, data: mujoco.MjData) -> None:
        """Write :meth:`torques` into ``data.qfrc_applied`` (the robot's joints)."""
        data.qfrc_applied[6 : self._n] = self.torques(data)
