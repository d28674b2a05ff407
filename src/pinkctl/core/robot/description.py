"""One robot description, normalised once, for Pinocchio and MuJoCo alike.

:func:`read_description` reads a URDF or an MJCF file and returns a :class:`RobotDescription`
from which both engines are built, so that they always see the same robot:

- URDF: every mesh URI is resolved (:func:`~pinkctl.core.robot.meshes.resolve_mesh_uri`) and
  written back as an absolute path; MuJoCo's copy points at MuJoCo-readable files
  (:func:`~pinkctl.core.robot.meshes.mujoco_readable`). Inertia tensors that are not physical
  (a non-positive principal moment, or one larger than the sum of the two others, which MuJoCo
  rejects) are repaired in the shared text, with one warning per description naming every
  repaired link, except those the caller expects (``expected_repairs``: a configuration's
  ``inertia_repairs``, which the catalog's own configurations list). A revolute or
  prismatic joint whose range is a single value (lower = upper) is **locked**: it becomes a
  fixed joint at that value, for the IK, the controller, the motion limits and MuJoCo alike
  (the one rule for zero-range limits). ``base_placement`` adds a fixed joint from a ``world``
  link to the root link, which both engines read as the robot's placement in the world.
- MJCF: Pinocchio's MJCF parser reads the file (sites become operational frames), MuJoCo reads
  the same file.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from ...errors import ConfigurationError, DescriptionNotFoundError, PinkctlWarning
from .meshes import mujoco_readable, resolve_mesh_uri
from .placement import place_base, place_mjcf_root

__all__ = ["RobotDescription", "read_description"]

#: Smallest principal moment of inertia kept by the repair [kg m^2].
MIN_INERTIA = 1e-8
#: The URDF inertia attributes, in the order of the tensor's upper triangle, row by row.
_INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


@dataclass(frozen=True)
class RobotDescription:
    """A robot description ready for both engines.

    Attributes:
        path: The file read.
        kind: ``"urdf"`` or ``"mjcf"``.
        xml: URDF text with absolute mesh paths and repaired inertias (URDF only; "" for
            MJCF, which both engines read from ``path``).
        mujoco_xml: The same URDF text with MuJoCo-readable meshes and MuJoCo's compiler
            options (URDF only).
        package_dirs: Folders used to resolve ``package://`` URIs.
        locked: Zero-range joints locked at their value, by name.
        repairs: What was changed in the description, one line each.
    """

    path: Path
    kind: str
    xml: str = ""
    mujoco_xml: str = ""
    package_dirs: tuple[Path, ...] = ()
    locked: dict[str, float] = field(default_factory=dict)
    repairs: tuple[str, ...] = ()

    def build_model(self, *, floating_base: bool = False) -> pin.Model:
        """The Pinocchio model (mimic joints as mimic joints; free-flyer root on request)."""
        if self.kind == "mjcf":
            model = pin.buildModelFromMJCF(str(self.path))
            if not floating_base:
                place_mjcf_root(model, self.path)
            elif model.njoints < 2 or model.joints[1].shortname() != "JointModelFreeFlyer":
                # pin 4.1 takes the root joint with its name (and returns the model with
                # the file's constraints); a file whose root already has a free joint keeps it
                model = pin.buildModelAndLegacyConstraintsFromMJCF(
                    str(self.path), pin.JointModelFreeFlyer(), "root_joint"
                )[0]
            return model
        if floating_base:
            return pin.buildModelFromXML(self.xml, pin.JointModelFreeFlyer(), mimic=True)
        return pin.buildModelFromXML(self.xml, mimic=True)

    def ball_ranges(self) -> dict[str, float]:
        """The range of each limited ball joint of an MJCF: its largest rotation angle [rad]
        (MuJoCo's reading of ``range="0 θmax"``), by name; empty for a URDF."""
        if self.kind != "mjcf":
            return {}
        import mujoco  # noqa: PLC0415 (MuJoCo's compiler resolves units and autolimits)

        model = mujoco.MjModel.from_xml_path(str(self.path))
        ball = int(mujoco.mjtJoint.mjJNT_BALL)
        return {
            model.joint(j).name: float(model.jnt_range[j, 1])
            for j in range(model.njnt)
            if int(model.jnt_type[j]) == ball and model.jnt_limited[j] and model.joint(j).name
        }

    def place_free_joint(self, model: pin.Model, q: np.ndarray) -> bool:
        """Put an MJCF's own root free joint in ``q`` at the pose the file gives its body
        (MuJoCo's ``qpos0``; Pinocchio's parser leaves the joint at the origin). Returns
        whether ``q`` changed (False for a URDF or a root without a free joint of the file)."""
        if self.kind != "mjcf" or model.njoints < 2:
            return False
        import mujoco  # noqa: PLC0415

        from ..mujoco_qpos import from_mujoco_qpos  # noqa: PLC0415

        root = model.names[1]
        compiled = mujoco.MjModel.from_xml_path(str(self.path))
        joint = mujoco.mj_name2id(compiled, mujoco.mjtObj.mjOBJ_JOINT, root)
        if joint < 0 or int(compiled.jnt_type[joint]) != int(mujoco.mjtJoint.mjJNT_FREE):
            return False
        others = {name: None for name in model.names[2:]}
        placed = from_mujoco_qpos(model, compiled, compiled.qpos0, q=q, joint_map=others)
        changed = not np.allclose(placed, q)
        q[:] = placed
        return changed

    def build_collision_model(self, model: pin.Model) -> pin.GeometryModel:
        """The collision geometry of ``model`` (all pairs, before any SRDF filtering)."""
        if self.kind == "mjcf":
            geometry = pin.buildGeomFromMJCF(model, str(self.path), pin.GeometryType.COLLISION)
        else:
            geometry = pin.buildGeomFromUrdfString(
                model,
                self.xml,
                pin.GeometryType.COLLISION,
                package_dirs=[str(p) for p in self.package_dirs],
            )
        geometry.addAllCollisionPairs()
        return geometry


def _floats(text: str | None, count: int, default: float) -> list[float]:
    values = (text or "").split()
    if not values:
        return [default] * count
    return [float(v) for v in values]


def _inertia_tensor(link: ET.Element) -> np.ndarray:
    """The link's inertia tensor [kg m^2] (values checked: numbers, finite)."""
    inertia = link.find("inertial/inertia")
    assert inertia is not None
    try:
        xx, xy, xz, yy, yz, zz = (float(inertia.get(k, "0")) for k in _INERTIA_KEYS)
    except ValueError as exc:
        raise ConfigurationError(
            f"link {link.get('name')!r}: inertia values must be numbers"
        ) from exc
    tensor = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    if not np.isfinite(tensor).all():
        raise ConfigurationError(f"link {link.get('name')!r}: inertia values must be finite")
    return tensor


def _physical(moments: np.ndarray) -> np.ndarray:
    """Principal moments made physical: at least :data:`MIN_INERTIA`, and the triangle
    inequality A + B >= C (with a relative margin)."""
    fixed = np.maximum(moments, MIN_INERTIA)
    for _ in range(3):
        order = np.argsort(fixed)
        small, middle, large = fixed[order]
        if small + middle < large * (1.0 + 1e-9):
            fixed[order[0]] = max(small, large * (1.0 + 1e-6) - middle)
    return fixed


def _repair_inertia(link: ET.Element) -> str | None:
    """Make the link's inertia tensor physical (positive moments, triangle inequality).

    Returns:
        The principal moments before and after the repair [kg m^2], or None (no repair).
    """
    inertia = link.find("inertial/inertia")
    if inertia is None:
        return None
    tensor = _inertia_tensor(link)
    mass_element = link.find("inertial/mass")
    mass = float(mass_element.get("value", "0")) if mass_element is not None else 0.0
    if mass <= 0.0 and not tensor.any():
        return None  # a massless frame link: nothing to simulate
    moments, axes = np.linalg.eigh(tensor)
    fixed = _physical(moments)
    if np.allclose(fixed, moments, rtol=1e-12, atol=0.0):
        return None
    repaired = axes @ np.diag(fixed) @ axes.T
    for key, value in zip(_INERTIA_KEYS, repaired[np.triu_indices(3)]):
        inertia.set(key, repr(float(value)))
    return f"{np.round(moments, 9).tolist()} -> {np.round(fixed, 9).tolist()}"


def _zero_range(joint: ET.Element) -> float | None:
    """The value of a revolute/prismatic joint whose range is one value (lower = upper)."""
    limit = joint.find("limit")
    if joint.get("type") not in ("revolute", "prismatic") or limit is None:
        return None
    if limit.get("lower") is None or limit.get("upper") is None:
        return None
    lower, upper = float(limit.get("lower", "0")), float(limit.get("upper", "0"))
    return lower if lower == upper else None


def _lock_zero_range(joint: ET.Element, locked: dict[str, float]) -> None:
    """Turn a revolute/prismatic joint with lower = upper into a fixed joint at that value."""
    value = _zero_range(joint)
    if value is None:
        return
    origin = joint.find("origin")
    if origin is None:
        origin = ET.SubElement(joint, "origin")
    axis_element = joint.find("axis")
    if axis_element is None:
        axis = np.array([1.0, 0.0, 0.0])
    else:
        axis = np.array(_floats(axis_element.get("xyz"), 3, 0.0))
    axis = axis / max(float(np.linalg.norm(axis)), 1e-12)
    placement = pin.SE3(
        pin.rpy.rpyToMatrix(*_floats(origin.get("rpy"), 3, 0.0)),
        np.array(_floats(origin.get("xyz"), 3, 0.0)),
    )
    if joint.get("type") == "revolute":
        motion = pin.SE3(pin.exp3(axis * value), np.zeros(3))
    else:
        motion = pin.SE3(np.eye(3), axis * value)
    fixed = placement * motion
    origin.set("xyz", " ".join(repr(float(v)) for v in fixed.translation))
    origin.set("rpy", " ".join(repr(float(v)) for v in pin.rpy.matrixToRpy(fixed.rotation)))
    joint.set("type", "fixed")
    for tag in ("axis", "limit", "dynamics", "mimic", "safety_controller", "calibration"):
        for child in joint.findall(tag):
            joint.remove(child)
    locked[joint.get("name", "")] = value


def read_description(
    path: Path | str,
    *,
    package_dirs: Sequence[str | Path] = (),
    base_placement: pin.SE3 | None = None,
    expected_repairs: Collection[str] = (),
    repairs_setting: str = "expected_repairs",
) -> RobotDescription:
    """Read and normalise a URDF (``.urdf``) or MJCF (``.xml``) file (module docstring).

    Args:
        path: The description file.
        package_dirs: Folders for ``package://`` mesh URIs.
        base_placement: Where the root link stands in the world (URDF only).
        expected_repairs: Links whose inertia the caller knows to be unphysical: their
            repair is recorded in ``repairs`` without a warning.
        repairs_setting: The name of ``expected_repairs`` in error messages.

    Raises:
        FileNotFoundError: If the file does not exist; a
            :class:`~pinkctl.core.robot.meshes.MeshNotFoundError` for a mesh no folder holds.
        ValueError: If the file cannot be parsed (the message names it), or
            ``expected_repairs`` names a link the description does not have.
    """
    source = Path(path)
    root = _parse(source)
    dirs = tuple(Path(p) for p in package_dirs)
    if root.tag == "mujoco":
        if base_placement is not None:
            raise ConfigurationError(
                "base_placement applies to URDF descriptions; move the MJCF body"
            )
        return RobotDescription(path=source, kind="mjcf", package_dirs=dirs)
    repairs = _repair_inertias(root, source, expected_repairs, repairs_setting)
    locked: dict[str, float] = {}
    for joint in root.findall("joint"):
        _lock_zero_range(joint, locked)
    if locked:
        note = f"zero-range joints locked (fixed at their value): {locked}"
        repairs.append(note)
        warnings.warn(note, PinkctlWarning, stacklevel=2)
    if base_placement is not None:
        place_base(root, base_placement)
    for extra in root.findall("mujoco"):
        root.remove(extra)
    xml, mujoco_xml = _with_meshes(root, source, dirs)
    return RobotDescription(
        path=source,
        kind="urdf",
        xml=xml,
        mujoco_xml=mujoco_xml,
        package_dirs=dirs,
        locked=locked,
        repairs=tuple(repairs),
    )


def _parse(source: Path) -> ET.Element:
    """The root element of a URDF (``<robot>``) or MJCF (``<mujoco>``) file."""
    if not source.is_file():
        kind = "MJCF" if source.suffix.lower() == ".xml" else "URDF"
        raise DescriptionNotFoundError(f"{kind} file not found: {source}")
    try:
        root = ET.parse(source).getroot()
    except ET.ParseError as exc:
        raise ConfigurationError(f"cannot parse {source}: {exc}") from exc
    if root.tag not in ("mujoco", "robot"):
        raise ConfigurationError(
            f"cannot parse {source}: root element <{root.tag}>, expected <robot>"
        )
    return root


def _repair_inertias(
    root: ET.Element, source: Path, expected: Collection[str], setting: str
) -> list[str]:
    """Repair every link's inertia (:func:`_repair_inertia`), one line per repaired link; one
    warning names the repairs the caller did not expect."""
    links = root.findall("link")
    unknown = sorted(set(expected) - {link.get("name", "") for link in links})
    if unknown:
        raise ConfigurationError(f"{setting}: {unknown} are not links of {source}")
    repairs: list[str] = []
    surprises = []
    for link in links:
        repair = _repair_inertia(link)
        if repair is None:
            continue
        name = link.get("name", "")
        repairs.append(f"inertia of link {name!r} repaired: principal moments {repair} kg m^2")
        if name not in expected:
            surprises.append(f"{name!r} {repair}")
    if surprises:
        # one warning per description, whatever the number of links
        warnings.warn(
            f"{source.name}: inertia of {len(surprises)} link(s) repaired (not physical, "
            f"MuJoCo rejects it), principal moments [kg m^2]: {'; '.join(surprises)}. Fix the "
            "description, or list the links in the configuration's inertia_repairs",
            PinkctlWarning,
            stacklevel=4,
        )
    return repairs


def _with_meshes(root: ET.Element, source: Path, dirs: tuple[Path, ...]) -> tuple[str, str]:
    """The URDF text with absolute mesh paths, and MuJoCo's copy (MuJoCo-readable meshes,
    its compiler options)."""
    meshes = list(root.iter("mesh"))
    resolved = [
        resolve_mesh_uri(m.get("filename", ""), description=source, package_dirs=dirs)
        for m in meshes
    ]
    for mesh, file in zip(meshes, resolved):
        mesh.set("filename", str(file))
    xml = ET.tostring(root, encoding="unicode")
    for mesh, file in zip(meshes, resolved):
        mesh.set("filename", str(mujoco_readable(file)))
    options = ET.SubElement(ET.SubElement(root, "mujoco"), "compiler")
    options.attrib.update(
        {
            "strippath": "false",
            "discardvisual": "false",
            "fusestatic": "false",
            "balanceinertia": "true",
        }
    )
    return xml, ET.tostring(root, encoding="unicode")
