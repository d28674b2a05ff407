"""Reading an SRDF's named states (``group_state``): joint values by name, and a root pose.

An SRDF names configurations of the robot, e.g. ``home``::

    <group_state name="home" group="arm">
      <joint name="joint1" value="0.0"/>
      <joint name="root_joint" value="0 0 1 0 0 0 1"/>   <!-- x y z qx qy qz qw -->
    </group_state>

A state may be split over several ``group_state`` entries of the same name (one per group);
they are read together.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ...errors import ConfigurationError

__all__ = ["srdf_group_states", "srdf_root_pose", "srdf_state"]


def _parse(srdf_path: Path) -> ET.Element:
    try:
        return ET.parse(srdf_path).getroot()
    except ET.ParseError as exc:
        raise ConfigurationError(f"cannot parse SRDF {srdf_path}: {exc}") from exc


def srdf_state(srdf_path: Path, state_name: str) -> dict[str, float] | None:
    """Joint values of the SRDF ``group_state`` named ``state_name`` (None if absent).

    Raises:
        ValueError: If the SRDF cannot be parsed, or a joint value is missing or not a finite
            number (the message names the file and the joint).
    """
    values: dict[str, float] | None = None
    for state in _parse(srdf_path).iter("group_state"):
        if state.get("name") != state_name:
            continue
        values = {} if values is None else values
        for joint in state.iter("joint"):
            name = joint.get("name", "")
            text = (joint.get("value") or "").split()
            try:
                value = float(text[0])
            except (IndexError, ValueError):
                value = math.nan
            if not math.isfinite(value):
                raise ConfigurationError(
                    f"{srdf_path}: group_state {state_name!r} gives joint {name!r} the value "
                    f"{joint.get('value')!r}; expected a finite number"
                )
            values[name] = value
    return values


def srdf_group_states(srdf_path: Path) -> list[tuple[str, dict[str, float]]]:
    """The SRDF's ``group_state`` entries as ``(name, {joint: value})`` in file order.

    Raises:
        ValueError: A value that is missing or not a finite number (file and joint named).
    """
    names = [s.get("name", "") for s in _parse(srdf_path).iter("group_state")]
    return [(n, srdf_state(srdf_path, n) or {}) for n in dict.fromkeys(names)]


def srdf_root_pose(srdf_path: Path, state_name: str, root_joint: str) -> np.ndarray | None:
    """The pose a state gives the free-flyer ``root_joint``: ``(x, y, z, qx, qy, qz, qw)``
    (Pinocchio's layout) with a unit quaternion, or None when the state gives none (a value
    of seven numbers is a pose)."""
    pose = None
    for state in _parse(srdf_path).iter("group_state"):
        if state.get("name") != state_name:
            continue
        for joint in state.iter("joint"):
            numbers = (joint.get("value") or "").split()
            if joint.get("name") == root_joint and len(numbers) == 7:
                pose = np.array([float(v) for v in numbers])
                pose[3:] /= np.linalg.norm(pose[3:])
    return pose
