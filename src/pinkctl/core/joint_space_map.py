"""JointSpaceMap: precomputed index maps between a robot's joint space and a Pinocchio model.

A controller builds one per set of controlled joints and reads its estimates and writes its
commands through it, with a handful of vectorised numpy operations per call (conventions in
:mod:`pinkctl.core.joints`; joint kinds and indices from :mod:`pinkctl.core.joint_info`). A
controlled ball joint is three coordinates, its rotation vector (:mod:`pinkctl.core.ball_joints`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pinocchio as pin

from ..errors import InputError
from .ball_joints import ball_coordinate_names, is_ball_joint, quaternion_of, rotation_vector
from .indexing import as_index
from .joint_info import JointInfo, joint_info
from .state import JointState, name_space

__all__ = ["JointSpaceMap", "scalar_joint"]


def scalar_joint(model: pin.Model, name: str, *, what: str = "joint") -> JointInfo:
    """The joint, checked to be given by one scalar position (scalar, continuous or mimic)."""
    info = joint_info(model, name, what=what)
    if info.kind == "multi":
        raise InputError(
            f"{what} {name!r} has nq={info.nq}, nv={info.nv}: it cannot be given by one "
            "scalar position"
        )
    return info


class _Row(NamedTuple):
    """One controlled coordinate: its configuration and tangent indices, whether it is a
    continuous joint's angle, its column in the robot joint space, and its name."""

    idx_q: int
    idx_v: int
    continuous: bool
    column: int
    name: str


def _checked_names(model: Any, controlled_joint_names: Sequence[str]) -> list[str]:
    """The controlled joint names as a list, after checking ``model`` is a Pinocchio model
    and no name is repeated."""
    if not isinstance(model, pin.Model):
        raise InputError(f"model must be a pinocchio.Model, got {type(model).__name__}")
    controlled = list(controlled_joint_names)
    if len(set(controlled)) != len(controlled):
        raise InputError(f"controlled_joint_names has duplicates: {controlled}")
    return controlled


def _coordinate_rows(
    model: pin.Model, controlled: list[str], space: Any
) -> tuple[list[_Row], list[tuple[int, int]]]:
    """One row per controlled coordinate (three per ball joint), and ``(first row, idx_q)``
    of each controlled ball joint.

    Raises:
        InputError: A joint :class:`JointSpaceMap` does not take (its docstring).
    """
    rows: list[_Row] = []
    balls: list[tuple[int, int]] = []
    for name in controlled:
        if model.existJointName(name) and is_ball_joint(model, model.getJointId(name)):
            joint = model.joints[model.getJointId(name)]
            balls.append((len(rows), int(joint.idx_q)))
            rows += _ball_rows(joint, name, space)
        else:
            rows.append(_scalar_row(model, name, space))
    return rows, balls


def _ball_rows(joint: Any, name: str, space: Any) -> list[_Row]:
    """The three rows of a ball joint's rotation-vector coordinates."""
    rows = []
    for k, coordinate in enumerate(ball_coordinate_names(name)):
        if coordinate not in space.index:
            raise InputError(f"ball joint coordinate {coordinate!r} is not in robot_joint_space")
        rows.append(_Row(joint.idx_q, joint.idx_v + k, False, space.index[coordinate], coordinate))
    return rows


def _scalar_row(model: pin.Model, name: str, space: Any) -> _Row:
    """The row of a joint given by one scalar position (not a mimic joint)."""
    info = scalar_joint(model, name, what="controlled joint")
    if info.kind == "mimic":
        raise InputError(f"controlled joint {name!r} is a mimic joint; control its master instead")
    if name not in space.index:
        raise InputError(f"controlled joint {name!r} is not in robot_joint_space")
    return _Row(info.idx_q, info.idx_v, info.kind == "continuous", space.index[name], name)


class JointSpaceMap:
    """Precomputed index maps between a robot joint space and a Pinocchio model.

    Built once per controller; its methods do a handful of vectorised numpy operations per
    call, with only cheap shape checks (the controller's own inputs are already validated).

    Args:
        model: Pinocchio model.
        controlled_joint_names: Joints the controller commands, in the order used by the
            ``positions`` arguments below; each has one velocity coordinate (scalar or
            continuous joint) and is in ``robot_joint_space``, or is a ball joint whose three
            coordinates (``<joint>:x``, ``:y``, ``:z``: its rotation vector) are.
        robot_joint_space: Ordered joint names of the robot's :class:`JointState`.

    Attributes:
        coordinate_names: The names of the ``positions`` arrays: the controlled joints, a
            ball joint as its three coordinates.

    Raises:
        ValueError: If a controlled joint is unknown to the model, not in the joint space,
            repeated, a mimic joint, or a multi-coordinate joint other than a ball joint.
    """

    def __init__(
        self,
        model: pin.Model,
        controlled_joint_names: Sequence[str],
        robot_joint_space: Sequence[str],
    ) -> None:
        controlled = _checked_names(model, controlled_joint_names)
        space = name_space(robot_joint_space, "robot_joint_space")
        rows, balls = _coordinate_rows(model, controlled, space)
        coordinates = [row.name for row in rows]
        self.model = model
        self.controlled_joint_names = controlled
        self.coordinate_names = coordinates
        #: ``(first position index, idx_q)`` of each controlled ball joint.
        self.balls = tuple(balls)
        self._space = space
        self.idx_q = np.array([row.idx_q for row in rows], dtype=np.intp)
        self.idx_v = np.array([row.idx_v for row in rows], dtype=np.intp)
        self.is_continuous = np.array([row.continuous for row in rows], dtype=bool)
        self.space_indices = np.array([row.column for row in rows], dtype=np.intp)
        self.q_neutral = pin.neutral(model)
        for arr in (self.idx_q, self.idx_v, self.is_continuous, self.space_indices):
            arr.flags.writeable = False
        self.q_neutral.flags.writeable = False

        n = len(coordinates)
        self._set_selections(balls)
        # Slices where the indices are contiguous ranges (views: cheaper than fancy indexing)
        self._q_index: np.ndarray | slice = as_index(self.idx_q) if n else self.idx_q
        self._cols: np.ndarray | slice = as_index(self.space_indices) if n else self.space_indices
        self._cols_copy = isinstance(self._cols, slice)  # a slice reads a view: copy it
        # validity of the controlled positions, compared as bytes (cheaper than .all())
        self._all_valid = np.ones(n, dtype=bool).tobytes()
        valid = np.zeros((3, len(space)), dtype=bool)
        valid[0, self.space_indices] = True
        valid[1, self.space_indices] = True
        valid.flags.writeable = False
        self._valid_pos_vel = valid  # immutable, so every output state may share it
        self._foreign: tuple[Any, np.ndarray] | None = None
        self._data_shape = (3, len(space))

    def _set_selections(self, balls: list[tuple[int, int]]) -> None:
        """The positions (and their ``q`` indices) of the scalar and continuous joints, for
        :meth:`to_configuration` (``balls``: ``(first position, idx_q)`` of each ball)."""
        in_ball = np.zeros(len(self.coordinate_names), dtype=bool)
        for first, _ in balls:
            in_ball[first : first + 3] = True
        self._scalar_sel = np.flatnonzero(~self.is_continuous & ~in_ball)
        self._scalar_q = self.idx_q[self._scalar_sel]
        self._cont_sel = np.flatnonzero(self.is_continuous)
        self._cont_q = self.idx_q[self._cont_sel]
        self._all_scalar = not self.is_continuous.any() and not balls

    @property
    def robot_joint_space(self) -> list[str]:
        """The ordered joint names of the states this map reads and writes."""
        return list(self._space.names)

    def positions_from_state(self, joints: JointState | None) -> np.ndarray | None:
        """Positions of the controlled joints (controlled order) read from ``joints``.

        ``joints`` may use any joint space that contains the controlled joints. Returns None if
        ``joints`` is None or lacks a valid position for any controlled joint.
        """
        if joints is None:
            return None
        space = joints.name_space
        if space is self._space or space.names == self._space.names:
            cols: np.ndarray | slice | None = self._cols
        else:
            cols = self._foreign_columns(space)
            if cols is None:
                return None
        valid, data = joints.valid_array, joints.data_array
        if cols is self._cols:
            if valid[0, cols].tobytes() != self._all_valid:
                return None
            positions = data[0, cols]
            return positions.copy() if self._cols_copy else positions
        if not valid[0, cols].all():
            return None
        return data[0, cols]

    def _foreign_columns(self, space: Any) -> np.ndarray | None:
        """The controlled coordinates' columns in another joint space (the last one kept),
        or None when it lacks one of them."""
        if self._foreign is not None and self._foreign[0] is space:
            return self._foreign[1]
        index = space.index
        if any(name not in index for name in self.coordinate_names):
            return None
        cols = np.array([index[n] for n in self.coordinate_names], dtype=np.intp)
        self._foreign = (space, cols)
        return cols

    def to_configuration(
        self, positions: np.ndarray, q_base: np.ndarray | None = None
    ) -> np.ndarray:
        """Configuration ``q`` with the controlled joints set to ``positions``.

        Args:
            positions: (n_controlled,) float64 positions, controlled order.
            q_base: (nq,) configuration for the other joints; default ``pin.neutral``.

        Returns:
            A new (nq,) array; continuous joints written as ``(cos θ, sin θ)``, ball joints
            as the quaternion of their rotation vector.
        """
        n = self.idx_q.shape[0]
        if positions.shape != (n,):
            raise InputError(f"positions must have shape ({n},), got {positions.shape}")
        base = self.q_neutral if q_base is None else q_base
        if base.shape != (self.model.nq,):
            raise InputError(f"q_base must have shape ({self.model.nq},), got {base.shape}")
        q = np.array(base, dtype=np.float64)
        if self._all_scalar:
            q[self._q_index] = positions
        else:
            q[self._scalar_q] = positions[self._scalar_sel]
            angles = positions[self._cont_sel]
            q[self._cont_q] = np.cos(angles)
            q[self._cont_q + 1] = np.sin(angles)
            for first, index in self.balls:
                q[index : index + 4] = quaternion_of(positions[first : first + 3])
        return q

    def configuration_to_positions(self, q: np.ndarray) -> np.ndarray:
        """Controlled joint positions (controlled order) read from ``q``.

        Continuous joints give ``atan2(sin, cos)``, wrapped to (-π, π]; ball joints their
        rotation vector.
        """
        if q.shape != (self.model.nq,):
            raise InputError(f"q must have shape ({self.model.nq},), got {q.shape}")
        if self._all_scalar:
            return q[self.idx_q]
        out = np.empty(self.idx_q.shape[0])
        out[self._scalar_sel] = q[self._scalar_q]
        out[self._cont_sel] = np.arctan2(q[self._cont_q + 1], q[self._cont_q])
        for first, index in self.balls:
            out[first : first + 3] = rotation_vector(q[index : index + 4])
        return out

    def command_state(self, positions: np.ndarray, velocities: np.ndarray) -> JointState:
        """Positions and velocities of the controlled joints (controlled order) as a JointState.

        The fast path of a controller's output: the caller guarantees two finite (n,) float64
        arrays it will not write again (they are copied into a new matrix here).
        """
        data = np.zeros(self._data_shape)
        data[0, self._cols] = positions
        data[1, self._cols] = velocities
        return JointState.from_trusted(self._space, data, self._valid_pos_vel)

    def to_joint_state(
        self, velocity: np.ndarray, current_positions: np.ndarray, dt: float
    ) -> JointState:
        """One explicit Euler step of the controlled joints, as a :class:`JointState`.

        ``position = current_position + v * dt`` per controlled joint, with ``v`` read from the
        tangent velocity at the joint's ``idx_v``. For a continuous joint this continues the
        given (unwrapped) angle instead of wrapping it to (-π, π]; for every scalar joint it
        equals ``pin.integrate``.

        Args:
            velocity: (nv,) tangent velocity [rad/s or m/s].
            current_positions: (n_controlled,) current positions, controlled order.
            dt: Step length [s].

        Returns:
            A JointState over the robot joint space with valid positions and velocities for
            the controlled joints only.

        Raises:
            ValueError: On a wrong shape or a non-finite result.
        """
        if velocity.shape != (self.model.nv,):
            raise InputError(f"velocity must have shape ({self.model.nv},), got {velocity.shape}")
        n = self.idx_v.shape[0]
        if current_positions.shape != (n,):
            raise InputError(
                f"current_positions must have shape ({n},), got {current_positions.shape}"
            )
        v = velocity[self.idx_v]
        data = np.zeros(self._data_shape)
        data[0, self._cols] = current_positions + v * dt
        data[1, self._cols] = v
        if not np.isfinite(data).all():
            raise InputError("joint state from velocity contains NaN or infinite values")
        return JointState.from_trusted(self._space, data, self._valid_pos_vel)
