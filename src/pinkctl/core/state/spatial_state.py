"""SpatialState: frame poses and velocities over a named frame space (world frame)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import InputError
from ._space import (
    _SPATIAL_DATA,
    _SPATIAL_FIELDS,
    _SPATIAL_WIDTHS,
    NameSpace,
    _bool_array,
    _check_finite,
    _check_quaternions,
    _field,
    _float_array,
    _format_entries,
    _readonly,
    name_space,
)


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
    _space: NameSpace
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
        space = name_space(spatial_space, "spatial_space")
        m = len(space)
        arrays = []
        inputs = (position_data, orientation_data, linear_velocity_data, angular_velocity_data)
        for what, width, value in zip(_SPATIAL_DATA, _SPATIAL_WIDTHS, inputs, strict=True):
            arr = _float_array(value, what)
            if arr.ndim != 2 or arr.shape != (m, width):
                raise InputError(f"{what} must have shape {(m, width)}, got {arr.shape}")
            arr = np.array(arr, dtype=np.float64)
            _check_finite(arr, what)
            arrays.append(arr)
        valid = _bool_array(valid_array, "valid_array")
        if valid.ndim != 2 or valid.shape != (m, 4):
            raise InputError(f"valid_array must have shape {(m, 4)}, got {valid.shape}")
        _check_quaternions(arrays[1][valid[:, 1]], "orientation_data")
        self._space = space
        self._arrays = tuple(_readonly(a) for a in arrays)  # type: ignore[assignment]
        self._valid = _readonly(valid.copy())

    @classmethod
    def from_trusted(
        cls, space: NameSpace | Sequence[str], arrays: Sequence[np.ndarray], valid: np.ndarray
    ) -> SpatialState:
        """Wrap already checked arrays without copying (the control loop's fast path).

        Unlike the constructor this checks nothing: ``arrays`` must be four finite float64
        arrays of shapes (M, 3), (M, 4), (M, 3), (M, 3) and ``valid`` an (M, 4) bool array,
        all owned by the caller and never written again (they are made read-only here).
        """
        obj = cls.__new__(cls)
        obj._space = name_space(space, "spatial_space")
        obj._arrays = tuple(_readonly(a) for a in arrays)  # type: ignore[assignment]
        obj._valid = _readonly(valid)
        return obj

    @classmethod
    def _from_fields(cls, space: NameSpace, specs: tuple[Any, ...], by_name: bool) -> SpatialState:
        m = len(space)
        arrays = [np.zeros((m, w)) for w in _SPATIAL_WIDTHS]
        valid = np.zeros((m, 4), dtype=bool)
        given = False
        for col, spec in enumerate(specs):
            if spec is None:
                continue
            given = True
            what, width = _SPATIAL_FIELDS[col], _SPATIAL_WIDTHS[col]
            idx, count, vals = _field(space, spec, what, by_name)
            if vals.ndim != 2 or vals.shape[1] != width:
                raise InputError(f"{what}: values must have shape (K, {width}), got {vals.shape}")
            if vals.shape[0] == 0:
                raise InputError(f"{what}: at least one row is required")
            if vals.shape[0] != count:
                raise InputError(f"{what}: {count} names/indices but {vals.shape[0]} rows")
            _check_finite(vals, what)
            if col == 1:
                _check_quaternions(vals, what)
            arrays[col][idx] = vals
            valid[idx, col] = True
        if not given:
            raise InputError(f"at least one of {', '.join(_SPATIAL_FIELDS)} is required")
        return cls.from_trusted(space, arrays, valid)

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
            angular_velocities: ``(names, (K, 3) array)`` in rad/s, world frame. In every
                pair ``names`` is a ``list`` of unique names of the space, K = len(names) >= 1,
                values floating point and finite.

        Raises:
            ValueError: If no field is given or a field breaks the rules above.
        """
        space = name_space(spatial_space, "spatial_space")
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
        space = name_space(spatial_space, "spatial_space")
        specs = (positions, orientations, linear_velocities, angular_velocities)
        return cls._from_fields(space, specs, by_name=False)

    # ----- read API -----------------------------------------------------------------------

    @property
    def spatial_space(self) -> list[str]:
        """The ordered frame names (a fresh list)."""
        return list(self._space.names)

    @property
    def name_space(self) -> NameSpace:
        """The frame space as a shared :class:`~pinkctl.core.state.NameSpace`."""
        return self._space

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
