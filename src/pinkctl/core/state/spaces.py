"""Spaces made once, states built per tick in a microsecond or two.

:meth:`JointState.from_name` and :meth:`SpatialState.from_name` look every name up and check
every argument, which costs tens of microseconds: more than half a controller tick. A loop
that sends the same names every tick builds a :class:`JointSpace` / :class:`SiteSpace` once;
its :meth:`~JointSpace.state` copies the tick's arrays (values still checked: shape, finite,
non-zero quaternions) without looking a name up again, and :meth:`~JointSpace.positions`
reads a command back (``fill``: the joints it leaves alone). ``python -m bench.state_build``
times them.

Example:
    >>> joints = JointSpace(sim.joint_names)
    >>> tool = SiteSpace(["panda_hand"])
    >>> state = RobotState(joints=joints.state(q, dq), sites=tool.state(p, quat_wxyz))
    >>> command = controller.forward(state, setpoint)
    >>> q_command = joints.positions(command.joints, fill=q)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..._validation import REAL_KINDS
from ...errors import InputError
from ._space import QUATERNION_MIN_NORM, NameSpace, name_space
from .joint_state import JointState
from .spatial_state import SpatialState

__all__ = ["JointSpace", "SiteSpace"]


_FLOAT64 = np.dtype(np.float64)
_NONZERO = QUATERNION_MIN_NORM  # a component at least this large (in size) is not zero
_ZERO = -QUATERNION_MIN_NORM


def _row(value: ArrayLike, shape: tuple[int, ...], what: str) -> np.ndarray:
    """``value`` as a float64 array of ``shape`` (possibly ``value`` itself); else InputError.

    A float64 array of the right shape passes at the cost of three attribute reads: the
    caller copies it into the state's own storage and checks it for finite values.
    """
    if type(value) is np.ndarray and value.dtype is _FLOAT64 and value.shape == shape:
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
    """InputError unless every value of ``data`` is finite.

    A Python sum over the values (a list of a few dozen floats sums in ~0.1 µs, where a numpy
    reduction over a small array costs ~1 µs) is NaN or infinite when a value is; a finite
    block whose sum overflows is looked at element by element.
    """
    if not math.isfinite(sum(data.ravel().tolist())) and not np.isfinite(data).all():
        raise InputError(f"{what} must be finite (no NaN or infinite values), got {data}")


def _owned(value: ArrayLike, shape: tuple[int, ...], what: str) -> np.ndarray:
    """A read-only float64 copy of ``value`` (shape ``shape``, every value finite)."""
    array = _row(value, shape, what).copy()
    _check_finite(array, what)
    array.setflags(write=False)
    return array


class JointSpace:
    """An ordered list of joint names, checked once, for building :class:`JointState` objects.

    Args:
        names: Joint names (unique, non-empty), e.g. a simulator's ``joint_names``.
    """

    __slots__ = ("_n", "_seen", "_space", "_valid")

    def __init__(self, names: Sequence[str]) -> None:
        self._space: NameSpace = name_space(list(names), "names")
        self._n = n = len(self._space)
        valid = []  # by the number of rows given: positions; + velocities; + efforts
        for rows in (1, 2, 3):
            mask = np.zeros((3, n), dtype=bool)
            mask[:rows] = True
            mask.setflags(write=False)
            valid.append(mask)
        self._valid = tuple(valid)
        # the last mask positions() read (kept alive, so never mistaken for another) and the
        # joints it gives no position of
        self._seen: tuple[Any, list[int]] = (None, [])

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
        n = self._n
        data = np.zeros((3, n))
        # a float64 array of the right shape skips _row (a call costs ~0.1 µs)
        if (
            type(positions) is np.ndarray
            and positions.dtype is _FLOAT64
            and positions.shape == (n,)
        ):
            data[0] = positions
        else:
            data[0] = _row(positions, (n,), "positions")
        if velocities is not None:
            if (
                type(velocities) is np.ndarray
                and velocities.dtype is _FLOAT64
                and velocities.shape == (n,)
            ):
                data[1] = velocities
            else:
                data[1] = _row(velocities, (n,), "velocities")
            if efforts is not None:
                data[2] = _row(efforts, (n,), "efforts")
        elif efforts is not None:
            raise InputError("efforts: give velocities too (efforts alone are not a state)")
        _check_finite(data, "positions, velocities and efforts")
        # JointState.from_trusted inlined (a loop builds one every tick): the masks are
        # shared, read-only and never written
        data.setflags(write=False)
        state = object.__new__(JointState)
        state._space = self._space
        state._data = data
        state._valid = self._valid[(velocities is not None) + (efforts is not None)]
        return state

    def positions(self, state: JointState, fill: ArrayLike | None = None) -> np.ndarray:
        """The positions of ``state`` in this space's order (a read-only view when ``state``
        is over this space and has them all).

        Args:
            state: A joint state, e.g. a controller's command.
            fill: Values ``(len(space),)`` for the joints ``state`` has no position of (e.g.
                the measured positions, for the joints a command leaves alone); without it
                such a joint is an error.

        Raises:
            InputError: ``state`` lacks a position of this space and ``fill`` is None, or
                ``fill`` is malformed.
        """
        if state._space is self._space:
            valid = state._valid
            if valid is not self._seen[0]:  # a command's mask is usually the same array
                missing = np.flatnonzero(~valid[0]).tolist()
                self._seen = (valid, missing)
            if not self._seen[1]:
                return state._data[0]
            if fill is not None:
                values = _row(fill, (self._n,), "fill")
                out = state._data[0].copy()
                for i in self._seen[1]:  # a few joints: cheaper than fancy indexing
                    out[i] = values[i]
                _check_finite(out, "fill")  # the command's own values are finite
                return out
        if fill is None:
            return state.get_positions(self._space.names)
        out = _owned_row(fill, self._n, "fill")
        index, valid = state._space.index, state._valid[0]
        for i, name in enumerate(self._space.names):
            j = index.get(name)
            if j is not None and valid[j]:
                out[i] = state._data[0, j]
        return out


def _owned_row(value: ArrayLike, n: int, what: str) -> np.ndarray:
    """A writable float64 copy of ``value`` (shape ``(n,)``, every value finite)."""
    out = _row(value, (n,), what).copy()
    _check_finite(out, what)
    return out


class SiteSpace:
    """An ordered list of frame (site) names, checked once, for :class:`SpatialState` objects.

    Args:
        names: Frame names (unique, non-empty), e.g. the controller's ``robot_site_space``.
    """

    __slots__ = ("_m", "_space", "_valid", "_zeros")

    def __init__(self, names: Sequence[str]) -> None:
        self._space: NameSpace = name_space(list(names), "names")
        self._m = m = len(self._space)
        valid = []  # by which of orientations, linear, angular velocities are given (bits)
        for given in range(8):
            mask = np.zeros((m, 4), dtype=bool)
            mask[:, 0] = True
            for col in (1, 2, 3):
                mask[:, col] = bool(given & (1 << (col - 1)))
            mask.setflags(write=False)
            valid.append(mask)
        self._valid = tuple(valid)
        self._zeros = (np.zeros((m, 3)), np.zeros((m, 4)))  # shared by the fields not given
        for zeros in self._zeros:
            zeros.setflags(write=False)

    @property
    def names(self) -> list[str]:
        """The frame names, in order."""
        return list(self._space.names)

    def __len__(self) -> int:
        return len(self._space)

    def state(
        self,
        positions: ArrayLike,
        orientations: ArrayLike | None = None,
        linear_velocities: ArrayLike | None = None,
        angular_velocities: ArrayLike | None = None,
    ) -> SpatialState:
        """A state over this space, world frame: positions [m] ``(M, 3)`` and optionally unit
        quaternions ``(w, x, y, z)`` ``(M, 4)``, linear [m/s] and angular [rad/s] velocities
        ``(M, 3)``.

        Raises:
            InputError: A value of the wrong shape, not real, not finite, or a zero quaternion.
        """
        m = self._m
        zeros3, zeros4 = self._zeros
        # a float64 array of the right shape skips _row (a call costs ~0.1 µs)
        if (
            type(positions) is np.ndarray
            and positions.dtype is _FLOAT64
            and positions.shape == (m, 3)
        ):
            position = positions.copy()
        else:
            position = _row(positions, (m, 3), "positions").copy()
        total = sum(position.ravel().tolist())  # NaN or infinite when a value is
        orientation, given = zeros4, 0
        if orientations is not None:
            if (
                type(orientations) is np.ndarray
                and orientations.dtype is _FLOAT64
                and orientations.shape == (m, 4)
            ):
                orientation, given = orientations.copy(), 1
            else:
                orientation, given = _row(orientations, (m, 4), "orientations").copy(), 1
            rows = orientation.tolist()
            for w, x, y, z in rows:
                total += w + x + y + z
        if not math.isfinite(total):
            _check_finite(position, "positions")
            _check_finite(orientation, "orientations")
        if given:
            for w, x, y, z in rows:
                if _ZERO < w < _NONZERO and _ZERO < x < _NONZERO and _ZERO < y < _NONZERO:
                    if _ZERO < z < _NONZERO:
                        raise InputError(f"orientations: a quaternion is zero, got {[w, x, y, z]}")
            orientation.setflags(write=False)
        position.setflags(write=False)
        linear = angular = zeros3
        if linear_velocities is not None:
            linear = _owned(linear_velocities, (m, 3), "linear_velocities")
            given += 2
        if angular_velocities is not None:
            angular = _owned(angular_velocities, (m, 3), "angular_velocities")
            given += 4
        # SpatialState.from_trusted inlined (a loop builds one every tick)
        state = object.__new__(SpatialState)
        state._space = self._space
        state._arrays = (position, orientation, linear, angular)
        state._valid = self._valid[given]
        return state
