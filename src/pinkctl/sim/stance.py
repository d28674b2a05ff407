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
from scipy.optimize import nnls

__all__ = ["FRICTION", "REGULARISATION", "StanceCompensation"]

#: Friction coefficient of the contact forces' pyramid (below the floor's 1: forces that hold).
FRICTION = 0.5
#: Weight of the forces' norm, relative to the balance's (spreads the load over the contacts).
REGULARISATION = 1e-3
_PYRAMID = np.array([[FRICTION, -FRICTION, 0, 0], [0, 0, FRICTION, -FRICTION], [1, 1, 1, 1.0]])


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

    def contacts(self, data: mujoco.MjData) -> list[tuple[int, np.ndarray]]:
        """The robot's contacts with the floor now: (body id, world point)."""
        model, floor = self._model, self._floor
        found = []
        for contact in data.contact[: data.ncon]:
            if floor in (contact.geom1, contact.geom2):
                other = contact.geom2 if contact.geom1 == floor else contact.geom1
                found.append((int(model.geom_bodyid[other]), contact.pos.copy()))
        return found

    def feet(self, data: mujoco.MjData) -> list[int]:
        """The bodies touching the floor now (ids, sorted)."""
        return sorted({body for body, _ in self.contacts(data)})

    def torques(self, data: mujoco.MjData) -> np.ndarray:
        """``τ`` of the robot's joints at ``data``'s last forward pass (module docstring)."""
        contacts = self.contacts(data)
        bias = data.qfrc_bias[: self._n]
        if not contacts:
            return np.zeros(self._n - 6)
        jacobians = []
        for body, point in contacts:
            jacobian = np.zeros((3, self._model.nv))
            mujoco.mj_jac(self._model, data, jacobian, None, point, body)
            jacobians.append(jacobian[:, : self._n])
        # every contact's force a non-negative sum of its friction pyramid's edges
        A = np.hstack([J[:, :6].T @ _PYRAMID for J in jacobians])
        scale = np.linalg.norm(A)
        weights = np.vstack([A, REGULARISATION * scale * np.eye(A.shape[1])])
        target = np.concatenate([bias[:6], np.zeros(A.shape[1])])
        edges = nnls(weights, target, maxiter=50 * A.shape[1])[0]
        forces = edges.reshape(len(contacts), _PYRAMID.shape[1])
        torques = bias[6:].copy()
        for J, f in zip(jacobians, forces):
            torques -= J[:, 6:].T @ (_PYRAMID @ f)
        return torques

    def apply(self, data: mujoco.MjData) -> None:
        """Write :meth:`torques` into ``data.qfrc_applied`` (the robot's joints)."""
        data.qfrc_applied[6 : self._n] = self.torques(data)

    def step(self, data: mujoco.MjData, n: int) -> None:
        """Advance ``n`` physics steps, the torques refreshed before each."""
        for _ in range(n):
            self.apply(data)
            mujoco.mj_step(self._model, data)
