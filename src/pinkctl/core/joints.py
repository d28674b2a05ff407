"""Conversions between pinkctl's named states and Pinocchio's vectors.

Poses: a position (3,) in m and a quaternion (4,) ordered **(w, x, y, z)** (the MuJoCo and
Isaac Sim convention) map to and from a ``pin.SE3`` ``T`` with ``T.translation = position``
and ``T.rotation = R(q)``.

Joints: a pinkctl joint position is one scalar per joint (rad or m). Pinocchio's
configuration ``q`` (size ``model.nq``) and tangent velocity ``v`` (size ``model.nv``) index
joints differently:

- revolute, prismatic, helical joints: one coordinate, ``q[idx_q] = angle``;
- continuous (unbounded revolute) joints: two coordinates ``(cos θ, sin θ)`` and one
  velocity; the angle is recovered with ``atan2(sin, cos)``, i.e. wrapped to (-π, π];
- mimic joints (``mimic=True`` parsing): no coordinate of their own (``nq = nv = 0``);
  Pinocchio computes them as ``scaling * q_master + offset``, so inputs for them are skipped;
- free, ball, planar and other multi-coordinate joints cannot be given by one scalar and are
  rejected with ``ValueError``.

:class:`JointSpaceMap` precomputes these index maps once for a set of controlled joints and
a robot joint space, and offers allocation-light methods for the control loop; the functions
below wrap it (or loop over the model) for one-off use. The Isaac Sim PINK extension names are
kept as aliases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pinocchio as pin

from ..errors import InputError
from .indexing import as_index
from .joint_info import JointInfo, joint_info
from .state import JointState, name_space

__all__ = [
    "JointSpaceMap",
    "configuration_to_joint_positions",
    "joint_positions_to_configuration",
    "map_joint_positions_to_pinocchio",
    "map_pinocchio_velocity_to_joint_state",
    "velocity_to_joint_state",
]


def _real_vector(value: Any, size: int | None, what: str) -> np.ndarray:
    """``value`` as a finite float64 1-D array (of ``size`` elements if given)."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{what}: cannot read as an array: {exc}") from exc
    if arr.dtype.kind not in "fiu":
        raise InputError(f"{what} must hold real numbers, got dtype {arr.dtype}")
    arr = np.array(arr, dtype=np.float64).reshape(-1)
    if size is not None and arr.size != size:
        raise InputError(f"{what} must have {size} elements, got {arr.size}")
    if not np.isfinite(arr).all():
        raise InputError(f"{what} contains NaN or infinite values")
    return arr


def _scalar_joint(model: pin.Model, name: str, *, what: str = "joint") -> JointInfo:
    """The joint, checked to be given by one scalar position (scalar, continuous or mimic)."""
    info = joint_info(model, name, what=what)
    if info.kind == "multi":
        raise InputError(
            f"{what} {name!r} has nq={info.nq}, nv={info.nv}: it cannot be given by one "
            "scalar position"
        )
    return info


def _scalar_from_q(model: pin.Model, info: JointInfo, q: np.ndarray) -> float:
    if info.kind == "scalar":
        return float(q[info.idx_q])
    if info.kind == "continuous":
        return float(np.arctan2(q[info.idx_q + 1], q[info.idx_q]))
    mimic = model.joints[model.getJointId(info.name)].extract()
    scaling, offset = getattr(mimic, "scaling", None), getattr(mimic, "offset", None)
    masters = [j for j in model.joints[1:] if j.nq == 1 and j.nv == 1 and j.idx_q == mimic.idx_q]
    if scaling is None or offset is None or len(masters) != 1:
        raise InputError(f"mimic joint {info.name!r}: cannot find a single-coordinate master")
    return float(scaling * q[mimic.idx_q] + offset)


def joint_positions_to_configuration(
    joint_names: Sequence[str],
    joint_positions: Any,
    model: pin.Model,
    q_current: Any = None,
) -> np.ndarray:
    """Write named scalar joint positions into a Pinocchio configuration vector.

    Args:
        joint_names: Joint names, one per entry of ``joint_positions``; unique.
        joint_positions: Positions [rad or m], same length as ``joint_names``, finite.
        model: Pinocchio model.
        q_current: Configuration (``model.nq``) supplying every joint not named; default
            ``pin.neutral(model)``. It is copied, never modified.

    Returns:
        The configuration ``q`` (``model.nq``). Names that are not joints of the model are
        skipped; continuous joints become ``(cos θ, sin θ)``; mimic joints are skipped
        (Pinocchio derives them from their master).

    Raises:
        ValueError: On a length mismatch, duplicate names, NaN/inf, a ``q_current`` of the
            wrong size, or a named multi-coordinate joint (free, ball, planar, ...).
    """
    names = list(joint_names)
    positions = _real_vector(joint_positions, len(names), "joint_positions")
    if len(set(names)) != len(names):
        raise InputError(f"joint_names has duplicates: {names}")
    if q_current is None:
        q = pin.neutral(model)
    else:
        q = _real_vector(q_current, model.nq, "q_current")
    for name, value in zip(names, positions, strict=True):
        if not model.existJointName(name):
            continue
        info = _scalar_joint(model, name)
        if info.kind == "scalar":
            q[info.idx_q] = value
        elif info.kind == "continuous":
            q[info.idx_q] = np.cos(value)
            q[info.idx_q + 1] = np.sin(value)
    return q


def configuration_to_joint_positions(
    q: Any, model: pin.Model, joint_names: Sequence[str]
) -> np.ndarray:
    """Read scalar joint positions out of a Pinocchio configuration.

    Args:
        q: Configuration (``model.nq``), finite.
        model: Pinocchio model.
        joint_names: Joints to read, all in the model.

    Returns:
        One position per name [rad or m]. Continuous joints give ``atan2(sin, cos)`` in
        (-π, π]; mimic joints give ``scaling * q_master + offset``.

    Raises:
        ValueError: If ``q`` has the wrong size or NaN/inf, a name is not a joint of the model,
            or a joint has several coordinates.
    """
    qv = _real_vector(q, model.nq, "q")
    out = np.empty(len(joint_names))
    for k, name in enumerate(joint_names):
        if not model.existJointName(name):
            raise InputError(f"joint {name!r} is not in the model")
        out[k] = _scalar_from_q(model, _scalar_joint(model, name), qv)
    return out


class JointSpaceMap:
    """Precomputed index maps between a robot joint space and a Pinocchio model.

    Built once per controller; its methods do a handful of vectorised numpy operations per
    call, with only cheap shape checks (the controller's own inputs are already validated).

    Args:
        model: Pinocchio model.
        controlled_joint_names: Joints the controller commands, in the order used by the
            ``positions`` arguments below; each has one velocity coordinate (scalar or
            continuous joint) and is in ``robot_joint_space``.
        robot_joint_space: Ordered joint names of the robot's :class:`JointState`.

    Raises:
        ValueError: If a controlled joint is unknown to the model, not in the joint space,
            repeated, a mimic joint, or a multi-coordinate joint.
    """

    def __init__(
        self,
        model: pin.Model,
        controlled_joint_names: Sequence[str],
        robot_joint_space: Sequence[str],
    ) -> None:
        if not isinstance(model, pin.Model):
            raise InputError(f"model must be a pinocchio.Model, got {type(model).__name__}")
        controlled = list(controlled_joint_names)
        if len(set(controlled)) != len(controlled):
            raise InputError(f"controlled_joint_names has duplicates: {controlled}")
        space = name_space(robot_joint_space, "robot_joint_space")
        idx_q, idx_v, kinds, cols = [], [], [], []
        for name in controlled:
            info = _scalar_joint(model, name, what="controlled joint")
            if info.kind == "mimic":
                raise InputError(
                    f"controlled joint {name!r} is a mimic joint; control its master instead"
                )
            if name not in space.index:
                raise InputError(f"controlled joint {name!r} is not in robot_joint_space")
            idx_q.append(info.idx_q)
            idx_v.append(info.idx_v)
            kinds.append(info.kind == "continuous")
            cols.append(space.index[name])
        self.model = model
        self.controlled_joint_names = controlled
        self._space = space
        self.idx_q = np.array(idx_q, dtype=np.intp)
        self.idx_v = np.array(idx_v, dtype=np.intp)
        self.is_continuous = np.array(kinds, dtype=bool)
        self.space_indices = np.array(cols, dtype=np.intp)
        self.q_neutral = pin.neutral(model)
        for arr in (self.idx_q, self.idx_v, self.is_continuous, self.space_indices):
            arr.flags.writeable = False
        self.q_neutral.flags.writeable = False

        n = len(controlled)
        self._scalar_sel = np.flatnonzero(~self.is_continuous)
        self._scalar_q = self.idx_q[self._scalar_sel]
        self._cont_sel = np.flatnonzero(self.is_continuous)
        self._cont_q = self.idx_q[self._cont_sel]
        self._all_scalar = not self.is_continuous.any()
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
            cols: np.ndarray | slice = self._cols
        elif self._foreign is not None and self._foreign[0] is space:
            cols = self._foreign[1]
        else:
            index = space.index
            if any(name not in index for name in self.controlled_joint_names):
                return None
            cols = np.array([index[n] for n in self.controlled_joint_names], dtype=np.intp)
            self._foreign = (space, cols)
        valid, data = joints.valid_array, joints.data_array
        if cols is self._cols:
            if valid[0, cols].tobytes() != self._all_valid:
                return None
            positions = data[0, cols]
            return positions.copy() if self._cols_copy else positions
        if not valid[0, cols].all():
            return None
        return data[0, cols]

    def to_configuration(
        self, positions: np.ndarray, q_base: np.ndarray | None = None
    ) -> np.ndarray:
        """Configuration ``q`` with the controlled joints set to ``positions``.

        Args:
            positions: (n_controlled,) float64 positions, controlled order.
            q_base: (nq,) configuration for the other joints; default ``pin.neutral``.

        Returns:
            A new (nq,) array; continuous joints written as ``(cos θ, sin θ)``.
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
        return q

    def configuration_to_positions(self, q: np.ndarray) -> np.ndarray:
        """Controlled joint positions (controlled order) read from ``q``.

        Continuous joints give ``atan2(sin, cos)``, wrapped to (-π, π].
        """
        if q.shape != (self.model.nq,):
            raise InputError(f"q must have shape ({self.model.nq},), got {q.shape}")
        if self._all_scalar:
            return q[self.idx_q]
        out = np.empty(self.idx_q.shape[0])
        out[self._scalar_sel] = q[self._scalar_q]
        out[self._cont_sel] = np.arctan2(q[self._cont_q + 1], q[self._cont_q])
        return out

    def command_state(self, positions: np.ndarray, velocities: np.ndarray) -> JointState:
        """Positions and velocities of the controlled joints (controlled order) as a JointState.

        The fast path of a controller's output: the caller guarantees two finite (n,) float64
        arrays it will not write again (they are copied into a new matrix here).
        """
        data = np.zeros((3, len(self._space)))
        data[0, self._cols] = positions
        data[1, self._cols] = velocities
        return JointState.from_trusted(self._space, data, self._valid_pos_vel)

    def command_from_displacement(
        self, base: np.ndarray, displacement: np.ndarray, dt: float
    ) -> tuple[JointState, np.ndarray]:
        """The command ``base + displacement`` with velocity ``displacement / dt``.

        The controller's output in one go (same trust rules as :meth:`command_state`): both
        rows are computed straight into the new state's matrix.

        Args:
            base: (n,) positions the displacement starts from, controlled order.
            displacement: (n,) finite displacements [rad or m] over one step.
            dt: Step length [s], > 0.

        Returns:
            The JointState and the commanded positions (n,), a read-only array.
        """
        data = np.zeros((3, len(self._space)))
        cols = self._cols
        if self._cols_copy:  # a slice: the rows are views of the matrix
            positions = data[0, cols]
            np.add(base, displacement, out=positions)
            np.divide(displacement, dt, out=data[1, cols])
        else:
            positions = base + displacement
            data[0, cols] = positions
            data[1, cols] = displacement / dt
        positions.setflags(write=False)  # a view made before the matrix became read-only
        return JointState.from_trusted(self._space, data, self._valid_pos_vel), positions

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
        data = np.zeros((3, len(self._space)))
        data[0, self._cols] = current_positions + v * dt
        data[1, self._cols] = v
        if not np.isfinite(data).all():
            raise InputError("joint state from velocity contains NaN or infinite values")
        return JointState.from_trusted(self._space, data, self._valid_pos_vel)


def velocity_to_joint_state(
    velocity: Any,
    model: pin.Model,
    controlled_joint_names: Sequence[str],
    robot_joint_space: Sequence[str],
    dt: float,
    q_current: Any,
    current_joint_positions: Any = None,
) -> JointState:
    """Integrate a tangent velocity over ``dt`` into a joint position + velocity command.

    Args:
        velocity: (nv,) tangent velocity from the IK [rad/s or m/s].
        model: Pinocchio model.
        controlled_joint_names: Joints to command (each with one velocity coordinate).
        robot_joint_space: Ordered joint names of the output state.
        dt: Step length [s], > 0.
        q_current: (nq,) configuration before the step (checked; used for the positions when
            ``current_joint_positions`` is None).
        current_joint_positions: Current positions of ``controlled_joint_names`` (same order).
            Give the measured, unwrapped angles so that continuous joints continue them
            (``θ + v·dt`` rather than a value wrapped to (-π, π]).

    Returns:
        JointState with positions ``current + v·dt`` and velocities ``v`` for the controlled
        joints.

    Raises:
        ValueError: On wrong sizes, NaN/inf, ``dt <= 0``, or an unusable controlled joint.
    """
    mapping = JointSpaceMap(model, controlled_joint_names, robot_joint_space)
    v = _real_vector(velocity, model.nv, "velocity")
    q = _real_vector(q_current, model.nq, "q_current")
    if isinstance(dt, bool) or not isinstance(dt, (int, float, np.floating, np.integer)):
        raise InputError(f"dt must be a number, got {type(dt).__name__}")
    if not (np.isfinite(dt) and dt > 0):
        raise InputError(f"dt must be finite and > 0, got {dt}")
    if current_joint_positions is None:
        current = mapping.configuration_to_positions(q)
    else:
        current = _real_vector(
            current_joint_positions, len(mapping.controlled_joint_names), "current_joint_positions"
        )
    return mapping.to_joint_state(v, current, float(dt))


#: Isaac Sim PINK extension name of :func:`joint_positions_to_configuration`.
map_joint_positions_to_pinocchio = joint_positions_to_configuration
#: Isaac Sim PINK extension name of :func:`velocity_to_joint_state`.
map_pinocchio_velocity_to_joint_state = velocity_to_joint_state
