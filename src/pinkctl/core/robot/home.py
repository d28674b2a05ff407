"""The home configuration: named values, an SRDF state, or inferred; inside the joint ranges.

Values are by joint name: a revolute or prismatic joint takes its position, a continuous
joint its angle (stored as ``cos, sin`` in Pinocchio's ``q``), a mimic follower is skipped
(its master sets it). An SRDF state may also place a free-flyer root (see
:func:`~pinkctl.core.robot.srdf.srdf_root_pose`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pinocchio as pin

from ...errors import ConfigurationError
from ..joints import joint_positions_to_configuration
from .inference import infer_home
from .srdf import srdf_group_states, srdf_root_pose, srdf_state

__all__ = ["apply_positions", "apply_srdf_state", "check_home", "set_home"]

#: How far outside its range a home value may be [rad] or [m] (rounding in files).
RANGE_TOLERANCE = 1e-9


def apply_positions(model: pin.Model, q: np.ndarray, positions: Mapping[str, float]) -> None:
    """Write named scalar joint positions into ``q`` (continuous joints as cos/sin, mimic
    followers skipped: their master sets them).

    Raises:
        ValueError: A joint the model lacks (close names suggested), or one with more than
            one coordinate.
    """
    for name in positions:
        if not model.existJointName(name):
            close = difflib.get_close_matches(name, list(model.names), n=3)
            raise ConfigurationError(
                f"joint {name!r} of the home configuration is not in the model"
                + (f"; close names: {close}" if close else "")
            )
    names, values = list(positions), list(positions.values())
    q[:] = joint_positions_to_configuration(names, values, model, q)


def apply_srdf_state(
    model: pin.Model, q: np.ndarray, srdf: Path, name: str, values: Mapping[str, float]
) -> None:
    """An SRDF state into ``q``: joints the model lacks are skipped (a state of the full robot
    used on a reduced model), a ``root_joint`` entry sets a free-flyer root's pose."""
    scalar = {
        k: v
        for k, v in values.items()
        if model.existJointName(k) and model.joints[model.getJointId(k)].nq in (0, 1, 2)
    }
    apply_positions(model, q, scalar)
    if model.njoints > 1 and model.joints[1].shortname() == "JointModelFreeFlyer":
        pose = srdf_root_pose(srdf, name, model.names[1])
        if pose is not None:
            q[:7] = pose


def check_home(model: pin.Model, q: np.ndarray, source: Path | str) -> None:
    """Every single-coordinate joint of ``q`` inside its position range.

    Raises:
        ValueError: A value outside its joint's range (``source`` and the joint named).
    """
    for i in range(1, model.njoints):
        joint = model.joints[i]
        if joint.nq != 1:
            continue
        value = float(q[joint.idx_q])
        lower = float(model.lowerPositionLimit[joint.idx_q])
        upper = float(model.upperPositionLimit[joint.idx_q])
        if not (lower - RANGE_TOLERANCE <= value <= upper + RANGE_TOLERANCE):
            raise ConfigurationError(
                f"{source}: home value {value!r} of joint {model.names[i]!r} is outside its "
                f"range [{lower:g}, {upper:g}]"
            )


def set_home(
    model: pin.Model,
    q0: np.ndarray,
    requested: Mapping[str, float] | str | None,
    srdf: Path | None,
    source: str,
    inferred: dict[str, str],
) -> None:
    """Write the home configuration into ``q0``.

    Every named state of the SRDF must parse, and its ``home`` state (if any) must lie in the
    joint ranges. Then ``requested`` decides: joint values, the name of an SRDF state, or
    None to infer the home (:func:`~pinkctl.core.robot.inference.infer_home`; where it came
    from is recorded in ``inferred["home"]``).

    Raises:
        ValueError: An SRDF state that does not parse or lies outside the ranges, a state name
            without an SRDF or missing from it, or values outside the ranges.
    """
    if srdf is not None:
        srdf_home = dict(srdf_group_states(srdf)).get("home")  # every state must parse
        if srdf_home:
            probe = pin.neutral(model)
            apply_srdf_state(model, probe, srdf, "home", srdf_home)
            check_home(model, probe, f"{srdf} (group_state 'home')")
    if isinstance(requested, str):
        if srdf is None:
            raise ConfigurationError(
                f"{source}: home {requested!r} names an SRDF state, but no srdf"
            )
        values = srdf_state(srdf, requested)
        if values is None:
            raise ConfigurationError(f"{source}: the SRDF has no group_state {requested!r}")
        apply_srdf_state(model, q0, srdf, requested, values)
        check_home(model, q0, source)
        return
    if requested is not None:
        apply_positions(model, q0, requested)
        check_home(model, q0, source)
        return
    values, origin = infer_home(model, srdf)
    apply_positions(model, q0, values)
    check_home(model, q0, origin)
    inferred["home"] = origin
