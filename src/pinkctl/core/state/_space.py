"""Name spaces and argument checks shared by the state types (see :mod:`pinkctl.core.state`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import InputError

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


class NameSpace:
    """An ordered list of unique names with a precomputed name -> index map.

    Instances are shared through :func:`name_space`, so two states built over equal name
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
            raise InputError(f"{what}: names must be a list of str, got {type(names).__name__}")
        try:
            key = tuple(names)
            cached = self._subsets.get(key)
        except TypeError:  # unhashable element
            cached = key = None
        if cached is not None:
            return cached
        _check_unique_strings(names, f"{what}: names must be str", f"{what}: duplicate names")
        unknown = [n for n in names if n not in self.index]
        if unknown:
            raise InputError(f"{what}: names {unknown} are not in the space {list(self.names)}")
        found: tuple[np.ndarray | slice, int] = (self._location(names), len(names))
        if key is not None:
            if len(self._subsets) >= _MAX_CACHED_SUBSETS:
                self._subsets.clear()
            self._subsets[key] = found
        return found

    def _location(self, names: list[str]) -> np.ndarray | slice:
        """A read-only index array of ``names``, or ``slice(None)`` for the whole space."""
        if tuple(names) == self.names:
            return slice(None)
        idx = np.fromiter((self.index[n] for n in names), dtype=np.intp, count=len(names))
        idx.flags.writeable = False
        return idx

    def lookup_indices(self, indices: Any, what: str) -> tuple[np.ndarray, int]:
        """Check ``indices`` (a list or 1-D integer array of unique indices); return them."""
        idx = _index_array(indices, what)
        n = len(self.names)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise InputError(f"{what}: indices {idx.tolist()} out of range [0, {n})")
        if np.unique(idx).size != idx.size:
            raise InputError(f"{what}: duplicate indices {idx.tolist()}")
        return idx, idx.shape[0]


_SPACES: dict[tuple[str, ...], NameSpace] = {}


def name_space(names: Any, what: str) -> NameSpace:
    """The shared :class:`NameSpace` for a list (or tuple) of unique, non-empty names."""
    if isinstance(names, NameSpace):
        return names
    if not isinstance(names, (list, tuple)):
        raise InputError(f"{what} must be a list of str, got {type(names).__name__}")
    try:
        key = tuple(names)
        space = _SPACES.get(key)
    except TypeError:
        space = None
        key = None
    if space is not None:
        return space
    if len(names) == 0:
        raise InputError(f"{what} must not be empty")
    _check_unique_strings(names, f"{what} must hold str names", f"{what} has duplicate names")
    assert key is not None  # all elements are str, hence hashable
    space = NameSpace(key)
    if len(_SPACES) >= _MAX_CACHED_SPACES:
        _SPACES.clear()
    _SPACES[key] = space
    return space


def _check_unique_strings(names: Sequence[Any], not_str: str, duplicates: str) -> None:
    """Raise ``not_str`` (a message start) for a name that is not a str, ``duplicates`` for
    names listed twice."""
    for name in names:
        if not isinstance(name, str):
            raise InputError(f"{not_str}, got {name!r}")
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise InputError(f"{duplicates} {dup}")


def _index_array(indices: Any, what: str) -> np.ndarray:
    """A list of ints or a 1-D integer array as an intp array (not yet range-checked)."""
    if isinstance(indices, np.ndarray):
        if indices.ndim != 1 or indices.dtype.kind not in "iu":
            raise InputError(
                f"{what}: indices must be a 1-D integer array, got dtype {indices.dtype} "
                f"and shape {indices.shape}"
            )
        return indices.astype(np.intp)
    if type(indices) is not list:
        raise InputError(f"{what}: indices must be a list of int, got {type(indices).__name__}")
    for i in indices:
        if not (type(i) is int or isinstance(i, np.integer)):
            raise InputError(f"{what}: indices must be int, got {i!r}")
    try:
        return np.array(indices, dtype=np.intp)
    except OverflowError as exc:
        raise InputError(f"{what}: indices {indices} out of range: {exc}") from exc


def _float_array(values: Any, what: str) -> np.ndarray:
    """``values`` as an ndarray of a floating dtype (not yet float64); ValueError otherwise."""
    if type(values) is np.ndarray:
        arr = values
    else:
        try:
            arr = np.asarray(values)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputError(f"{what}: cannot read values as an array: {exc}") from exc
    if arr.dtype.kind != "f":
        raise InputError(
            f"{what}: values must be floating point, got dtype {arr.dtype} "
            "(pass e.g. np.asarray(values, dtype=float))"
        )
    return arr


def _bool_array(values: Any, what: str) -> np.ndarray:
    """``values`` as an ndarray of dtype bool; ValueError otherwise."""
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{what}: cannot read values as an array: {exc}") from exc
    if arr.dtype != np.bool_:
        raise InputError(f"{what} must have dtype bool, got {arr.dtype}")
    return arr


def _field(
    space: NameSpace, spec: Any, what: str, by_name: bool
) -> tuple[np.ndarray | slice, int, np.ndarray]:
    """A ``(names, values)`` or ``(indices, values)`` pair: where the entries sit in
    ``space``, how many there are, and the values (floating point, not yet shaped)."""
    if not isinstance(spec, (tuple, list)) or len(spec) != 2:
        raise InputError(f"{what} must be a (names_or_indices, values) pair, got {spec!r}")
    keys, values = spec
    if by_name:
        idx, count = space.lookup_names(keys, what)
    else:
        idx, count = space.lookup_indices(keys, what)
    return idx, count, _float_array(values, what)


def _check_finite(arr: np.ndarray, what: str) -> None:
    if not np.isfinite(arr).all():
        raise InputError(f"{what} contains NaN or infinite values")


def _check_quaternions(quats: np.ndarray, what: str) -> None:
    """Reject all-zero quaternions (rows of ``quats``, already known finite)."""
    if quats.size and (np.abs(quats).max(axis=1) < QUATERNION_MIN_NORM).any():
        raise InputError(f"{what}: quaternion (w, x, y, z) must not be zero")


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)  # cheaper than assigning flags.writeable
    return arr


def _format_entries(names: Sequence[str], values: np.ndarray, limit: int = 4) -> str:
    items = [f"{n}: {np.array2string(v, precision=4)}" for n, v in zip(names, values, strict=True)]
    if len(items) > limit:
        items = items[:limit] + [f"... (+{len(names) - limit})"]
    return "{" + ", ".join(items) + "}"
