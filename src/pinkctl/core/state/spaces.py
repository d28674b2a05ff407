"""Spaces made once, states built per tick in a microsecond or so.

:meth:`JointState.from_name` and :meth:`SpatialState.from_name` look every name up and check
every argument, which costs tens of microseconds: more than half a controller tick. A loop
that sends the same names every tick builds a :class:`JointSpace` / :class:`SiteSpace` once;
its :meth:`~JointSpace.state` wraps the tick's arrays without looking a name up again, and
:meth:`~JointSpace.positions` reads a command back (``fill``: the joints it leaves alone).
``python -m bench.state_build`` times them.

No copy: a float64 array of the right shape is held as it is (its values still checked: shape,
finite, non-zero quaternions), so the caller must not write it while the state is in use (a
simulator's fresh arrays, or a buffer refilled for the next tick after the tick, are fine).
A :class:`JointState` makes its (3, N) ``data_array`` from the rows when it is first read (a
read-only copy); a :class:`SpatialState`'s ``position_data`` and the like are the arrays given.
Other values (lists, other dtypes) are converted into read-only arrays the state owns.

Checks: the common case (numpy float64 arrays of the right shape, finite, non-zero
quaternions; no efforts or site velocities) is checked by the native kernel in one call
(``state_rows`` / ``state_pose`` in ``pinkctl/_native/_module.c``), and so is a command read
back over a float64 ``fill`` array (``state_fill``: the copy of ``fill`` takes the command's
values, the filled ones are checked finite; ~1.8x faster than numpy). Anything else, and every
call where the kernel is off, takes the Python path, which converts what it can and names the
argument at fault: there a Python sum over the values is NaN or infinite when a value is (a
NaN or an infinity enters every partial sum after it), and finite values whose sum overflows
(entries near 1e308) are looked at one by one, so they pass. A rejected call builds nothing.

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

from ..._native import kernel_module, native_available
from ..._validation import REAL_KINDS
from ...errors import InputError
from ._space import QUATERNION_MIN_NORM, NameSpace, name_space
from .joint_state import JointState
from .spatial_state import SpatialState

__all__ = ["JointSpace", "SiteSpace"]


_FLOAT64 = np.dtype(np.float64)
_NDARRAY = np.ndarray
_new = object.__new__
_NONZERO = QUATERNION_MIN_NORM  # a component at least this large (in size) is not zero
_ZERO = -QUATERNION_MIN_NORM
# the native kernel's checks of the common case (float64 arrays of the right shape, finite,
# non-zero quaternions: True, else the Python path below converts or names the fault), or None
_KERNEL = kernel_module() if native_available()[0] else None
_GOOD_ROWS = getattr(_KERNEL, "state_rows", None)
_GOOD_POSE = getattr(_KERNEL, "state_pose", None)
_FILL = getattr(_KERNEL, "state_fill", None)


def _row(value: ArrayLike, shape: tuple[int, ...], what: str) -> np.ndarray:
    """``value`` as a float64 array of ``shape`` (``value`` itself when it is one, else a
    read-only conversion); else InputError. Finite values are the caller's to check."""
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
    array = array.astype(np.float64, copy=False)
    if array is not value:  # a new array (or a view of a subclass): the state's own
        array.setflags(write=False)
    return array


def _check_finite(data: np.ndarray, what: str) -> None:
    """InputError unless every value of ``data`` is finite.

    A Python sum over the values (a list of a few dozen floats sums in ~0.1 µs, where a numpy
    reduction over a small array costs ~1 µs) is NaN or infinite when a value is; a finite
    block whose sum overflows is looked at element by element.
    """
    if not math.isfinite(sum(data.ravel().tolist())) and not np.isfinite(data).all():
        raise InputError(f"{what} must be finite (no NaN or infinite values), got {data}")


def _checked(value: ArrayLike, shape: tuple[int, ...], what: str) -> np.ndarray:
    """``value`` as a float64 array of ``shape`` with every value finite (``value`` itself
    when it is one)."""
    array = _row(value, shape, what)
    _check_finite(array, what)
    return array


class JointSpace:
    """An ordered list of joint names, checked once, for building :class:`JointState` objects.

    Args:
        names: Joint names (unique, non-empty), e.g. a simulator's ``joint_names``.
    """

    __slots__ = ("_n", "_seen", "_space", "_valid", "_zero")

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
        self._zero = np.zeros(n)  # the rows not given
        self._zero.setflags(write=False)
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

        A float64 array of that shape is wrapped, not copied (see the module docstring):
        the caller does not write it while the state is in use. Other values (lists, other
        dtypes) are converted to float64 arrays the state owns.

        Raises:
            InputError: A value of the wrong shape, not real, or not finite (the message names
                the argument); nothing is built then.
        """
        n = self._n
        if efforts is None and _GOOD_ROWS is not None and _GOOD_ROWS(positions, velocities, n):
            # JointState with its rows (float64 arrays: the kernel said so), the matrix made
            # on demand
            state = _new(JointState)
            state._space = self._space
            if velocities is None:
                state._rows = (positions, self._zero, self._zero)  # type: ignore[assignment]
                state._valid = self._valid[0]
            else:
                state._rows = (positions, velocities, self._zero)  # type: ignore[assignment]
                state._valid = self._valid[1]
            state._matrix = None
            return state
        return self._state(positions, velocities, efforts)

    def _state(
        self,
        positions: ArrayLike,
        velocities: ArrayLike | None,
        efforts: ArrayLike | None,
    ) -> JointState:
        """:meth:`state` in Python: conversions, and the checks that name the argument."""
        n = self._n
        # a float64 array of the right shape is used as it is (a call to _row costs ~0.1 µs)
        if type(positions) is not _NDARRAY or positions.dtype is not _FLOAT64:
            positions = _row(positions, (n,), "positions")
        elif positions.shape != (n,):
            positions = _row(positions, (n,), "positions")
        if velocities is None:
            if efforts is not None:
                raise InputError("efforts: give velocities too (efforts alone are not a state)")
            # NaN or infinite when a value is (a finite sum that overflows: checked below)
            if not math.isfinite(sum(positions.tolist())):
                _check_finite(positions, "positions")
            rows, valid = (positions, self._zero, self._zero), self._valid[0]
        else:
            if type(velocities) is not _NDARRAY or velocities.dtype is not _FLOAT64:
                velocities = _row(velocities, (n,), "velocities")
            elif velocities.shape != (n,):
                velocities = _row(velocities, (n,), "velocities")
            # Python sums (no numpy reduction, no floating-point warning): NaN or infinite
            # when a value is; finite rows whose sum overflows take the checks below
            total = sum(positions.tolist()) + sum(velocities.tolist())
            if efforts is None:
                rows, valid = (positions, velocities, self._zero), self._valid[1]
            else:
                efforts = _row(efforts, (n,), "efforts")
                total += sum(efforts.tolist())
                rows, valid = (positions, velocities, efforts), self._valid[2]
            if not math.isfinite(total):
                for row, what in zip(rows, ("positions", "velocities", "efforts"), strict=True):
                    _check_finite(row, what)
        state = _new(JointState)  # JointState with its rows, the matrix made on demand
        state._space = self._space
        state._rows = rows
        state._matrix = None
        state._valid = valid
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
            seen = self._seen
            valid = state._valid
            if valid is not seen[0]:  # a command's mask is usually the same array
                seen = self._seen = (valid, np.flatnonzero(~valid[0]).tolist())
            missing = seen[1]
            if not missing:
                return state._data[0]
            if fill is not None:
                matrix = state._matrix  # (a command's: made by the controller)
                if matrix is None:
                    matrix = state._data
                # the common case in one native call: the fill's copy takes the command's
                # values and has its own checked (else the Python path converts or names it)
                if _FILL is not None and type(fill) is _NDARRAY:
                    out = fill.copy()
                    if _FILL(out, matrix, missing):
                        return out
                n = self._n
                if type(fill) is not _NDARRAY or fill.dtype is not _FLOAT64 or fill.shape != (n,):
                    fill = _row(fill, (n,), "fill")
                out = matrix[0].copy()
                total = 0.0  # the command's own values are finite: the filled ones are checked
                item = fill.item
                for i in missing:  # a few joints: cheaper than fancy indexing
                    out[i] = value = item(i)
                    total += value
                if not math.isfinite(total):
                    _check_finite(out, "fill")
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
        if (
            linear_velocities is None
            and angular_velocities is None
            and _GOOD_POSE is not None
            and _GOOD_POSE(positions, orientations, m, QUATERNION_MIN_NORM)
        ):
            zeros3, zeros4 = self._zeros
            # SpatialState.from_trusted inlined, the arrays (float64: the kernel said so) wrapped
            state = _new(SpatialState)
            state._space = self._space
            if orientations is None:
                state._arrays = (positions, zeros4, zeros3, zeros3)  # type: ignore[assignment]
                state._valid = self._valid[0]
            else:
                state._arrays = (positions, orientations, zeros3, zeros3)  # type: ignore[assignment]
                state._valid = self._valid[1]
            return state
        return self._state(positions, orientations, linear_velocities, angular_velocities)

    def _state(
        self,
        positions: ArrayLike,
        orientations: ArrayLike | None,
        linear_velocities: ArrayLike | None,
        angular_velocities: ArrayLike | None,
    ) -> SpatialState:
        """:meth:`state` in Python: conversions, and the checks that name the argument."""
        m = self._m
        zeros3, zeros4 = self._zeros
        # a float64 array of the right shape is used as it is (a call to _row costs ~0.1 µs)
        if type(positions) is not _NDARRAY or positions.dtype is not _FLOAT64:
            positions = _row(positions, (m, 3), "positions")
        elif positions.shape != (m, 3):
            positions = _row(positions, (m, 3), "positions")
        # Python sums: NaN or infinite when a value is (a finite sum that overflows: checked)
        total = 0.0
        for x, y, z in positions.tolist():
            total += x + y + z
        if orientations is None:
            orientations, given = zeros4, 0
            if not math.isfinite(total):
                _check_finite(positions, "positions")
        else:
            if type(orientations) is not _NDARRAY or orientations.dtype is not _FLOAT64:
                orientations = _row(orientations, (m, 4), "orientations")
            elif orientations.shape != (m, 4):
                orientations = _row(orientations, (m, 4), "orientations")
            rows = orientations.tolist()
            for w, x, y, z in rows:
                total += w + x + y + z
            if not math.isfinite(total):
                _check_finite(positions, "positions")
                _check_finite(orientations, "orientations")
            for w, x, y, z in rows:  # finite: a NaN cannot pass for a zero quaternion
                if _ZERO < w < _NONZERO and _ZERO < x < _NONZERO and _ZERO < y < _NONZERO:
                    if _ZERO < z < _NONZERO:
                        raise InputError(f"orientations: a quaternion is zero, got {[w, x, y, z]}")
            given = 1
        linear = angular = zeros3
        if linear_velocities is not None:
            linear = _checked(linear_velocities, (m, 3), "linear_velocities")
            given += 2
        if angular_velocities is not None:
            angular = _checked(angular_velocities, (m, 3), "angular_velocities")
            given += 4
        state = _new(SpatialState)  # SpatialState.from_trusted inlined, the arrays wrapped
        state._space = self._space
        state._arrays = (positions, orientations, linear, angular)
        state._valid = self._valid[given]
        return state
