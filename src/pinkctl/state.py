"""Robot states: what a controller reads and what it returns.

Every quantity is addressed by *name* inside an ordered *space* (a list of names): a
:class:`JointState` lives in a joint space (for example a simulator's actuated joint names),
a :class:`SpatialState` in a space of frame names (links or sites). Each state stores full
arrays over its space plus a boolean validity mask, so "which fields are commanded" is just
the mask, and merging two states is an element-wise union.

Conventions:

- numpy ``float64`` data, ``bool`` masks. Stored arrays are private copies marked read-only,
  so a state cannot be changed after construction; build a new one instead.
- Units: joint positions in rad (revolute) or m (prismatic), velocities per second, efforts
  in N·m or N. Frame positions in m, orientations as unit quaternions ``(w, x, y, z)``,
  linear velocities in m/s, angular velocities in rad/s.
- Frames: link and site poses are expressed in the world frame; the root velocities of a
  mobile base are expressed in the base (body) frame.
- Entries that are not given hold 0 and are marked invalid.
- Malformed input raises ``ValueError`` naming the argument. NaN and infinite values are
  rejected everywhere, as are all-zero quaternions. Quaternions are stored as given (not
  normalised).

The semantics follow Isaac Sim's experimental motion-generation states (``from_name`` /
``from_index`` rules, compact getters ordered by the space, ``combine_robot_states`` returning
None on any overlap).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "JointState",
    "RobotState",
    "RootState",
    "SpatialState",
    "combine_robot_states",
]

#: Quaternions whose largest absolute component is below this are rejected as zero.
QUATERNION_MIN_NORM = 1e-9

_JOINT_FIELDS = ("positions", "velocities", "efforts")
_SPATIAL_FIELDS = ("positions", "orientations", "linear_velocities", "angular_velocities")
_SPATIAL_DATA = (
    "position_data",
    "orientation_data",
    "linear_velocity_data",
    "angular_velocity_data",
)
_SPATIAL_WIDTHS = (3, 4, 3, 3)
_ROOT_FIELDS = ("position", "orientation", "linear_velocity", "angular_velocity")
_ROOT_WIDTHS = (3, 4, 3, 3)

_MAX_CACHED_SPACES = 256
_MAX_CACHED_SUBSETS = 64


class _NameSpace:
    """An ordered list of unique names with a precomputed name -> index map.

    Instances are shared through :func:`_name_space`, so two states built over equal name
    lists usually hold the very same object, which makes the space comparison in
    :func:`combine_robot_states` an identity check. Lookups of a name list (the ``names``
    half of a ``from_name`` field) are cached too, because a control loop passes the same
    list on every tick.
    """

    __slots__ = ("index", "names", "_subsets")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.index = {name: i for i, name in enumerate(names)}
        self._subsets: dict[tuple[str, ...], tuple[np.ndarray | slice, int]] = {}

    def __len__(self) -> int:
        return len(self.names)

    def lookup_names(self, names: Any, what: str) -> tuple[np.ndarray | slice, int]:
        """Where ``names`` (a list of unique names of this space) sit, and how many there are.

        The location is an intp index array, or ``slice(None)`` when ``names`` is the whole
        space in order (cheaper to index with).
        """
        if not isinstance(names, list):
            raise ValueError(f"{what}: names must be a list of str, got {type(names).__name__}")
        try:
            key = tuple(names)
            cached = self._subsets.get(key)
        except TypeError:  # unhashable element
            cached = key = None
        if cached is not None:
            return cached
        for name in names:
            if not isinstance(name, str):
                raise ValueError(f"{what}: names must be str, got {name!r}")
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"{what}: duplicate names {dup}")
        unknown = [n for n in names if n not in self.index]
        if unknown:
            raise ValueError(f"{what}: names {unknown} are not in the space {list(self.names)}")
        found: tuple[np.ndarray | slice, int]
        if key == self.names:
            found = (slice(None), len(names))
        else:
            idx = np.fromiter((self.index[n] for n in names), dtype=np.intp, count=len(names))
            idx.flags.writeable = False
            found = (idx, len(names))
        if key is not None:
            if len(self._subsets) >= _MAX_CACHED_SUBSETS:
                self._subsets.clear()
            self._subsets[key] = found
        return found

    def lookup_indices(self, indices: Any, what: str) -> tuple[np.ndarray, int]:
        """Check ``indices`` (a list or 1-D integer array of unique indices); return them."""
        if isinstance(indices, np.ndarray):
            if indices.ndim != 1 or indices.dtype.kind not in "iu":
                raise ValueError(
                    f"{what}: indices must be a 1-D integer array, got dtype {indices.dtype} "
                    f"and shape {indices.shape}"
                )
            idx = indices.astype(np.intp)
        elif type(indices) is list:
            for i in indices:
                if not (type(i) is int or isinstance(i, np.integer)):
                    raise ValueError(f"{what}: indices must be int, got {i!r}")
            try:
                idx = np.array(indices, dtype=np.intp)
            except OverflowError as exc:
                raise ValueError(f"{what}: indices {indices} out of range: {exc}") from exc
        else:
            raise ValueError(f"{what}: indices must be a list of int, got {type(indices).__name__}")
        n = len(self.names)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"{what}: indices {idx.tolist()} out of range [0, {n})")
        if np.unique(idx).size != idx.size:
            raise ValueError(f"{what}: duplicate indices {idx.tolist()}")
        return idx, idx.shape[0]


_SPACES: dict[tuple[str, ...], _NameSpace] = {}


def _name_space(names: Any, what: str) -> _NameSpace:
    """The shared :class:`_NameSpace` for a list (or tuple) of unique, non-empty names."""
    if isinstance(names, _NameSpace):
        return names
    if not isinstance(names, (list, tuple)):
        raise ValueError(f"{what} must be a list of str, got {type(names).__name__}")
    try:
        key = tuple(names)
        space = _SPACES.get(key)
    except TypeError:
        space = None
        key = None
    if space is not None:
        return space
    if len(names) == 0:
        raise ValueError(f"{what} must not be empty")
    for name in names:
        if not isinstance(name, str):
            raise ValueError(f"{what} must hold str names, got {name!r}")
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{what} has duplicate names {dup}")
    assert key is not None  # all elements are str, hence hashable
    space = _NameSpace(key)
    if len(_SPACES) >= _MAX_CACHED_SPACES:
        _SPACES.clear()
    _SPACES[key] = space
    return space


def _float_array(values: Any, what: str) -> np.ndarray:
    """``values`` as an ndarray of a floating dtype (not yet float64); ValueError otherwise."""
    if type(values) is np.ndarray:
        arr = values
    else:
        try:
            arr = np.asarray(values)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"{what}: cannot read values as an array: {exc}") from exc
    if arr.dtype.kind != "f":
        raise ValueError(
            f"{what}: values must be floating point, got dtype {arr.dtype} "
            "(pass e.g. np.asarray(values, dtype=float))"
        )
    return arr


def _bool_array(values: Any, what: str) -> np.ndarray:
    """``values`` as an ndarray of dtype bool; ValueError otherwise."""
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{what}: cannot read values as an array: {exc}") from exc
    if arr.dtype != np.bool_:
        raise ValueError(f"{what} must have dtype bool, got {arr.dtype}")
    return arr


def _unpack_pair(spec: Any, what: str) -> tuple[Any, Any]:
    if not isinstance(spec, (tuple, list)) or len(spec) != 2:
        raise ValueError(f"{what} must be a (names_or_indices, values) pair, got {spec!r}")
    return spec[0], spec[1]


def _check_finite(arr: np.ndarray, what: str) -> None:
    if not np.isfinite(arr).all():
        raise ValueError(f"{what} contains NaN or infinite values")


def _check_quaternions(quats: np.ndarray, what: str) -> None:
    """Reject all-zero quaternions (rows of ``quats``, already known finite)."""
    if quats.size and (np.abs(quats).max(axis=1) < QUATERNION_MIN_NORM).any():
        raise ValueError(f"{what}: quaternion (w, x, y, z) must not be zero")


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)  # cheaper than assigning flags.writeable
    return arr


def _format_entries(names: Sequence[str], values: np.ndarray, limit: int = 4) -> str:
    items = [f"{n}: {np.array2string(v, precision=4)}" for n, v in zip(names, values, strict=True)]
    if len(items) > limit:
        items = items[:limit] + [f"... (+{len(names) - limit})"]
    return "{" + ", ".join(items) + "}"


# --------------------------------------------------------------------------------------------
# JointState
# --------------------------------------------------------------------------------------------


class JointState:
    """Joint positions, velocities and efforts over an ordered joint space.

    Stored as a (3, N) ``float64`` matrix (rows: positions, velocities, efforts) and a (3, N)
    ``bool`` validity mask, where N is the number of names in ``robot_joint_space``. Build it
    with :meth:`from_name` or :meth:`from_index`; the constructor takes the full matrices.

    Args:
        robot_joint_space: Ordered, unique joint names (list or tuple), N >= 1.
        data_array: (3, N) floating-point matrix, copied as float64; every entry finite.
        valid_array: (3, N) bool mask, copied.

    Raises:
        ValueError: If an array is not 2-D, not of shape (3, N), of the wrong dtype (data:
            floating point; valid: bool), contains NaN/inf, or the joint space is empty or has
            duplicate names.
    """

    __slots__ = ("_data", "_space", "_valid")

    _data: np.ndarray
    _space: _NameSpace
    _valid: np.ndarray

    def __init__(self, robot_joint_space: Sequence[str], data_array: Any, valid_array: Any):
        space = _name_space(robot_joint_space, "robot_joint_space")
        data = _float_array(data_array, "data_array")
        valid = _bool_array(valid_array, "valid_array")
        shape = (3, len(space))
        if data.ndim != 2 or data.shape != shape:
            raise ValueError(f"data_array must have shape {shape}, got {data.shape}")
        if valid.ndim != 2 or valid.shape != shape:
            raise ValueError(f"valid_array must have shape {shape}, got {valid.shape}")
        data = np.array(data, dtype=np.float64)
        _check_finite(data, "data_array")
        self._space = space
        self._data = _readonly(data)
        self._valid = _readonly(valid.copy())

    @classmethod
    def _from_trusted(cls, space: Any, data: np.ndarray, valid: np.ndarray) -> JointState:
        """Wrap already checked arrays without copying (internal fast path).

        ``data`` must be a finite (3, N) float64 array and ``valid`` a (3, N) bool array,
        both owned by the caller and never written again; they are made read-only here.
        """
        obj = cls.__new__(cls)
        obj._space = _name_space(space, "robot_joint_space")
        obj._data = _readonly(data)
        obj._valid = _readonly(valid)
        return obj

    @classmethod
    def _from_fields(cls, space: _NameSpace, specs: tuple[Any, ...], by_name: bool) -> JointState:
        n = len(space)
        data = np.zeros((3, n))
        valid = np.zeros((3, n), dtype=bool)
        given = False
        for row, spec in enumerate(specs):
            if spec is None:
                continue
            given = True
            what = _JOINT_FIELDS[row]
            keys, values = _unpack_pair(spec, what)
            if by_name:
                idx, count = space.lookup_names(keys, what)
            else:
                idx, count = space.lookup_indices(keys, what)
            vals = _float_array(values, what)
            if vals.ndim == 2 and vals.shape[0] == 1:
                vals = vals[0]
            elif vals.ndim != 1:
                raise ValueError(f"{what}: values must be 1-D or (1, K), got shape {vals.shape}")
            if vals.shape[0] == 0:
                raise ValueError(f"{what}: at least one value is required")
            if vals.shape[0] != count:
                raise ValueError(f"{what}: {count} names/indices but {vals.shape[0]} values")
            data[row, idx] = vals
            valid[row, idx] = True
        if not given:
            raise ValueError("at least one of positions, velocities, efforts is required")
        if not np.isfinite(data).all():
            bad = [_JOINT_FIELDS[r] for r in range(3) if not np.isfinite(data[r]).all()]
            raise ValueError(f"{', '.join(bad)} contain(s) NaN or infinite values")
        return cls._from_trusted(space, data, valid)

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
        space = _name_space(robot_joint_space, "robot_joint_space")
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
        space = _name_space(robot_joint_space, "robot_joint_space")
        return cls._from_fields(space, (positions, velocities, efforts), by_name=False)

    # ----- read API -----------------------------------------------------------------------

    @property
    def robot_joint_space(self) -> list[str]:
        """The ordered joint names (a fresh list)."""
        return list(self._space.names)

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
            raise ValueError(f"get_{what}: joints {missing} have no valid {what} entry")
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


# --------------------------------------------------------------------------------------------
# SpatialState
# --------------------------------------------------------------------------------------------


class SpatialState:
    """Per-frame pose and twist over an ordered space of frame names (links or sites).

    Stored as (M, 3) positions [m], (M, 4) orientations (w, x, y, z), (M, 3) linear
    velocities [m/s], (M, 3) angular velocities [rad/s], all float64 and world-frame, plus an
    (M, 4) bool validity mask whose columns are position, orientation, linear velocity,
    angular velocity. Build it with :meth:`from_name` or :meth:`from_index`.

    Args:
        spatial_space: Ordered, unique frame names (list or tuple), M >= 1.
        position_data: (M, 3) floating point.
        orientation_data: (M, 4) floating point; rows marked valid must be non-zero.
        linear_velocity_data: (M, 3) floating point.
        angular_velocity_data: (M, 3) floating point.
        valid_array: (M, 4) bool.

    Raises:
        ValueError: On a wrong shape or dtype, NaN/inf, a zero valid quaternion, or an empty or
            duplicated space.
    """

    __slots__ = ("_arrays", "_space", "_valid")

    _arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    _space: _NameSpace
    _valid: np.ndarray

    def __init__(
        self,
        spatial_space: Sequence[str],
        position_data: Any,
        orientation_data: Any,
        linear_velocity_data: Any,
        angular_velocity_data: Any,
        valid_array: Any,
    ):
        space = _name_space(spatial_space, "spatial_space")
        m = len(space)
        arrays = []
        inputs = (position_data, orientation_data, linear_velocity_data, angular_velocity_data)
        for what, width, value in zip(_SPATIAL_DATA, _SPATIAL_WIDTHS, inputs, strict=True):
            arr = _float_array(value, what)
            if arr.ndim != 2 or arr.shape != (m, width):
                raise ValueError(f"{what} must have shape {(m, width)}, got {arr.shape}")
            arr = np.array(arr, dtype=np.float64)
            _check_finite(arr, what)
            arrays.append(arr)
        valid = _bool_array(valid_array, "valid_array")
        if valid.ndim != 2 or valid.shape != (m, 4):
            raise ValueError(f"valid_array must have shape {(m, 4)}, got {valid.shape}")
        _check_quaternions(arrays[1][valid[:, 1]], "orientation_data")
        self._space = space
        self._arrays = tuple(_readonly(a) for a in arrays)  # type: ignore[assignment]
        self._valid = _readonly(valid.copy())

    @classmethod
    def _from_trusted(
        cls, space: Any, arrays: Sequence[np.ndarray], valid: np.ndarray
    ) -> SpatialState:
        """Wrap already checked arrays without copying (internal fast path)."""
        obj = cls.__new__(cls)
        obj._space = _name_space(space, "spatial_space")
        obj._arrays = tuple(_readonly(a) for a in arrays)  # type: ignore[assignment]
        obj._valid = _readonly(valid)
        return obj

    @classmethod
    def _from_fields(cls, space: _NameSpace, specs: tuple[Any, ...], by_name: bool) -> SpatialState:
        m = len(space)
        arrays = [np.zeros((m, w)) for w in _SPATIAL_WIDTHS]
        valid = np.zeros((m, 4), dtype=bool)
        given = False
        for col, spec in enumerate(specs):
            if spec is None:
                continue
            given = True
            what, width = _SPATIAL_FIELDS[col], _SPATIAL_WIDTHS[col]
            keys, values = _unpack_pair(spec, what)
            if by_name:
                idx, count = space.lookup_names(keys, what)
            else:
                idx, count = space.lookup_indices(keys, what)
            vals = _float_array(values, what)
            if vals.ndim != 2 or vals.shape[1] != width:
                raise ValueError(f"{what}: values must have shape (K, {width}), got {vals.shape}")
            if vals.shape[0] == 0:
                raise ValueError(f"{what}: at least one row is required")
            if vals.shape[0] != count:
                raise ValueError(f"{what}: {count} names/indices but {vals.shape[0]} rows")
            _check_finite(vals, what)
            if col == 1:
                _check_quaternions(vals, what)
            arrays[col][idx] = vals
            valid[idx, col] = True
        if not given:
            raise ValueError(f"at least one of {', '.join(_SPATIAL_FIELDS)} is required")
        return cls._from_trusted(space, arrays, valid)

    @classmethod
    def from_name(
        cls,
        spatial_space: Sequence[str],
        positions: tuple[list[str], Any] | None = None,
        orientations: tuple[list[str], Any] | None = None,
        linear_velocities: tuple[list[str], Any] | None = None,
        angular_velocities: tuple[list[str], Any] | None = None,
    ) -> SpatialState:
        """Build a state from ``(names, values)`` pairs.

        Args:
            spatial_space: Ordered, unique frame names.
            positions: ``(names, (K, 3) array)`` in m, world frame.
            orientations: ``(names, (K, 4) array)``, quaternions (w, x, y, z), non-zero.
            linear_velocities: ``(names, (K, 3) array)`` in m/s, world frame.
            angular_velocities: ``(names, (K, 3) array)`` in rad/s, world frame.

            ``names`` is a ``list`` of unique names of the space, K = len(names) >= 1, values
            floating point and finite.

        Raises:
            ValueError: If no field is given or a field breaks the rules above.
        """
        space = _name_space(spatial_space, "spatial_space")
        specs = (positions, orientations, linear_velocities, angular_velocities)
        return cls._from_fields(space, specs, by_name=True)

    @classmethod
    def from_index(
        cls,
        spatial_space: Sequence[str],
        positions: tuple[Any, Any] | None = None,
        orientations: tuple[Any, Any] | None = None,
        linear_velocities: tuple[Any, Any] | None = None,
        angular_velocities: tuple[Any, Any] | None = None,
    ) -> SpatialState:
        """Build a state from ``(indices, values)`` pairs; rules as in :meth:`from_name`."""
        space = _name_space(spatial_space, "spatial_space")
        specs = (positions, orientations, linear_velocities, angular_velocities)
        return cls._from_fields(space, specs, by_name=False)

    # ----- read API -----------------------------------------------------------------------

    @property
    def spatial_space(self) -> list[str]:
        """The ordered frame names (a fresh list)."""
        return list(self._space.names)

    @property
    def num_frames(self) -> int:
        """M, the size of the spatial space."""
        return len(self._space.names)

    @property
    def valid_array(self) -> np.ndarray:
        """(M, 4) read-only bool mask; columns position, orientation, lin. vel., ang. vel."""
        return self._valid

    @property
    def position_data(self) -> np.ndarray:
        """(M, 3) read-only positions [m] (0 where invalid)."""
        return self._arrays[0]

    @property
    def orientation_data(self) -> np.ndarray:
        """(M, 4) read-only quaternions (w, x, y, z) (0 where invalid)."""
        return self._arrays[1]

    @property
    def linear_velocity_data(self) -> np.ndarray:
        """(M, 3) read-only linear velocities [m/s] (0 where invalid)."""
        return self._arrays[2]

    @property
    def angular_velocity_data(self) -> np.ndarray:
        """(M, 3) read-only angular velocities [rad/s] (0 where invalid)."""
        return self._arrays[3]

    def _names(self, col: int) -> list[str]:
        names = self._space.names
        return [names[i] for i in np.flatnonzero(self._valid[:, col])]

    def _indices(self, col: int) -> np.ndarray:
        return np.flatnonzero(self._valid[:, col]).astype(np.int32)

    def _compact(self, col: int) -> np.ndarray | None:
        mask = self._valid[:, col]
        if not mask.any():
            return None
        return self._arrays[col][mask]

    @property
    def position_names(self) -> list[str]:
        """Frames with a valid position, in space order."""
        return self._names(0)

    @property
    def orientation_names(self) -> list[str]:
        """Frames with a valid orientation, in space order."""
        return self._names(1)

    @property
    def linear_velocity_names(self) -> list[str]:
        """Frames with a valid linear velocity, in space order."""
        return self._names(2)

    @property
    def angular_velocity_names(self) -> list[str]:
        """Frames with a valid angular velocity, in space order."""
        return self._names(3)

    @property
    def position_indices(self) -> np.ndarray:
        """Space indices (int32) of the valid positions."""
        return self._indices(0)

    @property
    def orientation_indices(self) -> np.ndarray:
        """Space indices (int32) of the valid orientations."""
        return self._indices(1)

    @property
    def linear_velocity_indices(self) -> np.ndarray:
        """Space indices (int32) of the valid linear velocities."""
        return self._indices(2)

    @property
    def angular_velocity_indices(self) -> np.ndarray:
        """Space indices (int32) of the valid angular velocities."""
        return self._indices(3)

    @property
    def positions(self) -> np.ndarray | None:
        """(K, 3) valid positions in space order, or None if there are none."""
        return self._compact(0)

    @property
    def orientations(self) -> np.ndarray | None:
        """(K, 4) valid orientations (w, x, y, z) in space order, or None."""
        return self._compact(1)

    @property
    def linear_velocities(self) -> np.ndarray | None:
        """(K, 3) valid linear velocities in space order, or None."""
        return self._compact(2)

    @property
    def angular_velocities(self) -> np.ndarray | None:
        """(K, 3) valid angular velocities in space order, or None."""
        return self._compact(3)

    def _row(self, name: str, col: int) -> np.ndarray | None:
        i = self._space.index.get(name)
        if i is None or not self._valid[i, col]:
            return None
        return self._arrays[col][i].copy()

    def get_position(self, name: str) -> np.ndarray | None:
        """Position (3,) of frame ``name``; None if the frame is absent or has none."""
        return self._row(name, 0)

    def get_orientation(self, name: str) -> np.ndarray | None:
        """Quaternion (w, x, y, z) of frame ``name``; None if absent or invalid."""
        return self._row(name, 1)

    def get_pose(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """``(position (3,), quaternion wxyz (4,))`` of frame ``name``.

        Returns None unless the frame is in the space with both a valid position and a valid
        orientation.
        """
        i = self._space.index.get(name)
        if i is None or not (self._valid[i, 0] and self._valid[i, 1]):
            return None
        return self._arrays[0][i].copy(), self._arrays[1][i].copy()

    def __repr__(self) -> str:
        parts = []
        for col, what in enumerate(_SPATIAL_FIELDS):
            vals = self._compact(col)
            if vals is not None:
                parts.append(f"{what}={_format_entries(self._names(col), vals)}")
        return f"SpatialState({len(self._space)} frames, {', '.join(parts) or 'empty'})"


# --------------------------------------------------------------------------------------------
# RootState
# --------------------------------------------------------------------------------------------


class RootState:
    """State of a robot's root (floating or mobile base).

    Args:
        position: (3,) position [m], world frame.
        orientation: (4,) quaternion (w, x, y, z), world frame, non-zero (kept as given).
        linear_velocity: (3,) linear velocity [m/s], base (body) frame.
        angular_velocity: (3,) angular velocity [rad/s], base (body) frame.

    Each given field is 1-D of the stated length, real-valued (ints are accepted and
    converted) and finite; at least one field is required.

    Raises:
        ValueError: If no field is given or a field breaks the rules above.
    """

    __slots__ = ("_fields",)

    _fields: tuple[np.ndarray | None, ...]

    def __init__(
        self,
        position: Any = None,
        orientation: Any = None,
        linear_velocity: Any = None,
        angular_velocity: Any = None,
    ):
        given = (position, orientation, linear_velocity, angular_velocity)
        if all(v is None for v in given):
            raise ValueError(f"RootState needs at least one of {', '.join(_ROOT_FIELDS)}")
        fields: list[np.ndarray | None] = []
        for what, width, value in zip(_ROOT_FIELDS, _ROOT_WIDTHS, given, strict=True):
            if value is None:
                fields.append(None)
                continue
            try:
                arr = np.asarray(value)
            except (TypeError, ValueError, OverflowError) as exc:
                raise ValueError(f"{what}: cannot read values as an array: {exc}") from exc
            if arr.dtype.kind not in "fiu":
                raise ValueError(f"{what} must be real numbers, got dtype {arr.dtype}")
            if arr.shape != (width,):
                raise ValueError(f"{what} must be 1-D with {width} elements, got {arr.shape}")
            arr = np.array(arr, dtype=np.float64)
            _check_finite(arr, what)
            if what == "orientation":
                _check_quaternions(arr[None, :], what)
            fields.append(_readonly(arr))
        self._fields = tuple(fields)

    @property
    def position(self) -> np.ndarray | None:
        """(3,) position [m], world frame, or None."""
        return self._fields[0]

    @property
    def orientation(self) -> np.ndarray | None:
        """(4,) quaternion (w, x, y, z), world frame, or None."""
        return self._fields[1]

    @property
    def linear_velocity(self) -> np.ndarray | None:
        """(3,) linear velocity [m/s], body frame, or None."""
        return self._fields[2]

    @property
    def angular_velocity(self) -> np.ndarray | None:
        """(3,) angular velocity [rad/s], body frame, or None."""
        return self._fields[3]

    def __repr__(self) -> str:
        parts = [
            f"{what}={np.array2string(v, precision=4)}"
            for what, v in zip(_ROOT_FIELDS, self._fields, strict=True)
            if v is not None
        ]
        return f"RootState({', '.join(parts)})"


# --------------------------------------------------------------------------------------------
# RobotState and merging
# --------------------------------------------------------------------------------------------


def _wrong_component(what: str, value: Any, kind: type) -> None:
    raise ValueError(f"{what} must be a {kind.__name__} or None, got {type(value).__name__}")


class RobotState:
    """Everything a controller reads or commands; every component is optional.

    Args:
        joints: Joint positions/velocities/efforts.
        root: Root (base) pose and twist.
        links: Link poses/twists (world frame).
        sites: Site or tool-frame poses/twists (world frame).

    An empty ``RobotState()`` is valid: it is the identity of :func:`combine_robot_states`.

    Raises:
        ValueError: If a component has the wrong type.
    """

    __slots__ = ("_joints", "_links", "_root", "_sites")

    def __init__(
        self,
        joints: JointState | None = None,
        root: RootState | None = None,
        links: SpatialState | None = None,
        sites: SpatialState | None = None,
    ):
        # explicit tests, not a loop: a RobotState is built on every control tick
        if joints is not None and not isinstance(joints, JointState):
            _wrong_component("joints", joints, JointState)
        if root is not None and not isinstance(root, RootState):
            _wrong_component("root", root, RootState)
        if links is not None and not isinstance(links, SpatialState):
            _wrong_component("links", links, SpatialState)
        if sites is not None and not isinstance(sites, SpatialState):
            _wrong_component("sites", sites, SpatialState)
        self._joints = joints
        self._root = root
        self._links = links
        self._sites = sites

    @property
    def joints(self) -> JointState | None:
        """Joint state, or None."""
        return self._joints

    @property
    def root(self) -> RootState | None:
        """Root state, or None."""
        return self._root

    @property
    def links(self) -> SpatialState | None:
        """Link states (world frame), or None."""
        return self._links

    @property
    def sites(self) -> SpatialState | None:
        """Site states (world frame), or None."""
        return self._sites

    def __repr__(self) -> str:
        parts = [
            f"{what}={value!r}"
            for what, value in (
                ("joints", self._joints),
                ("root", self._root),
                ("links", self._links),
                ("sites", self._sites),
            )
            if value is not None
        ]
        return f"RobotState({', '.join(parts)})"


class _Conflict(Exception):
    """Raised internally when two components cannot be merged."""


def _merge_joints(a: JointState | None, b: JointState | None) -> JointState | None:
    if a is None or b is None:
        return a if b is None else b
    if a._space is not b._space and a._space.names != b._space.names:
        raise _Conflict
    if (a._valid & b._valid).any():
        raise _Conflict
    data = np.where(a._valid, a._data, b._data)
    return JointState._from_trusted(a._space, data, a._valid | b._valid)


def _merge_spatial(a: SpatialState | None, b: SpatialState | None) -> SpatialState | None:
    if a is None or b is None:
        return a if b is None else b
    if a._space is not b._space and a._space.names != b._space.names:
        raise _Conflict
    if (a._valid & b._valid).any():
        raise _Conflict
    arrays = [
        np.where(a._valid[:, col : col + 1], a._arrays[col], b._arrays[col]) for col in range(4)
    ]
    return SpatialState._from_trusted(a._space, arrays, a._valid | b._valid)


def _merge_root(a: RootState | None, b: RootState | None) -> RootState | None:
    if a is None or b is None:
        return a if b is None else b
    fields: list[np.ndarray | None] = []
    for fa, fb in zip(a._fields, b._fields, strict=True):
        if fa is not None and fb is not None:
            raise _Conflict
        fields.append(fa if fb is None else fb)
    root = RootState.__new__(RootState)
    root._fields = tuple(fields)
    return root


def combine_robot_states(a: RobotState | None, b: RobotState | None) -> RobotState | None:
    """Merge two robot states, or return None if they conflict.

    Each component (joints, root, links, sites) is merged on its own: a component present on
    one side only is taken as is; present on both, the two must share the same ordered space
    (joints, links, sites) and must not both hold a valid value for the same (entry, field)
    pair (root: the same field). Writing different fields of the same joint or frame is
    allowed.

    Returns:
        A new :class:`RobotState`, or None if either input is None, the spaces differ or a
        value is given twice. Components are immutable, so the result may share a component
        that only one side had.

    Raises:
        ValueError: If an input is neither a RobotState nor None.
    """
    if a is None or b is None:
        return None
    for what, value in (("a", a), ("b", b)):
        if not isinstance(value, RobotState):
            raise ValueError(f"{what} must be a RobotState or None, got {type(value).__name__}")
    try:
        return RobotState(
            joints=_merge_joints(a.joints, b.joints),
            root=_merge_root(a.root, b.root),
            links=_merge_spatial(a.links, b.links),
            sites=_merge_spatial(a.sites, b.sites),
        )
    except _Conflict:
        return None
