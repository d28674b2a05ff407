"""The ``priority_levels`` argument of :class:`~pinkctl.controllers.PinkIKController`.

Levels list the controller's tasks from the highest priority down. An entry is ``"frame"``
(the tool-frame task), ``"posture"`` (the posture task) or one of the pink tasks passed in
``extra_tasks``, or a whole-body entry (:mod:`pinkctl.controllers.whole_body`): a frame of
``frames`` by its name, ``"com"``, ``"contacts"`` (every contact; optional: left out, the
contacts stay rows held at every level). Every task of the controller appears in exactly one
level, so nothing is silently dropped or weighted against another level. For example, the
tool pose strictly above the posture::

    PinkIKController(robot, joints, sites, dt=0.005, priority_levels=[["frame"], ["posture"]])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pink.tasks import Task

from ..errors import InputError

__all__ = ["resolve_priority_levels"]


def _is_sequence(value: Any) -> bool:
    """Whether ``value`` is a non-empty sequence other than a string."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and bool(value)


def _entry_tasks(
    entry: Any, k: int, names: Mapping[str, tuple[Task, ...] | None], extra: Sequence[Task]
) -> tuple[Task, ...]:
    """The tasks of one entry of level ``k``: a name of ``names`` or a task of ``extra``."""
    if not isinstance(entry, str):
        if any(entry is t for t in extra):
            return (entry,)
        raise InputError(
            f"priority_levels[{k}]: {entry!r} is neither 'frame', 'posture' nor a task "
            "of extra_tasks"
        )
    if entry not in names:
        whole_body = sorted(set(names) - {"frame", "posture"})
        raise InputError(
            f"priority_levels[{k}]: unknown entry {entry!r} (use 'frame', 'posture', "
            f"a task of extra_tasks or one of {whole_body})"
        )
    tasks = names[entry]
    if tasks is None:
        raise InputError(f"priority_levels[{k}]: no posture task (posture_cost is 0)")
    return tasks


def _contains(tasks: Sequence[Task], task: Task) -> bool:
    """Whether ``task`` is one of ``tasks`` (by identity: tasks do not compare by value)."""
    return any(task is t for t in tasks)


def _level_tasks(
    levels: Sequence[Any], names: Mapping[str, tuple[Task, ...] | None], extra: Sequence[Task]
) -> list[tuple[Task, ...]]:
    """The tasks of each level, every task in one level at most."""
    resolved: list[tuple[Task, ...]] = []
    placed: list[Task] = []
    for k, level in enumerate(levels):
        if not _is_sequence(level):
            raise InputError(f"priority_levels[{k}] must be a non-empty sequence, got {level!r}")
        tasks: list[Task] = []
        for entry in level:
            entries = _entry_tasks(entry, k, names, extra)
            if any(_contains(placed, task) for task in entries):
                raise InputError(f"priority_levels[{k}]: {entry!r} is in more than one level")
            placed.extend(entries)
            tasks.extend(entries)
        resolved.append(tuple(tasks))
    return resolved


def _left_out(
    levels: Sequence[tuple[Task, ...]], tasks: Sequence[Task], named: Mapping[str, tuple[Task, ...]]
) -> list[Task]:
    """The tasks of the controller (``tasks`` and the named ones, the optional contacts
    excepted) that no level holds."""
    placed = [task for level in levels for task in level]
    optional = named.get("contacts", ())
    required = [*tasks, *(t for ts in named.values() for t in ts if not _contains(optional, t))]
    return [t for t in required if not _contains(placed, t)]


def resolve_priority_levels(
    levels: Any,
    frame: Task,
    posture: Task | None,
    extra: Sequence[Task],
    named: Mapping[str, tuple[Task, ...]] | None = None,
) -> tuple[tuple[Task, ...], ...]:
    """The tasks of each level (module docstring).

    Raises:
        InputError: Not a sequence of non-empty sequences, an unknown entry, a task placed
            twice, or a task of the controller left out.
    """
    if not _is_sequence(levels):
        raise InputError(f"priority_levels must be a non-empty sequence of levels, got {levels!r}")
    named = dict(named or {})
    postures = () if posture is None else (posture,)
    names = {"frame": (frame,), "posture": postures or None, **named}
    resolved = _level_tasks(levels, names, extra)
    missing = _left_out(resolved, [frame, *postures, *extra], named)
    if missing:
        raise InputError(f"priority_levels leaves out tasks of the controller: {missing}")
    return tuple(resolved)
