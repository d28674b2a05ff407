"""Spaces made once, states built per tick for about a microsecond.

:meth:`JointState.from_name` and :meth:`SpatialState.from_name` look every name up and check
every argument, which costs tens of microseconds: more than half a controller tick. A loop
that sends the same names every tick builds a :class:`JointSpace` / :class:`SiteSpace` once;
its :meth:`~JointSpace.state` wraps the tick's arrays (values still checked: shape, finite)
without looking a name up again, and :meth:`~JointSpace.positions` reads a command back.

Example:
    >>> joints = JointSpace(sim.joint_names)
    >>> tool = SiteSpace(["panda_hand"])
    >>> state = RobotState(joints=joints.state(q, dq), sites=tool.state(p, quat_wxyz))
    >>> command = controller.forward(state, setpoint)
    >>> q_command = joints.positions(command.joints)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..._validation import REAL_KINDS
from ...errors import InputError
from ._space import QUATERNION_MIN_NORM, NameSpace, name_space
from .joint_state import JointState
from .spatial_state import SpatialState

__all__ = ["JointSpace", "SiteSpace"]


def _row(value: ArrayLike, shape: tuple[int, ...], what: str) -> np.ndarray:
    """``value`` as a float64 array of ``shape`` (possibly ``value`` itself); else InputError.

    A float64 array of the right shape passes at the cost of two attribute reads: the
    caller copies it into the state's own storage and checks the whole block for finite
    values once.
    """
    if type(value) is np.ndarray and value.shape == shape and value.dtype == np.float64:
        return value
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged sequences
        raise InputError(f"{what} must be real numbers of shape {shape}, got {value!r}") from exc
    if array.dtype.kind not in REAL_KINDS:
        raise InputError(f"{what} must be real numbers of shape {shape}, got {value!r}")
    if array.shape != shape:
        raise InputError(f"{what} must have shape {shape}, got {array.shape}")
    return array.astype(np.float64, copy=False)


def _check_finite(data: np.ndarray, what: str) -> None:
    # one dot product for the whole block (numpy reductions cost microseconds each on small
    # arrays): NaN and infinities make it non-finite; a finite block whose squares overflow
    # is looked at element by element
    flat = data.reshape(-1)
    if not math.isfinite(flat @ flat) and not np.isfinite(flat).all():
        raise InputError(f"{what} must be finite (no NaN or infinite values), got {data}")


class JointSpace:
    """An ordered list of joint names, checked once, for building :class:`JointState` objects.

    Args:
        names: Joint names (unique, non-empty), e.g. a simulator's ``joint_names``.
    """

    __slots__ = ("_space", "_valid")

    def __init__(self, names: Sequence[str]) -> None:
        self._space: NameSpace = name_space(list(names), "names")
        n = len(self._space)
        valid = {}
        for given in ((True, False, False), (True, True, False), (True, True, True)):
            mask = np.repeat(np.array(given)[:, None], n, axis=1)
            mask.setflags(write=False)
            valid[given] = mask
        self._valid = valid

    @property
    def names(self) -> list[str]:
        """The joint names, in order."""
        return list(self._space.names)

    def __len__(self) -> int:
        return len(self._space)

    def state(
        self,
        positions: ArrayLike,
        velocities: ArrayLike | None = None,
        efforts: ArrayLike | None = None,
    ) -> JointState:
        """A state over this space: positions [rad or m], and optionally velocities [/s] and
        efforts [N·m or N] (efforts only with velocities), each of shape ``(len(space),)``.

        Raises:
            InputError: A value of the wrong shape, not real, or not finite.
        """
        n = len(self._space)
        data = np.zeros((3, n))
        data[0] = _row(positions, (n,), "positions")
        if velocities is not None:
            data[1] = _row(velocities, (n,), "velocities")
        elif efforts is not None:
            raise InputError("efforts: give velocities too (efforts alone are not a state)")
        if efforts is not None:
            data[2] = _row(efforts, (n,), "efforts")
        _check_finite(data, "positions, velocities and efforts")
        valid = self._valid[(True, velocities is not None, efforts is not None)]
        return JointState.from_trusted(self._space, data, valid)

    def positions(self, state: JointState) -> np.ndarray:
        """The positions of ``state`` in this space's order (a read-only view when ``state``
        is over this space).

        Raises:
            InputError: ``state`` lacks a position of this space.
        """
        if state.name_space is self._space and state.valid_array[0].all():
            return state.data_array[0]
        return state.get_positions(self._space.names)


class SiteSpace:
    """An ordered list of frame (site) names, checked once, for :class:`SpatialState` objects.

    Args:
        names: Frame names (unique, non-empty), e.g. the controller's ``robot_site_space``.
    """

    __slots__ = ("_pose_valid", "_position_valid", "_space")

    def __init__(self, names: Sequence[str]) -> None:
        self._space: NameSpace = name_space(list(names), "names")
        m = len(self._space)
        self._pose_valid = np.repeat(np.array([[True, True, False, False]]), m, axis=0)
        self._position_valid = np.repeat(np.array([[True, False, False, False]]), m, axis=0)
        self._pose_valid.setflags(write=False)
        self._position_valid.setflags(write=False)

    @property
    def names(self) -> list[str]:
        """The frame names, in order."""
        return list(self._space.names)

    def __len__(self) -> int:
        return len(self._space)

    def state(self, positions: ArrayLike, orientations: ArrayLike | None = None) -> SpatialState:
        """A state over this space: world positions [m] ``(M, 3)`` and optionally unit
        quaternions ``(w, x, y, z)`` ``(M, 4)``.

        Raises:
            InputError: A value of the wrong shape, not real, not finite, or a zero quaternion.
        """
        m = len(self._space)
        data = np.zeros((m, 13))  # positions, orientations, linear and angular velocities
        data[:, :3] = _row(positions, (m, 3), "positions")
        valid = self._position_valid
        if orientations is not None:
            data[:, 3:7] = _row(orientations, (m, 4), "orientations")
            for quaternion in data[:, 3:7].tolist():
                if max(map(abs, quaternion)) < QUATERNION_MIN_NORM:
                    raise InputError(f"orientations: a quaternion is zero, got {quaternion}")
            valid = self._pose_valid
        _check_finite(data, "positions and orientations")
        arrays = (data[:, :3], data[:, 3:7], data[:, 7:10], data[:, 10:])
        return SpatialState.from_trusted(self._space, arrays, valid)
