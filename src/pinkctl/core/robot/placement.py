"""Where a robot's root stands in the world, for both engines.

- URDF: :func:`place_base` adds a fixed joint from a ``world`` link to the root link (what
  a configuration's ``[base]`` sets).
- MJCF: :func:`place_mjcf_root` moves Pinocchio's model so that the root body stands where
  MuJoCo puts it (Pinocchio's MJCF parser leaves it at the origin, ready for a free-flyer).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pinocchio as pin

from ...errors import ConfigurationError
from ..poses import quaternion_to_matrix

__all__ = ["place_base", "place_mjcf_root"]


def place_mjcf_root(model: pin.Model, path: Path) -> None:
    """Put the root body where MuJoCo puts it (Pinocchio's MJCF parser leaves the first body
    at the origin, ready for a free-flyer): every joint and frame hanging from the universe is
    moved by the root body's placement, in place."""
    offset = _mjcf_root_offset(model, path)
    if offset is None or offset.isIdentity(1e-15):
        return
    for j in range(1, model.njoints):
        if model.parents[j] == 0:
            model.jointPlacements[j] = offset * model.jointPlacements[j]
    for index in range(1, model.nframes):
        frame = model.frames[index]
        if frame.parentJoint == 0:
            frame.placement = offset * frame.placement
            model.frames[index] = frame


def _mjcf_root_offset(model: pin.Model, path: Path) -> pin.SE3 | None:
    """Where MuJoCo puts the root body, relative to where Pinocchio put it (None without a
    root body)."""
    import mujoco  # noqa: PLC0415

    root = next(
        (f for f in list(model.frames)[1:] if f.parentJoint == 0 and f.type == pin.FrameType.BODY),
        None,
    )
    if root is None:
        return None
    compiled = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(compiled)
    mujoco.mj_kinematics(compiled, data)
    body = mujoco.mj_name2id(compiled, mujoco.mjtObj.mjOBJ_BODY, root.name)
    if body < 0:
        return None
    offset = pin.SE3(quaternion_to_matrix(data.xquat[body]), data.xpos[body].copy())
    return offset * root.placement.inverse()


def place_base(root: ET.Element, placement: pin.SE3) -> None:
    """Add ``world`` -> root link as a fixed joint at ``placement``."""
    links = {link.get("name") for link in root.findall("link")}
    children = {child.get("link") for child in root.findall("joint/child")}
    roots = sorted(name for name in links - children if name)
    if "world" in roots:
        raise ConfigurationError(
            "the description already has a 'world' link; base placement is set there"
        )
    if len(roots) != 1:
        raise ConfigurationError(f"a URDF must have exactly one root link, found {roots}")
    world = ET.Element("link", {"name": "world"})
    joint = ET.Element("joint", {"name": "world_to_" + roots[0], "type": "fixed"})
    ET.SubElement(joint, "parent", {"link": "world"})
    ET.SubElement(joint, "child", {"link": roots[0]})
    rpy = pin.rpy.matrixToRpy(placement.rotation)
    ET.SubElement(
        joint,
        "origin",
        {
            "xyz": " ".join(repr(float(v)) for v in placement.translation),
            "rpy": " ".join(repr(float(v)) for v in rpy),
        },
    )
    root.insert(0, joint)
    root.insert(0, world)
