"""The solvers :func:`~pinkctl.ik.find_ik` and :func:`~pinkctl.ik.local_ik` reuse.

Building an :class:`~pinkctl.ik.IKSolver` (frames and joints resolved, method bound, work
arrays allocated) costs about 1 ms, several times a solve. The functions therefore keep one
solver per (robot, solver options) and thread, so that a loop of calls costs what the same
loop on one prebuilt solver does.

An entry is keyed by the robot's identity and the options that shape the solver (frame,
joints, method, goal mode, tolerances, collision margin and self-collision; the world by
identity: the solver's collision check follows that world's changes through its version),
never by per-call values (target, seed, budget). It
is rebuilt when the robot changes under it (another model, other joint limits, other
controlled joints or tool frame). A thread keeps at most :data:`MAX_CACHED_SOLVERS`
solvers, least recently used dropped first; each keeps its robot alive until then (or until
:func:`clear_solver_cache`), which also means a robot's ``id`` cannot be reused by another
while its entry exists. Options holding an :class:`~pinkctl.ik.methods.IKMethod` object
(stateful, bound to one model) are never cached.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from ..core.robot import PinkRobot
from ..world import World
from .methods import IKMethod
from .options import IKOptions
from .solver import IKSolver

__all__ = ["MAX_CACHED_SOLVERS", "cached_solver", "clear_solver_cache"]

#: Solvers kept per thread (least recently used dropped first).
MAX_CACHED_SOLVERS = 16

_local = threading.local()


def _hashable(value: Any) -> Hashable:
    """A hashable, value-equal form of an option value (raises TypeError for objects)."""
    if isinstance(value, np.ndarray):
        return (value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, World):
        # by identity: the solver follows that world's changes (its version), and the entry
        # keeps the world alive, so its id is not reused while the entry exists
        return ("world", id(value))
    if isinstance(value, Mapping):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, IKMethod):
        raise TypeError("an IKMethod object is bound to one solver")
    hash(value)
    return value


def _fingerprint(robot: PinkRobot) -> tuple[Any, ...]:
    """What a built solver took from the robot: it is rebuilt when any of it changes."""
    model = robot.model
    return (
        id(model),
        model.nq,
        model.lowerPositionLimit.tobytes(),
        model.upperPositionLimit.tobytes(),
        tuple(robot.controlled_joint_names),
        robot.tool_frame,
        getattr(robot, "floating_base", False),
    )


def _entries() -> OrderedDict[Hashable, tuple[tuple[Any, ...], IKSolver]]:
    entries = getattr(_local, "entries", None)
    if entries is None:
        entries = _local.entries = OrderedDict()
    return entries


def cached_solver(robot: PinkRobot, options: IKOptions) -> IKSolver:
    """The thread's solver for ``robot`` and ``options``, built on first use.

    Raises:
        InputError: Bad options or robot (from :class:`~pinkctl.ik.IKSolver`).
    """
    if not isinstance(robot, PinkRobot):  # let IKSolver name the argument
        return IKSolver(robot, options)
    fingerprint = _fingerprint(robot)
    last = getattr(_local, "last", None)
    if last is not None and last[0] is robot and last[1] is options and last[2] == fingerprint:
        return last[3]  # a loop of the same call: no hashing at all
    key, immutable = _key(options)
    if key is None:  # an option object the cache cannot compare: a fresh solver
        return IKSolver(robot, options)
    solver = _cached(robot, (id(robot), key), fingerprint, options)
    _local.last = (robot, options, fingerprint, solver) if immutable else None
    return solver


def _key(options: IKOptions) -> tuple[Hashable | None, bool]:
    """The cache key of ``options`` (None: not comparable) and whether they are immutable
    (every field hashable: the dataclass is its own key; else the same object may hold other
    values next time, and the key is their hashable form)."""
    try:
        hash(options)
        return options, True
    except TypeError:  # lists or arrays among the values
        try:
            return _hashable([getattr(options, f) for f in options.__dataclass_fields__]), False
        except TypeError:
            return None, False


def _cached(
    robot: PinkRobot, key: Hashable, fingerprint: tuple[Any, ...], options: IKOptions
) -> IKSolver:
    """The thread's solver under ``key``, built (and the oldest dropped) when missing or
    built from a robot that changed since."""
    entries = _entries()
    hit = entries.get(key)
    if hit is not None and hit[0] == fingerprint:
        entries.move_to_end(key)
        return hit[1]
    solver = IKSolver(robot, options)
    entries[key] = (fingerprint, solver)
    while len(entries) > MAX_CACHED_SOLVERS:
        entries.popitem(last=False)
    return solver


def clear_solver_cache() -> None:
    """Drop every solver this thread's :func:`~pinkctl.ik.find_ik` / ``local_ik`` kept."""
    _local.entries = OrderedDict()
    _local.last = None
