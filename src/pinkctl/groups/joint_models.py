"""Pinocchio joint models seen as the seed's joint types, and revolute joints made helical.

- :func:`joint_kind`: the seed's type of a joint model: ``"revolute"`` (revolute about any
  axis, continuous, or helical: a revolute joint with a screw lead), ``"prismatic"`` or
  ``"spherical"``; joints the seed does not have are named after their Pinocchio model
  (``"free"``, ``"planar"``, ``"mimic"``, ...).
- :func:`helical_model`: the helical joint that advances ``lead`` metres per turn about the
  axis of a one-coordinate revolute joint (Pinocchio's pitch is ``lead / 2π`` m/rad), with the
  indices of the joint it replaces (the scene rebuilds its model from the robot's at every
  structural edit, so a lead of 0 gives the robot's own joint back exactly).
"""

from __future__ import annotations

import math
from typing import Any

import pinocchio as pin

__all__ = ["JOINT_TYPES", "helical_model", "joint_kind", "screwable"]

#: The seed's joint types (``ik_jointtype_revolute``, ``_prismatic``, ``_spherical``).
JOINT_TYPES = ("revolute", "prismatic", "spherical")

_HELICAL = {"JointModelRX": "HX", "JointModelRY": "HY", "JointModelRZ": "HZ"}
_OTHER = {
    "JointModelFreeFlyer": "free",
    "JointModelPlanar": "planar",
    "JointModelMimic": "mimic",
    "JointModelSpherical": "spherical",
    "JointModelSphericalZYX": "spherical",
    "JointModelTranslation": "translation",
}


def joint_kind(jmodel: Any) -> str:
    """The seed's type of a Pinocchio joint model (module docstring)."""
    short = str(jmodel.shortname())
    if short in _OTHER:
        return _OTHER[short]
    if short.startswith(("JointModelR", "JointModelH")):  # R*, RU*, revolute/helical unaligned
        return "revolute"
    if short.startswith("JointModelP"):  # PX, PY, PZ, prismatic unaligned
        return "prismatic"
    return short.removeprefix("JointModel").lower()


def screwable(jmodel: Any) -> bool:
    """Whether a screw lead means something for this joint: a one-coordinate revolute joint
    (about x, y, z or any axis; not a continuous one, whose two coordinates are a cosine and
    a sine)."""
    short = str(jmodel.shortname())
    return short in _HELICAL or short == "JointModelRevoluteUnaligned"


def helical_model(jmodel: Any, lead: float) -> Any:
    """The helical joint of lead ``lead`` [m/turn] about the axis of the revolute ``jmodel``,
    placed at the same indices in the model."""
    pitch = lead / (2.0 * math.pi)
    short = str(jmodel.shortname())
    if short in _HELICAL:
        helical = getattr(pin, f"JointModel{_HELICAL[short]}")(pitch)
    else:
        helical = pin.JointModelHelicalUnaligned(jmodel.axis, pitch)
    if hasattr(jmodel, "idx_vExtended"):  # Pinocchio >= 3.4 (mimic joints)
        helical.setIndexes(jmodel.id, jmodel.idx_q, jmodel.idx_v, jmodel.idx_vExtended)
    else:  # pragma: no cover - older Pinocchio
        helical.setIndexes(jmodel.id, jmodel.idx_q, jmodel.idx_v)
    return helical
