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


def resolve_priority_levels(
    levels: Any,
    frame: Task,
    posture: Task | None,
    extra: Sequence[Task],
    named: Mapping[str, tuple[Task, ...]] | None = None,
) -> tuple[tuple[Task, ...], ...]:
    """The tasks of each level (module docstring).

    Raises:
        ValueError: Not a sequence of non-empty sequences, an unknown entry, a task placed
            twice, or a task of the controller left out.
    """
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence) or not levels:
        raise InputError(f"priority_levels must be a non-empty sequence of levels, got {levels!r}")
    names: dict[str, tuple[Task, ...] | None] = {"frame": (frame,), "posture": None}
    if posture is not None:
        names["posture"] = (posture,)
    names.update(named or {})
    resolved: list[tuple[Task, ...]] = []
    placed: list[Task] = []
    for k, level in enumerate(levels):
        if isinstance(level, (str, bytes)) or not isinstance(level, Sequence) or not level:
            raise InputError(f"priority_levels[{k}] must be a non-empty sequence, got {level!r}")
        tasks: list[Task] = []
        for entry in level:
            if isinstance(entry, str):
                if entry not in names:
                    raise InputError(
                        f"priority_levels[{k}]: unknown entry {entry!r} (use 'frame', 'posture', "
                        f"a task of extra_tasks or one of {sorted(named or {})})"
                    )
                entries = names[entry]
                if entries is None:
                    raise InputError(f"priority_levels[{k}]: no posture task (posture_cost is 0)")
            elif any(entry is t for t in extra):
                entries = (entry,)
            else:
                raise InputError(
                    f"priority_levels[{k}]: {entry!r} is neither 'frame', 'posture' nor a task "
                    "of extra_tasks"
                )
            if any(task is t for task in entries for t in placed):
                raise InputError(f"priority_levels[{k}]: {entry!r} is in more than one level")
            placed.extend(entries)
            tasks.extend(entries)
        resolved.append(tuple(tasks))
    optional = (named or {}).get("contacts", ())
    everything = [frame, *([posture] if posture is not None else []), *extra]
    everything += [
        t for name, ts in (named or {}).items() for t in ts if not any(t is o for o in optional)
    ]
    missing = [t for t in everything if not any(t is p for p in placed)]
    if missing:
        raise InputError(f"priority_levels leaves out tasks of the controller: {missing}")
    return tuple(resolved)
