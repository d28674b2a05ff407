"""Frames by name, resolved the same way everywhere (controller, IK, simulation).

A URDF may give a link and a joint the same name (Unitree's Z1: ``gripperStator``); Pinocchio
then holds a body frame and a joint frame of that name, and every lookup by name fails with
"several frames match". The rule here: the **link** (body) keeps the name, and the other
frame is renamed ``<name>_joint`` (:func:`disambiguate_frames`, applied by the loader; the
joint itself keeps its name). Two frames of the same name that are not a link and a joint (an
MJCF site named like a body, say) are a real ambiguity: :func:`resolve_frame` raises a
``ValueError`` listing them with their types.
"""

from __future__ import annotations

import difflib

import pinocchio as pin

from ...errors import ConfigurationError

__all__ = ["disambiguate_frames", "resolve_frame"]

_BODY = pin.FrameType.BODY
_JOINTS = (pin.FrameType.JOINT, pin.FrameType.FIXED_JOINT)


def disambiguate_frames(model: pin.Model) -> list[str]:
    """Rename joint frames that share a link frame's name to ``<name>_joint``, in place.

    Returns:
        One line per renamed frame (for the loader's report).
    """
    bodies = {f.name for f in model.frames if f.type == _BODY}
    taken = {f.name for f in model.frames}
    notes = []
    for index in range(model.nframes):
        frame = model.frames[index]
        if frame.type in _JOINTS and frame.name in bodies:
            new = f"{frame.name}_joint"
            while new in taken:
                new += "_"
            notes.append(
                f"joint frame {frame.name!r} renamed {new!r}: the link of that name keeps it"
            )
            frame.name = new
            model.frames[index] = frame
            taken.add(new)
    return notes


def resolve_frame(model: pin.Model, name: str, *, what: str = "frame") -> int:
    """The id of the frame called ``name``.

    Raises:
        ValueError: If no frame has that name (close names suggested), or several do (listed
            with their types).
    """
    if not isinstance(name, str):
        raise ConfigurationError(f"{what} must be a frame name, got {name!r}")
    matches = [i for i, f in enumerate(model.frames) if f.name == name]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        names = dict.fromkeys(f.name for f in list(model.frames)[1:])  # in order, each once
        close = difflib.get_close_matches(name, list(names), n=5)
        hint = f"; close names: {close}" if close else ""
        raise ConfigurationError(f"{what} {name!r} is not a frame of the model{hint}")
    listed = ", ".join(f"#{i} ({model.frames[i].type.name})" for i in matches)
    raise ConfigurationError(f"{what} {name!r} is ambiguous: frames {listed} share that name")
