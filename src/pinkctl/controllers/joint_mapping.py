"""How an IK controller's joint space maps onto its robot model.

The controller commands the robot's controlled joints; joints with a coordinate of their own
that it does not command (e.g. fingers) are read from the estimate every tick and held in the
model; a floating base's 6 velocity coordinates are QP variables too (first), integrated by
:class:`~pinkctl.controllers.floating_base.FloatingBase`. A ball joint is three coordinates
of the joint space, its rotation vector (:mod:`pinkctl.core.ball_joints`); its three tangent
velocities (the angular velocity) are QP variables, and the command integrates them as the
rates of the rotation vector (:meth:`JointMapping.chart_velocity`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.ball_joints import ball_coordinate_names, is_ball_joint, rotation_rate
from ..core.joints import JointSpaceMap
from ..core.robot import PinkRobot
from ..core.state import JointState
from ..errors import InputError
from ..motion.shaper import MotionShaper
from .floating_base import FloatingBase

__all__ = ["JointMapping"]


class JointMapping:
    """The joint maps of a controller over ``joint_space``.

    Args:
        robot: The robot.
        joint_space: The joint names of the states the controller reads and writes.

    Attributes:
        controlled: Map of the controlled joints (their order is the command's).
        passive: Map of the joints read from the estimate and held, or None.
        every: Map of the controlled then the passive joints (the usual estimate has them
            all: one read); the controlled map without passive joints.
        base: The floating base, or None.
        n_base: Number of QP variables of the base (6 or 0).
        qp_columns: Tangent index of each QP variable: base first, then the controlled joints.
        continuous: Positions (in controlled order) of the controlled joints without a range.
        n_controlled: Number of controlled positions (a ball joint counts 3).

    Raises:
        InputError: A controlled joint missing from ``joint_space``.
    """

    def __init__(self, robot: PinkRobot, joint_space: Sequence[str]) -> None:
        model = robot.model
        controlled = list(robot.controlled_joint_names)

        def in_space(name: str) -> bool:
            if model.existJointName(name) and is_ball_joint(model, model.getJointId(name)):
                return all(c in joint_space for c in ball_coordinate_names(name))
            return name in joint_space

        missing = [j for j in controlled if not in_space(j)]
        if missing:
            raise InputError(
                f"controlled joints {missing} are not in robot_joint_space {list(joint_space)}"
            )
        self.controlled = JointSpaceMap(model, controlled, joint_space)
        passive = [
            name
            for j, name in enumerate(model.names)
            if j > 0
            if name not in controlled
            and in_space(name)
            and (model.joints[model.getJointId(name)].nv == 1 or is_ball_joint(model, j))
        ]
        self.passive = JointSpaceMap(model, passive, joint_space) if passive else None
        self.every = (
            JointSpaceMap(model, controlled + passive, joint_space) if passive else self.controlled
        )
        self.base = FloatingBase(robot.q0) if robot.floating_base else None
        self.n_base = 6 if self.base is not None else 0
        self.qp_columns = np.concatenate(
            [np.arange(self.n_base), np.asarray(self.controlled.idx_v)]
        ).astype(np.intp)
        self.continuous = np.flatnonzero(self.controlled.is_continuous)
        self.n_controlled = int(self.controlled.idx_v.size)

    def read_partial(
        self, joints: JointState | None, q_home: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | str:
        """The controlled positions and ``q`` of an estimate without every passive joint
        (those missing keep ``q_home``), or why not (no joint state, a controlled position
        missing)."""
        if joints is None:
            return "estimated state has no joint state"
        positions = self.controlled.positions_from_state(joints)
        if positions is None:
            return (
                "estimated state lacks a valid position for some of the controlled joints "
                f"{self.controlled.controlled_joint_names}"
            )
        q_base = q_home
        if self.passive is not None:
            passive = self.passive.positions_from_state(joints)
            if passive is not None:
                q_base = self.passive.to_configuration(passive, q_base)
        return positions, self.controlled.to_configuration(positions, q_base)

    def posture(self, joints: JointState, q_home: np.ndarray) -> np.ndarray | None:
        """The configuration of a complete joint setpoint (every controlled joint; the others
        at ``q_home``), or None."""
        positions = self.controlled.positions_from_state(joints)
        return None if positions is None else self.controlled.to_configuration(positions, q_home)

    def chart_velocity(self, velocity: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The controlled joints' velocities (``velocity``, controlled order) as rates of their
        positions at ``positions``: a ball joint's angular velocity becomes the rate of its
        rotation vector (:func:`~pinkctl.core.ball_joints.rotation_rate`), so that integrating
        the positions follows the rotation (a new array)."""
        rates = np.array(velocity, dtype=np.float64)
        for first, _ in self.controlled.balls:
            part = slice(first, first + 3)
            rates[part] = rotation_rate(positions[part], velocity[part])
        return rates

    def follow_winding(self, measured: np.ndarray, shaper: MotionShaper) -> None:
        """Re-anchor the command sequence of the continuous joints on the measured winding
        (whole turns apart: a sensor that unwraps differently)."""
        index = self.continuous
        turns = np.round((measured[index] - shaper.position[index]) / (2.0 * np.pi))
        if np.any(turns):
            every = np.zeros(self.n_controlled)
            every[index] = turns
            shaper.rewind(every)
