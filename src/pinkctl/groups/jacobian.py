"""A group's error vector and its exact Jacobian, with row and column metadata.

For an element with tip ``T``, target ``G`` and constraint base ``C`` (world poses at ``q``;
``d = p_T - p_G``, ``M = R_G^T R_T``; the error is defined in :mod:`pinkctl.groups.element`),
with ``J_v, J_ω`` the frames' LOCAL_WORLD_ALIGNED linear and angular Jacobians:

.. math::

    \\frac{\\partial e_p}{\\partial q} = R_C^T \\big(J_{v,T} - J_{v,G} + [d]_\\times J_{ω,C}\\big),
    \\qquad
    \\frac{\\partial e_r}{\\partial q} = J_{\\log_3}(M)\\, R_T^T \\big(J_{ω,T} - J_{ω,G}\\big)

(``d(R_C^T d)/dt = R_C^T (\\dot d - ω_C × d)`` and ``\\dot M = M [R_T^T (ω_T - ω_G)]_×``). So
targets and constraint bases that move with the joints are differentiated too, and the
Jacobian is exact, not only at the solution. Columns are the layout's velocity coordinates,
dependent joints folded into their masters (:mod:`pinkctl.groups.layout`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .layout import Column, ElementLayout, Layout, Row
from .scene import KinematicScene

__all__ = ["Evaluation", "GroupError", "GroupJacobian", "evaluate"]

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@dataclass
class GroupJacobian:
    """A group's Jacobian and error at one configuration.

    Attributes:
        J: Jacobian (m, n): rows are constrained axes, columns joint velocity coordinates.
        e: Error (m,), ``tip - target`` (see :mod:`pinkctl.groups.element`).
        rows: Which element and axis each row is.
        columns: Which joint and coordinate each column is.
    """

    J: np.ndarray
    e: np.ndarray
    rows: tuple[Row, ...]
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class GroupError:
    """A group's error vector ``e`` (m,) and the element and axis of each row."""

    e: np.ndarray
    rows: tuple[Row, ...]


@dataclass
class Evaluation:
    """Error, Jacobian (None when not asked) and per-element precision at a configuration.

    Attributes:
        e: Unweighted error (m,).
        J: Unweighted Jacobian (m, n), or None.
        linear: Per enabled element, the norm of its constrained position rows [m].
        angular: Per enabled element, the norm of its constrained rotation rows [rad].
    """

    e: np.ndarray
    J: np.ndarray | None
    linear: np.ndarray
    angular: np.ndarray

    def within(self, layout: Layout) -> tuple[bool, bool]:
        """Whether every element meets its linear, and its angular, precision."""
        linear = all(
            err <= el.precision[0] for err, el in zip(self.linear.tolist(), layout.elements)
        )
        angular = all(
            err <= el.precision[1] for err, el in zip(self.angular.tolist(), layout.elements)
        )
        return linear, angular


def _element_terms(
    model: pin.Model, data: pin.Data, element: ElementLayout, jacobian: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """The 6-vector error and its (6, nv) Jacobian (module docstring)."""
    tip, target = data.oMf[element.tip], data.oMf[element.target]
    R_c = data.oMf[element.constraint_base].rotation
    d = tip.translation - target.translation
    M = target.rotation.T @ tip.rotation
    e = np.concatenate([R_c.T @ d, pin.log3(M)])
    if not jacobian:
        return e, None
    J_tip = pin.getFrameJacobian(model, data, element.tip, _LWA)
    if model.frames[element.target].parentJoint != 0:
        J_tip = J_tip - pin.getFrameJacobian(model, data, element.target, _LWA)
    linear = J_tip[:3]
    if model.frames[element.constraint_base].parentJoint != 0:
        J_c = pin.getFrameJacobian(model, data, element.constraint_base, _LWA)
        linear = linear + pin.skew(d) @ J_c[3:]
    J = np.vstack([R_c.T @ linear, pin.Jlog3(M) @ tip.rotation.T @ J_tip[3:]])
    return e, J


def evaluate(scene: KinematicScene, layout: Layout, q: np.ndarray, *, jacobian: bool) -> Evaluation:
    """Error (and Jacobian) of the layout's rows at configuration ``q`` (dependencies already
    applied), computed on the scene's data."""
    model, data = scene.model, scene.data
    if jacobian:
        pin.computeJointJacobians(model, data, q)  # forward kinematics included
    else:
        pin.forwardKinematics(model, data, q)
    pin.updateFramePlacements(model, data)
    errors, blocks = [], []
    linear, angular = [], []
    for element in layout.elements:
        e6, J6 = _element_terms(model, data, element, jacobian)
        e = e6[element.components]
        errors.append(e)
        linear.append(float(np.linalg.norm(e[element.linear])))
        angular.append(float(np.linalg.norm(e[~element.linear])))
        if J6 is not None:
            blocks.append(J6[element.components])
    J = None
    if jacobian:
        full = np.vstack(blocks) if blocks else np.zeros((0, model.nv))
        for fold in layout.folds:
            slope = fold.law.derivative(float(q[fold.master_q]), fold.joint)
            full[:, fold.master_v] += slope * full[:, fold.dependent_v]
        J = full[:, layout.v_indices]
    return Evaluation(
        e=np.concatenate(errors) if errors else np.zeros(0),
        J=J,
        linear=np.array(linear),
        angular=np.array(angular),
    )
