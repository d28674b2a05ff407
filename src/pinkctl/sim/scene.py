"""The MuJoCo scene of a robot: its description compiled with MjSpec, plus servos and a world.

:func:`build_spec` starts from the very description Pinocchio was built from
(``robot.description``: the normalised URDF text, or the MJCF file) and adds:

- a site for every tool frame (a frame that is a link gets a site at the link's origin; an
  operational frame at its placement on its link; an MJCF site is used as it is);
- contact exclusions: the SRDF's ``disable_collisions`` pairs; every link and its parent
  (MuJoCo filters those itself, except below a body welded to the world); and the link pairs
  still in contact at home ("touching by construction", as MoveIt's setup assistant finds
  them; a warning lists them, except for a catalog robot at its configured home, whose
  exclusions are part of its configuration);
- gravity and joint-friction compensation (real arms compensate both in firmware; the
  description's joint damping stays, and the servo's velocity feed-forward offsets it),
  one position servo on each controlled and gripper joint (an MJCF's own position actuator
  where it has one, else pinkctl's, with ``robot.actuator_kp``/``actuator_kv``, inferred
  from the joints' inertia when not configured; three on a ball joint), servos that hold
  every other joint of the robot where it was reset (:mod:`pinkctl.sim.scene_servos`), and
  armature;
- a free joint on the root link for a floating-base robot;
- a floor (at ``robot.floor``, or just below the robot's lowest point at home, never above
  z = 0: :func:`pinkctl.world.floor_height`, which the world's floor shares), lights, an
  overview camera and a mocap target marker;
- a :class:`~pinkctl.world.World`'s obstacles (:mod:`pinkctl.sim.world_geoms`).

MuJoCo's compiler bounds (``boundmass``, ``boundinertia``) keep a massless link from being
rejected; the description already repaired non-physical inertia tensors.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import mujoco
import numpy as np
import pinocchio as pin

from ..core.poses import matrix_to_quaternion
from ..errors import InputError, PinkctlWarning
from ..world.floor import add_free_joint, floor_height, home_qpos, robot_spec
from .scene_servos import HOLD_PREFIX, add_servos
from .world_geoms import add_obstacles

if TYPE_CHECKING:
    from ..core.robot import PinkRobot
    from ..world import World

__all__ = ["HOLD_PREFIX", "TARGET_BODY", "build_spec"]

TARGET_BODY = "pinkctl_target"
#: Lower bounds MuJoCo applies to every body [kg], [kg m^2].
BOUND_MASS = 1e-6
BOUND_INERTIA = 1e-10


#: MuJoCo's no-slip iterations for a standing robot: its soft friction lets a loaded foot creep
#: below the friction limit (talos's feet slid 22 mm on a 3 s reach, 17 mm with them).
NOSLIP_ITERATIONS = 10
#: Time constant of the floor's contacts under a standing robot, in physics steps (MuJoCo's
#: ``solref[0]``; 2 is the smallest MuJoCo keeps stable). MuJoCo's default, 20 ms, let TALOS's
#: loaded feet sink 0.6 mm, rock and creep: over ten reaches they turned 15 mrad and slid 4 mm,
#: and the hand, carried by the pelvis, missed by 11 mm while the joints tracked their
#: commands within 2 mrad. The impedance (``solimp``) stays MuJoCo's: a near-hard one (0.99+)
#: let g1's feet slip 6 mm.
FLOOR_TIME_CONSTANT_STEPS = 2.0


def as_name_list(names: Sequence[str] | None, default: list[str], what: str) -> list[str]:
    """``names`` as a list (``default`` when None); InputError naming ``what`` otherwise."""
    if names is None:
        return list(default)
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise InputError(f"{what} must be a sequence of names, got {names!r}")
    return list(names)


def srdf_disabled_pairs(srdf_path: Path) -> list[tuple[str, str]]:
    """Link pairs of the SRDF's ``disable_collisions`` entries."""
    root = ET.parse(srdf_path).getroot()
    return [(e.get("link1", ""), e.get("link2", "")) for e in root.iter("disable_collisions")]


def _overview_camera(robot: PinkRobot) -> tuple[np.ndarray, np.ndarray]:
    """Camera position and ``xyaxes`` looking at the robot, scaled to its size at home."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    points = np.array([f.translation for f in data.oMf])
    center = points.mean(axis=0)
    reach = max(float(np.max(np.linalg.norm(points - center, axis=1))), 0.1)
    look_at = center + np.array([0.25 * reach, 0.0, 0.0])
    eye = look_at + reach * np.array([1.9, -1.7, 1.0])
    forward = look_at - eye
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    return eye, np.concatenate([right, up])


def _add_sites(spec: mujoco.MjSpec, robot: PinkRobot, frames: Sequence[str]) -> None:
    bodies = {b.name: b for b in spec.bodies}
    sites = {s.name for s in spec.sites}
    model = robot.model
    for frame in frames:
        if frame in sites:
            continue
        if frame in bodies:
            bodies[frame].add_site(name=frame, size=[0.005, 0.0, 0.0], rgba=[1, 0.2, 0.2, 1])
            continue
        if not model.existFrame(frame):
            raise InputError(f"site frame {frame!r} is not a frame of the robot")
        # an operational frame: a site at its placement relative to the nearest link above it
        index = model.getFrameId(frame)
        placement = pin.SE3.Identity()
        while model.frames[index].name not in bodies and index != 0:
            placement = model.frames[index].placement * placement
            index = model.frames[index].parentFrame
        parent = bodies.get(model.frames[index].name)
        if parent is None:
            raise InputError(f"site frame {frame!r} hangs on no link of the MuJoCo model")
        parent.add_site(
            name=frame,
            pos=placement.translation.tolist(),
            quat=matrix_to_quaternion(placement.rotation).tolist(),
            size=[0.005, 0.0, 0.0],
            rgba=[1, 0.2, 0.2, 1],
        )


def _exclude_parents(spec: mujoco.MjSpec) -> None:
    for body in spec.bodies:
        parent = body.parent
        if body.name and parent is not None and parent.name and parent.name != "world":
            spec.add_exclude(bodyname1=parent.name, bodyname2=body.name)


def _contacts_at_home(model: mujoco.MjModel, robot: PinkRobot) -> list[tuple[str, str]]:
    data = mujoco.MjData(model)
    data.qpos[:] = home_qpos(model, robot)
    mujoco.mj_forward(model, data)
    pairs = set()
    for k in range(data.ncon):
        contact = data.contact[k]
        b1 = model.body(model.geom_bodyid[contact.geom1]).name
        b2 = model.body(model.geom_bodyid[contact.geom2]).name
        if b1 and b2 and b1 != b2:
            pairs.add(tuple(sorted((b1, b2))))
    return sorted(pairs)  # type: ignore[arg-type]


def _catalog_home(robot: PinkRobot) -> bool:
    """Whether ``robot`` is a catalog robot at the home its configuration gives (the catalog's
    tests hold what touches there: nothing a user can act on)."""
    source = robot.source
    return (
        source is not None and source.catalog is not None and source.arguments.get("home") is None
    )


def _add_world(spec: mujoco.MjSpec, robot: PinkRobot, floor_z: float | None) -> None:
    """Floor, lights, camera; the floor under a standing robot is stiff (:func:`_harden_floor`)."""
    world = spec.worldbody
    if floor_z is not None:
        spec.add_texture(
            name="grid",
            type=mujoco.mjtTexture.mjTEXTURE_2D,
            builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
            rgb1=[0.85, 0.87, 0.9],
            rgb2=[0.7, 0.72, 0.76],
            width=256,
            height=256,
        )
        material = spec.add_material(name="grid", texrepeat=[8, 8], reflectance=0.05)
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "grid"
        floor = world.add_geom(
            name="floor",
            type=mujoco.mjtGeom.mjGEOM_PLANE,
            size=[3.0, 3.0, 0.05],
            pos=[0.0, 0.0, floor_z],
            material="grid",
        )
        if robot.floating_base:
            _harden_floor(floor, spec.option.timestep)
    world.add_light(pos=[0.0, -1.0, 3.0], dir=[0.0, 0.3, -1.0], diffuse=[0.8, 0.8, 0.8])
    world.add_light(pos=[2.0, 2.0, 3.0], dir=[-0.5, -0.5, -1.0], diffuse=[0.4, 0.4, 0.4])
    eye, xyaxes = _overview_camera(robot)
    world.add_camera(name="overview", pos=eye.tolist(), xyaxes=xyaxes.tolist())


def _harden_floor(floor: mujoco.MjsGeom, timestep: float) -> None:
    """Make ``floor`` as stiff as the step [s] allows (:data:`FLOOR_TIME_CONSTANT_STEPS`), and
    its contact parameters the ones of every contact with it (``priority``: not averaged with
    the feet's)."""
    floor.solref = [FLOOR_TIME_CONSTANT_STEPS * timestep, 1.0]
    floor.priority = 1


def _add_target_marker(spec: mujoco.MjSpec) -> None:
    target = spec.worldbody.add_body(name=TARGET_BODY, mocap=True, pos=[0.0, 0.0, -1.0])
    visual = {"contype": 0, "conaffinity": 0, "group": 2}  # drawn, never in contact
    sphere, capsule = mujoco.mjtGeom.mjGEOM_SPHERE, mujoco.mjtGeom.mjGEOM_CAPSULE
    target.add_geom(type=sphere, size=[0.012, 0, 0], rgba=[0.1, 0.8, 0.2, 0.6], **visual)
    for axis, rgba in ((0, [1, 0, 0, 0.8]), (1, [0, 1, 0, 0.8]), (2, [0, 0, 1, 0.8])):
        fromto = np.zeros(6)
        fromto[3 + axis] = 0.05
        target.add_geom(
            type=capsule, size=[0.003, 0, 0], fromto=fromto.tolist(), rgba=rgba, **visual
        )


def _set_options(spec: mujoco.MjSpec, robot: PinkRobot, timestep: float) -> None:
    """Step [s], integrator, compiler bounds, name, friction cones and no-slip passes of the
    scene."""
    spec.option.timestep = timestep
    # implicit in the joint damping and servo kv: stable for stiff servos at 2 ms
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.compiler.boundmass = BOUND_MASS
    spec.compiler.boundinertia = BOUND_INERTIA
    spec.modelname = robot.name or "robot"
    if robot.floating_base:  # feet that stand: elliptic friction cones, no-slip passes
        spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
        spec.option.noslip_iterations = NOSLIP_ITERATIONS


def _exclude_srdf_pairs(spec: mujoco.MjSpec, robot: PinkRobot) -> None:
    """Exclude the contacts of the SRDF's ``disable_collisions`` pairs the scene has."""
    if robot.srdf_path is None:
        return
    names = {b.name for b in spec.bodies}
    for link1, link2 in srdf_disabled_pairs(robot.srdf_path):
        if link1 in names and link2 in names:
            spec.add_exclude(bodyname1=link1, bodyname2=link2)


def _stiffen_mimics(spec: mujoco.MjSpec, timestep: float) -> None:
    """URDF mimic joints arrive as joint equalities; MuJoCo's default softness lets a
    squeezed finger lag its master by centimetres, so make them as stiff as the step
    [s] allows."""
    for equality in spec.equalities:
        if equality.type == mujoco.mjtEq.mjEQ_JOINT:
            equality.solref = [2.0 * timestep, 1.0]


def _compensate_gravity(bodies: list[mujoco.MjsBody]) -> None:
    """Compensate gravity on ``bodies``, as a fixed-base arm's firmware does."""
    for body in bodies:
        body.gravcomp = 1.0


def _set_drives(spec: mujoco.MjSpec, robot: PinkRobot) -> None:
    """The robot's armature [kg m^2] on its joints, and no friction on its servoed joints:
    a robot's drives compensate their joint friction as they compensate gravity (the
    description's URDF ``<dynamics friction>`` is left out)."""
    joints = {j.name: j for j in spec.joints}
    for name, value in robot.armature.items():
        if name in joints:
            joints[name].armature = value
    for name in robot.joint_names:
        if name in joints:
            joints[name].frictionloss = 0.0


def _exclude_touching(spec: mujoco.MjSpec, robot: PinkRobot, probe: mujoco.MjModel) -> None:
    """Exclude the link pairs in contact at home in ``probe`` (the scene compiled so far),
    with a warning listing them unless the robot is a catalog robot at its home."""
    touching = _contacts_at_home(probe, robot)
    for body1, body2 in touching:
        spec.add_exclude(bodyname1=body1, bodyname2=body2)
    if touching and not _catalog_home(robot):
        warnings.warn(
            f"{robot.name}: links in contact at home, contacts between them excluded: {touching}",
            PinkctlWarning,
            stacklevel=4,
        )


def build_spec(
    robot: PinkRobot,
    *,
    timestep: float,
    gravity_compensation: bool,
    floor: bool,
    target_marker: bool,
    sites: Sequence[str],
    actuated: Sequence[str],
    kp: float | None,
    kv: float | None,
    spec_callback: Callable[[mujoco.MjSpec], None] | None,
    world: World | None = None,
) -> mujoco.MjSpec:
    """The MjSpec of ``robot``'s scene (see the module docstring); compiled by the caller.

    Raises:
        ValueError: Unknown site frames or actuated joints.
    """
    spec = robot_spec(robot)
    _set_options(spec, robot, timestep)
    robot_bodies = [b for b in spec.bodies if b.name and b.name != "world"]
    add_free_joint(spec, robot)
    _add_sites(spec, robot, sites)
    _exclude_parents(spec)
    _exclude_srdf_pairs(spec, robot)
    _stiffen_mimics(spec, timestep)
    if gravity_compensation and not robot.floating_base:  # else pinkctl.sim.stance
        _compensate_gravity(robot_bodies)
    _set_drives(spec, robot)
    add_servos(spec, robot, actuated, kp, kv)
    probe = spec.compile()
    _exclude_touching(spec, robot, probe)
    # the floor's height: one function for the simulation and the world (pinkctl.world.floor)
    _add_world(spec, robot, floor_height(robot, probe) if floor else None)
    if world is not None:
        add_obstacles(spec, world)
    if target_marker:
        _add_target_marker(spec)
    spec.visual.global_.offwidth = 1280
    spec.visual.global_.offheight = 960
    if spec_callback is not None:
        spec_callback(spec)
    return spec
