"""RobotState: joints, root, links and sites together, and their merge."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import InputError
from .joint_state import JointState
from .root_state import RootState
from .spatial_state import SpatialState


def _wrong_component(what: str, value: Any, kind: type) -> None:
    raise InputError(f"{what} must be a {kind.__name__} or None, got {type(value).__name__}")


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


def _check_mergeable(a: JointState | SpatialState, b: JointState | SpatialState) -> None:
    """:class:`_Conflict` unless ``a`` and ``b`` share their space and no valid entry."""
    if a._space is not b._space and a._space.names != b._space.names:
        raise _Conflict
    if (a._valid & b._valid).any():
        raise _Conflict


def _merge_joints(a: JointState | None, b: JointState | None) -> JointState | None:
    if a is None or b is None:
        return a if b is None else b
    _check_mergeable(a, b)
    data = np.where(a._valid, a._data, b._data)
    return JointState.from_trusted(a._space, data, a._valid | b._valid)


def _merge_spatial(a: SpatialState | None, b: SpatialState | None) -> SpatialState | None:
    if a is None or b is None:
        return a if b is None else b
    _check_mergeable(a, b)
    arrays = [
        np.where(a._valid[:, col : col + 1], a._arrays[col], b._arrays[col]) for col in range(4)
    ]
    return SpatialState.from_trusted(a._space, arrays, a._valid | b._valid)


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
            raise InputError(f"{what} must be a RobotState or None, got {type(value).__name__}")
    try:
        return RobotState(
            joints=_merge_joints(a.joints, b.joints),
            root=_merge_root(a.root, b.root),
            links=_merge_spatial(a.links, b.links),
            sites=_merge_spatial(a.sites, b.sites),
        )
    except _Conflict:
        return None
