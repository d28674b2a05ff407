"""JointState: joint positions, velocities and efforts over a named joint space."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import InputError
from ._space import (
    _JOINT_FIELDS,
    NameSpace,
    _bool_array,
    _check_finite,
    _field,
    _float_array,
    _format_entries,
    _readonly,
    name_space,
)

_new = object.__new__


class JointState:
    """Joint positions, velocities and efforts over an ordered joint space.

    Stored as a (3, N) ``float64`` matrix (rows: positions, velocities, efforts) and a (3, N)
    ``bool`` validity mask, where N is the number of names in ``robot_joint_space``. Build it
    with :meth:`from_name` or :meth:`from_index`; the constructor takes the full matrices.
    A state from :meth:`~pinkctl.core.state.JointSpace.state` holds the caller's rows instead
    and makes the matrix when :attr:`data_array` is first read.

    Args:
        robot_joint_space: Ordered, unique joint names (list or tuple), N >= 1.
        data_array: (3, N) floating-point matrix, copied as float64; every entry finite.
        valid_array: (3, N) bool mask, copied.

    Raises:
        ValueError: If an array is not 2-D, not of shape (3, N), of the wrong dtype (data:
            floating point; valid: bool), contains NaN/inf, or the joint space is empty or has
            duplicate names.
    """

    __slots__ = ("_matrix", "_rows", "_space", "_valid")

    # the (3, N) matrix, or None while the state holds its three rows (``_rows``) alone
    _matrix: np.ndarray | None
    _rows: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    _space: NameSpace
    _valid: np.ndarray

    def __init__(self, robot_joint_space: Sequence[str], data_array: Any, valid_array: Any):
        space = name_space(robot_joint_space, "robot_joint_space")
        data = _float_array(data_array, "data_array")
        valid = _bool_array(valid_array, "valid_array")
        shape = (3, len(space))
        if data.ndim != 2 or data.shape != shape:
            raise InputError(f"data_array must have shape {shape}, got {data.shape}")
        if valid.ndim != 2 or valid.shape != shape:
            raise InputError(f"valid_array must have shape {shape}, got {valid.shape}")
        data = np.array(data, dtype=np.float64)
        _check_finite(data, "data_array")
        self._space = space
        self._matrix = _readonly(data)
        self._rows = None
        self._valid = _readonly(valid.copy())

    @classmethod
    def from_trusted(
        cls, space: NameSpace | Sequence[str], data: np.ndarray, valid: np.ndarray
    ) -> JointState:
        """Wrap already checked arrays without copying (the control loop's fast path).

        Unlike the constructor this checks nothing: ``data`` must be a finite (3, N) float64
        array and ``valid`` a (3, N) bool array, both owned by the caller and never written
        again (they are made read-only here). Use it where the values are known good (a
        controller's output); build states from user data with :meth:`from_name`.
        """
        obj = _new(cls)
        # inline, not through helpers: a controller builds one of these every tick
        obj._space = space if type(space) is NameSpace else name_space(space, "robot_joint_space")
        data.setflags(write=False)
        if valid.flags.writeable:  # a controller's mask is the same read-only array each tick
            valid.setflags(write=False)
        obj._matrix = data
        obj._rows = None
        obj._valid = valid
        return obj

    @property
    def _data(self) -> np.ndarray:
        """The (3, N) read-only matrix, made from the rows on the first read."""
        matrix = self._matrix
        if matrix is None:
            assert self._rows is not None  # one of the two is always set
            matrix = self._matrix = _readonly(np.array(self._rows))
        return matrix

    def _position_row(self) -> np.ndarray:
        """Row 0 of :attr:`data_array` (N,), without making the matrix (the tick's read)."""
        matrix = self._matrix
        if matrix is None:
            assert self._rows is not None
            return self._rows[0]
        return matrix[0]

    @classmethod
    def _from_fields(cls, space: NameSpace, specs: tuple[Any, ...], by_name: bool) -> JointState:
        n = len(space)
        data = np.zeros((3, n))
        valid = np.zeros((3, n), dtype=bool)
        given = False
        for row, spec in enumerate(specs):
            if spec is None:
                continue
            given = True
            what = _JOINT_FIELDS[row]
            idx, count, vals = _field(space, spec, what, by_name)
            data[row, idx] = _joint_values(vals, count, what)
            valid[row, idx] = True
        if not given:
            raise InputError("at least one of positions, velocities, efforts is required")
        if not np.isfinite(data).all():
            bad = [_JOINT_FIELDS[r] for r in range(3) if not np.isfinite(data[r]).all()]
            raise InputError(f"{', '.join(bad)} contain(s) NaN or infinite values")
        return cls.from_trusted(space, data, valid)

    @classmethod
    def from_name(
        cls,
        robot_joint_space: Sequence[str],
        positions: tuple[list[str], Any] | None = None,
        velocities: tuple[list[str], Any] | None = None,
        efforts: tuple[list[str], Any] | None = None,
    ) -> JointState:
        """Build a state from ``(names, values)`` pairs.

        Args:
            robot_joint_space: Ordered, unique joint names of the robot.
            positions: ``(names, values)``: ``names`` a ``list`` of unique joint names of the
                space; ``values`` floating point, 1-D or (1, K), same length, finite.
            velocities: Same form as ``positions``.
            efforts: Same form as ``positions``.

        Raises:
            ValueError: If no field is given or any field breaks the rules above.
        """
        space = name_space(robot_joint_space, "robot_joint_space")
        return cls._from_fields(space, (positions, velocities, efforts), by_name=True)

    @classmethod
    def from_index(
        cls,
        robot_joint_space: Sequence[str],
        positions: tuple[Any, Any] | None = None,
        velocities: tuple[Any, Any] | None = None,
        efforts: tuple[Any, Any] | None = None,
    ) -> JointState:
        """Build a state from ``(indices, values)`` pairs (indices into the joint space).

        Same rules as :meth:`from_name`, with ``indices`` a list (or 1-D integer array) of
        unique ints in ``[0, N)``.
        """
        space = name_space(robot_joint_space, "robot_joint_space")
        return cls._from_fields(space, (positions, velocities, efforts), by_name=False)

    # ----- read API -----------------------------------------------------------------------

    @property
    def robot_joint_space(self) -> list[str]:
        """The ordered joint names (a fresh list)."""
        return list(self._space.names)

    @property
    def name_space(self) -> NameSpace:
        """The joint space as a shared :class:`~pinkctl.core.state.NameSpace` (states over
        equal name lists usually share the same object: an identity check compares them)."""
        return self._space

    @property
    def num_joints(self) -> int:
        """N, the size of the joint space."""
        return len(self._space.names)

    @property
    def data_array(self) -> np.ndarray:
        """(3, N) read-only float64 matrix: rows positions, velocities, efforts."""
        return self._data

    @property
    def valid_array(self) -> np.ndarray:
        """(3, N) read-only bool mask, rows as in :attr:`data_array`."""
        return self._valid

    def _names(self, row: int) -> list[str]:
        names = self._space.names
        return [names[i] for i in np.flatnonzero(self._valid[row])]

    def _indices(self, row: int) -> np.ndarray:
        return np.flatnonzero(self._valid[row]).astype(np.int32)

    def _compact(self, row: int) -> np.ndarray | None:
        mask = self._valid[row]
        if not mask.any():
            return None
        return self._data[row, mask]

    @property
    def position_names(self) -> list[str]:
        """Names of the joints with a valid position, in joint-space order."""
        return self._names(0)

    @property
    def velocity_names(self) -> list[str]:
        """Names of the joints with a valid velocity, in joint-space order."""
        return self._names(1)

    @property
    def effort_names(self) -> list[str]:
        """Names of the joints with a valid effort, in joint-space order."""
        return self._names(2)

    @property
    def position_indices(self) -> np.ndarray:
        """Joint-space indices (int32) of the valid positions, ascending."""
        return self._indices(0)

    @property
    def velocity_indices(self) -> np.ndarray:
        """Joint-space indices (int32) of the valid velocities, ascending."""
        return self._indices(1)

    @property
    def effort_indices(self) -> np.ndarray:
        """Joint-space indices (int32) of the valid efforts, ascending."""
        return self._indices(2)

    @property
    def positions(self) -> np.ndarray | None:
        """Valid positions in joint-space order (a copy), or None if there are none."""
        return self._compact(0)

    @property
    def velocities(self) -> np.ndarray | None:
        """Valid velocities in joint-space order (a copy), or None if there are none."""
        return self._compact(1)

    @property
    def efforts(self) -> np.ndarray | None:
        """Valid efforts in joint-space order (a copy), or None if there are none."""
        return self._compact(2)

    def _get(self, row: int, names: Sequence[str]) -> np.ndarray:
        what = _JOINT_FIELDS[row]
        idx, _ = self._space.lookup_names(list(names), f"get_{what}")
        if not self._valid[row, idx].all():
            missing = [n for n, ok in zip(names, self._valid[row, idx], strict=True) if not ok]
            raise InputError(f"get_{what}: joints {missing} have no valid {what} entry")
        return self._data[row, idx]

    def get_positions(self, names: Sequence[str]) -> np.ndarray:
        """Positions of ``names``, in the given order.

        Raises:
            ValueError: If a name is not in the space, repeated, or has no valid position.
        """
        return self._get(0, names)

    def get_velocities(self, names: Sequence[str]) -> np.ndarray:
        """Velocities of ``names``, in the given order (ValueError as in get_positions)."""
        return self._get(1, names)

    def get_efforts(self, names: Sequence[str]) -> np.ndarray:
        """Efforts of ``names``, in the given order (ValueError as in get_positions)."""
        return self._get(2, names)

    def __repr__(self) -> str:
        parts = []
        for row, what in enumerate(_JOINT_FIELDS):
            vals = self._compact(row)
            if vals is not None:
                parts.append(f"{what}={_format_entries(self._names(row), vals)}")
        return f"JointState({len(self._space)} joints, {', '.join(parts) or 'empty'})"


def _joint_values(vals: np.ndarray, count: int, what: str) -> np.ndarray:
    """``count`` values of one field, given 1-D or as a (1, K) row."""
    if vals.ndim == 2 and vals.shape[0] == 1:
        vals = vals[0]
    elif vals.ndim != 1:
        raise InputError(f"{what}: values must be 1-D or (1, K), got shape {vals.shape}")
    if vals.shape[0] == 0:
        raise InputError(f"{what}: at least one value is required")
    if vals.shape[0] != count:
        raise InputError(f"{what}: {count} names/indices but {vals.shape[0]} values")
    return vals
