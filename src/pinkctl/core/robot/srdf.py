"""Reading an SRDF: its named states (``group_state``: joint values by name, a root pose) and
its planning groups (the joints of a ``group``).

An SRDF names configurations of the robot, e.g. ``home``::

    <group_state name="home" group="arm">
      <joint name="joint1" value="0.0"/>
      <joint name="root_joint" value="0 0 1 0 0 0 1"/>   <!-- x y z qx qy qz qw -->
    </group_state>

A state may be split over several ``group_state`` entries of the same name (one per group);
they are read together.

A planning group is defined by a ``<group name=...>`` element directly under ``<robot>``,
whose entries are, as the SRDF specification defines them: ``<joint name>`` (that joint),
``<link name>`` (the joint whose child it is), ``<chain base_link tip_link>`` (the joints
from the base link down to the tip link) and ``<group name>`` with no entries of its own (a
reference: every joint of the group of that name, resolved recursively). A reference
nested in another group is never a definition, so ``<group name="arms"><group
name="right_arm"/></group>`` leaves the real ``right_arm`` as it is.

Pinocchio reads an SRDF too: the loader drops its ``disable_collisions`` pairs with
``pin.removeCollisionPairs``. Its ``pin.loadReferenceConfigurations`` does not read the
states as described here (a state split over several groups keeps one group only, a value
it cannot read is skipped, not refused, and a root quaternion is not normalised), and it has
no planning groups: this module reads those.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin

from ...errors import ConfigurationError

__all__ = ["srdf_group_joints", "srdf_group_states", "srdf_root_pose", "srdf_state"]


def _parse(srdf_path: Path) -> ET.Element:
    try:
        return ET.parse(srdf_path).getroot()
    except ET.ParseError as exc:
        raise ConfigurationError(f"cannot parse SRDF {srdf_path}: {exc}") from exc


def _states(srdf_path: Path) -> dict[str, list[tuple[str, str | None]]]:
    """``{state name: [(joint name, value attribute), ...]}`` of the SRDF's ``group_state``
    entries, states in file order, the entries of a state split over several groups
    together."""
    states: dict[str, list[tuple[str, str | None]]] = {}
    for state in _parse(srdf_path).iter("group_state"):
        entries = states.setdefault(state.get("name", ""), [])
        entries += [(j.get("name", ""), j.get("value")) for j in state.iter("joint")]
    return states


def _values(
    srdf_path: Path, state_name: str, entries: list[tuple[str, str | None]]
) -> dict[str, float]:
    """The first number of each entry's value, by joint name.

    Raises:
        ValueError: A value that is missing or not a finite number.
    """
    values: dict[str, float] = {}
    for name, text in entries:
        numbers = (text or "").split()
        try:
            value = float(numbers[0])
        except (IndexError, ValueError):
            value = math.nan
        if not math.isfinite(value):
            raise ConfigurationError(
                f"{srdf_path}: group_state {state_name!r} gives joint {name!r} the value "
                f"{text!r}; expected a finite number"
            )
        values[name] = value
    return values


def srdf_state(srdf_path: Path, state_name: str) -> dict[str, float] | None:
    """Joint values of the SRDF ``group_state`` named ``state_name`` (None if absent).

    Raises:
        ValueError: If the SRDF cannot be parsed, or a joint value is missing or not a finite
            number (the message names the file and the joint).
    """
    entries = _states(srdf_path).get(state_name)
    return None if entries is None else _values(srdf_path, state_name, entries)


def srdf_group_states(srdf_path: Path) -> list[tuple[str, dict[str, float]]]:
    """The SRDF's ``group_state`` entries as ``(name, {joint: value})`` in file order.

    Raises:
        ValueError: A value that is missing or not a finite number (file and joint named).
    """
    return [(n, _values(srdf_path, n, e)) for n, e in _states(srdf_path).items()]


def srdf_root_pose(srdf_path: Path, state_name: str, root_joint: str) -> np.ndarray | None:
    """The pose a state gives the free-flyer ``root_joint``: ``(x, y, z, qx, qy, qz, qw)``
    (Pinocchio's layout) with a unit quaternion, or None when the state gives none (a value
    of seven numbers is a pose; the last one counts)."""
    poses = [
        (text or "").split()
        for name, text in _states(srdf_path).get(state_name, [])
        if name == root_joint and len((text or "").split()) == 7
    ]
    if not poses:
        return None
    pose = np.array([float(v) for v in poses[-1]])
    pose[3:] /= np.linalg.norm(pose[3:])
    return pose


def _body(model: pin.Model, link: str) -> int | None:
    """The id of the link (body frame) ``link``, or None."""
    if not model.existFrame(link, pin.FrameType.BODY):
        return None
    return int(model.getFrameId(link, pin.FrameType.BODY))


def _chain(model: pin.Model, srdf_path: Path, group: str, entry: ET.Element) -> list[str]:
    base, tip = entry.get("base_link", ""), entry.get("tip_link", "")
    base_id, tip_id = _body(model, base), _body(model, tip)
    if base_id is None or tip_id is None:
        unknown = [name for name, i in ((base, base_id), (tip, tip_id)) if i is None]
        raise ConfigurationError(
            f"{srdf_path}: group {group!r}: chain {base!r} -> {tip!r} names links {unknown} "
            "that the model does not have"
        )
    stop = model.frames[base_id].parentJoint
    j = model.frames[tip_id].parentJoint
    path = []
    while j != stop:
        if j == 0:
            raise ConfigurationError(
                f"{srdf_path}: group {group!r}: chain {base!r} -> {tip!r}: {base!r} is not "
                f"between the root and {tip!r}"
            )
        path.append(str(model.names[j]))
        j = model.parents[j]
    return list(reversed(path))


def srdf_group_joints(model: pin.Model, srdf_path: Path, group: str) -> list[str]:
    """The model joints of the SRDF planning group ``group``, in the order its entries give
    them, each once (see the module docstring for the entries). Joints the model does not
    have (fixed or virtual joints) are left out; the caller keeps the movable ones.

    Raises:
        ValueError: The group, or a group it references, is not defined (the groups are
            listed), references form a cycle, or a chain names unknown links.
    """
    defined: dict[str, ET.Element] = {}
    for element in _parse(srdf_path).findall("group"):
        defined.setdefault(element.get("name", ""), element)  # the first definition counts

    def joints_of(name: str, trail: tuple[str, ...]) -> list[str]:
        if name in trail:
            cycle = " -> ".join((*trail[trail.index(name) :], name))
            raise ConfigurationError(f"{srdf_path}: planning groups reference each other: {cycle}")
        if name not in defined:
            where = f" (referenced by group {trail[-1]!r})" if trail else ""
            raise ConfigurationError(
                f"{srdf_path}: no planning group {name!r}{where}; groups: {sorted(defined)}"
            )
        out: list[str] = []
        for entry in defined[name]:
            if entry.tag == "joint":
                out.append(entry.get("name", ""))
            elif entry.tag == "link":  # its parent joint, unless that one is fixed
                link = _body(model, entry.get("name", ""))
                if link is not None:
                    parent = model.frames[model.frames[link].parentFrame]
                    if parent.type == pin.FrameType.JOINT:
                        out.append(str(model.names[parent.parentJoint]))
            elif entry.tag == "chain":
                out += _chain(model, srdf_path, name, entry)
            elif entry.tag == "group":
                out += joints_of(entry.get("name", ""), (*trail, name))
        return out

    joints = joints_of(group, ())
    return [j for j in dict.fromkeys(joints) if model.existJointName(j)]
