"""The ``priority_levels`` argument of :class:`~pinkctl.controllers.PinkIKController`.

Levels list the controller's tasks from the highest priority down. An entry is ``"frame"``
(the tool-frame task), ``"posture"`` (the posture task) or one of the pink tasks passed in
``extra_tasks``; every task of the controller appears in exactly one level, so nothing is
silently dropped or weighted against another level. For example, the tool pose strictly above
the posture::

    PinkIKController(robot, joints, sites, dt=0.005, priority_levels=[["frame"], ["posture"]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pink.tasks import Task

from ..errors import InputError

__all__ = ["resolve_priority_levels"]


def resolve_priority_levels(
    levels: Any, frame: Task, posture: Task | None, extra: Sequence[Task]
) -> tuple[tuple[Task, ...], ...]:
    """The tasks of each level (module docstring).

    Raises:
        ValueError: Not a sequence of non-empty sequences, an unknown entry, a task placed
            twice, or a task of the controller left out.
    """
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence) or not levels:
        raise InputError(f"priority_levels must be a non-empty sequence of levels, got {levels!r}")
    names: dict[str, Task | None] = {"frame": frame, "posture": posture}
    resolved: list[tuple[Task, ...]] = []
    placed: list[Task] = []
    for k, level in enumerate(levels):
        if isinstance(level, (str, bytes)) or not isinstance(level, Sequence) or not level:
            raise InputError(f"priority_levels[{k}] must be a non-empty sequence, got {level!r}")
        tasks = []
        for entry in level:
            if isinstance(entry, str):
                if entry not in names:
                    raise InputError(
                        f"priority_levels[{k}]: unknown entry {entry!r} (use 'frame', 'posture' "
                        "or a task of extra_tasks)"
                    )
                task = names[entry]
                if task is None:
                    raise InputError(f"priority_levels[{k}]: no posture task (posture_cost is 0)")
            elif any(entry is t for t in extra):
                task = entry
            else:
                raise InputError(
                    f"priority_levels[{k}]: {entry!r} is neither 'frame', 'posture' nor a task "
                    "of extra_tasks"
                )
            if any(task is t for t in placed):
                raise InputError(f"priority_levels[{k}]: {entry!r} is in more than one level")
            placed.append(task)
            tasks.append(task)
        resolved.append(tuple(tasks))
    everything = [frame, *([posture] if posture is not None else []), *extra]
    missing = [t for t in everything if not any(t is p for p in placed)]
    if missing:
        raise InputError(f"priority_levels leaves out tasks of the controller: {missing}")
    return tuple(resolved)
