"""The SO-101 pick scene: table, free block, jaw pads, grasp point and the front camera.

Everything here is world frame, metres, with the robot's base at the origin on the table top
(z = 0). The gripper's own geometry is pinkctl's primitive model (``robot_configurations/
so101``): the fixed jaw is part of ``gripper_link`` and closes along that link's x axis
against the moving jaw (joint ``gripper``, closed at -0.17 rad, open at 1.75 rad).

* Table: a 0.8 m x 0.9 m box whose top is the plane z = 0 (the robot stands on it), a floor
  0.75 m below. Both are the obstacles of :attr:`SO101PickScene.world` (a
  :class:`~pinkctl.world.World` in the robot's base frame, for a controller's or an IK's
  ``world=``), added to the simulation by :func:`~pinkctl.sim.world_geoms.add_obstacles`.
* Block: a cube of edge 2 to 3 cm (uniform at each reset), 20 g, random colour (see
  :class:`~pinkctl.envs.scene.FreeBlock`), friction 1.2; its yaw faces the robot's base.
* Jaw pads: two boxes on the inner faces of the jaw tips, 24 mm tall and 18 mm wide, whose
  faces are parallel and 25 mm apart when the jaw is at :data:`PAD_PARALLEL_ANGLE`; friction
  1.5. Visual only unless :func:`set_jaw_pads` turns their collisions on (``jaw_pads``): the
  primitive jaws (a sphere-capped cylinder each) hold a block at two points, the pads by two
  faces.
* Goal: a visual green disc, the mocap body ``"goal"``, parked below the floor until a
  pick-and-place reset moves it.
* Jaw servo: torque limited to :data:`GRIPPER_TORQUE`, ``ctrlrange`` the jaw's joint range.
* Grasp point: midway between the pad faces at that angle, 11 mm above the lowest point of the
  fixed jaw: a frame of the Pinocchio model and a site of the MuJoCo model, both
  :data:`GRASP_POINT`, for ``top_down_ik``.
* Camera ``"front"``: in front of the robot, looking back at the workspace.
* The seed's names, for code written against its scene: the site ``"gripperframe"`` (at the
  tool frame ``gripper_frame_link``) and the world-frame position sensors ``"so101/ee_pos"``
  (that site) and ``"block_pos"`` (the block's centre): :data:`SEED_SENSORS`.

:func:`write_pick_scene` writes the whole scene as an MJCF file, a starting point for a scene
of one's own (``SO101GymEnv(xml_path=...)``; :data:`REQUIRED_NAMES` lists what it must keep).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin

from pinkctl import PinkRobot, load_pink_supported_robot

from ..core.poses import matrix_to_quaternion
from ..errors import InputError
from ..sim.world_geoms import add_obstacles
from ..world import World
from .scene import (
    FreeBlock,
    add_front_camera,
    add_goal_marker,
    add_point_frame,
    add_point_site,
    build_simulation,
    stiff_contact,
)

__all__ = [
    "BLOCK_EDGE_RANGE",
    "GRASP_POINT",
    "JAW_PAD_GEOMS",
    "PAD_PARALLEL_ANGLE",
    "REQUIRED_NAMES",
    "SEED_SENSORS",
    "SEED_TOOL_SITE",
    "SO101PickScene",
    "missing_names",
    "set_jaw_pads",
    "write_pick_scene",
]

BLOCK_EDGE_RANGE = (0.020, 0.030)  # [m]
BLOCK_MASS = 0.02  # [kg]
BLOCK_FRICTION = (1.2, 0.01, 0.0005)  # sliding, torsional, rolling
PAD_FRICTION = (1.5, 0.01, 0.0005)
TABLE_HALF_SIZE = (0.40, 0.45, 0.02)  # [m]
TABLE_CENTRE_X = 0.20  # [m]
FLOOR_Z = -0.75  # [m]
GRASP_POINT = "grasp_point"
JAW_PAD_GEOMS = ("fixed_jaw_pad", "moving_jaw_pad")
PAD_PARALLEL_ANGLE = 0.32  # [rad] gripper angle at which the pad faces are parallel
PAD_GAP = 0.025  # [m] distance between the pad faces at that angle
# In gripper_link coordinates (its x axis is the closing direction, -z points out of the jaws)
FIXED_PAD_FACE_X = 0.003  # [m] inner face of the fixed jaw's pad
PAD_CENTRE_Z = -0.089  # [m]
PAD_HALF_HEIGHT = 0.012  # [m]
PAD_HALF_WIDTH = 0.009  # [m]
FIXED_PAD_HALF_THICKNESS = 0.002  # [m]
MOVING_PAD_HALF_THICKNESS = 0.005  # [m] thicker: fills the gap to the tilted moving jaw
GRIPPER_TORQUE = 0.5  # [N m] the jaw servo's torque limit: a firm, not crushing, grip
GRIPPER_SPEED = 3.0  # [rad/s] the jaw's servo target moves no faster (STS3215: ~4.7 no-load)
GRIPPER_LINK = "gripper_link"
MOVING_JAW_LINK = "moving_jaw_so101_v1_link"
GRIPPER_JOINT = "gripper"
FRONT_CAMERA_EYE = np.array([0.68, 0.0, 0.40])
FRONT_CAMERA_TARGET = np.array([0.16, 0.0, 0.07])
GOAL_BODY = "goal"
#: The seed's name of the tool site (pinkctl's is the tool frame's, ``gripper_frame_link``).
SEED_TOOL_SITE = "gripperframe"
#: The seed scene's position sensors (world frame, [m]): name -> (MuJoCo object type, name).
SEED_SENSORS: dict[str, tuple[mujoco.mjtObj, str]] = {
    "so101/ee_pos": (mujoco.mjtObj.mjOBJ_SITE, SEED_TOOL_SITE),
    "block_pos": (mujoco.mjtObj.mjOBJ_BODY, "block"),
}
#: The SO-101's arm joints, base to wrist.
ARM_JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll")
#: What an MJCF scene of the SO-101 tasks must name, by kind (MuJoCo's element types).
REQUIRED_NAMES: dict[str, tuple[str, ...]] = {
    "joint": (*ARM_JOINTS, GRIPPER_JOINT, "block"),
    "actuator": (*ARM_JOINTS, GRIPPER_JOINT),
    "site": ("gripper_frame_link", GRASP_POINT),
    "body": (GRIPPER_LINK, MOVING_JAW_LINK, "block", GOAL_BODY),
    "geom": ("block", *JAW_PAD_GEOMS),
    "camera": ("front",),
}


def _pad_pose_on_moving_jaw(robot: PinkRobot) -> pin.SE3:
    """Placement of the moving pad in the moving jaw's frame (its face vertical at the
    parallel angle)."""
    model = robot.model
    joint = model.getJointId(GRIPPER_JOINT)
    jaw_in_gripper = model.jointPlacements[joint] * pin.exp6(
        pin.Motion(np.zeros(3), np.array([0.0, 0.0, PAD_PARALLEL_ANGLE]))
    )
    centre_x = FIXED_PAD_FACE_X + PAD_GAP + MOVING_PAD_HALF_THICKNESS
    pad_in_gripper = pin.SE3(np.eye(3), np.array([centre_x, 0.0, PAD_CENTRE_Z]))
    return jaw_in_gripper.actInv(pad_in_gripper)


def grasp_point_in_gripper_link() -> np.ndarray:
    """The grasp point in ``gripper_link`` coordinates [m]."""
    return np.array([FIXED_PAD_FACE_X + PAD_GAP / 2.0, 0.0, PAD_CENTRE_Z])


class SO101PickScene:
    """Builds the pick scene around an SO-101 and adds the grasp-point frame to its model.

    Args:
        robot: A fresh SO-101 (``load_pink_supported_robot("so101")``); the grasp-point frame
            is added to its model.

    Attributes:
        world: The table (``"table"``) and the floor (``"floor"``), in the robot's base frame.

    Raises:
        ValueError: If ``robot`` is not the SO-101 (its gripper links are missing).
    """

    def __init__(self, robot: PinkRobot) -> None:
        model = robot.model
        needed = (GRIPPER_LINK, MOVING_JAW_LINK)
        if robot.tool_frame is None or not all(model.existFrame(n) for n in needed):
            raise InputError(f"the pick scene needs the SO-101 (frames {needed}), got {robot.name}")
        self.robot = robot
        self.block = FreeBlock(
            edge_range=BLOCK_EDGE_RANGE, mass=BLOCK_MASS, friction=BLOCK_FRICTION
        )
        self.tool_frame: str = robot.tool_frame
        tool = model.frames[model.getFrameId(robot.tool_frame)]
        self.grasp_offset = tool.placement.actInv(grasp_point_in_gripper_link())
        add_point_frame(robot, GRASP_POINT, parent_frame=self.tool_frame, offset=self.grasp_offset)
        self._moving_pad = _pad_pose_on_moving_jaw(robot)
        self.world = World()
        hx, hy, hz = TABLE_HALF_SIZE
        self.world.add_box("table", (2 * hx, 2 * hy, 2 * hz), (TABLE_CENTRE_X, 0.0, -hz))
        self.world.add_halfspace("floor", normal=(0.0, 0.0, 1.0), offset=FLOOR_Z)

    def callback(self) -> Callable[[mujoco.MjSpec], None]:
        """The ``spec_callback`` for :meth:`pinkctl.MujocoSimulation.from_robot`."""
        return self._build

    def _build(self, spec: mujoco.MjSpec) -> None:
        table = {"rgba": [0.55, 0.42, 0.3, 1.0], "friction": [1.0, 0.005, 0.0001]}
        table.update(stiff_contact())
        floor = {"rgba": [0.7, 0.72, 0.76, 1.0], "size": [3.0, 3.0, 0.05]}
        add_obstacles(spec, self.world, style={"table": table, "floor": floor}, world_body=True)
        self.block.add_to(spec)
        pads = {
            JAW_PAD_GEOMS[0]: (
                GRIPPER_LINK,
                [FIXED_PAD_FACE_X - FIXED_PAD_HALF_THICKNESS, 0.0, PAD_CENTRE_Z],
                [1.0, 0.0, 0.0, 0.0],
                FIXED_PAD_HALF_THICKNESS,
            ),
            JAW_PAD_GEOMS[1]: (
                MOVING_JAW_LINK,
                self._moving_pad.translation.tolist(),
                matrix_to_quaternion(self._moving_pad.rotation).tolist(),
                MOVING_PAD_HALF_THICKNESS,
            ),
        }
        for name, (body, pos, quat, half_thickness) in pads.items():
            spec.body(body).add_geom(
                name=name,
                type=mujoco.mjtGeom.mjGEOM_BOX,
                size=[half_thickness, PAD_HALF_WIDTH, PAD_HALF_HEIGHT],
                pos=pos,
                quat=quat,
                rgba=[0.15, 0.15, 0.15, 1.0],
                friction=list(PAD_FRICTION),
                condim=4,
                contype=0,  # set_jaw_pads turns them on
                conaffinity=0,
            )
        add_point_site(spec, GRASP_POINT, parent_body=self.tool_frame, offset=self.grasp_offset)
        add_point_site(spec, SEED_TOOL_SITE, parent_body=self.tool_frame, offset=(0.0, 0.0, 0.0))
        for name, (kind, target) in SEED_SENSORS.items():
            spec.add_sensor(
                name=name, type=mujoco.mjtSensor.mjSENS_FRAMEPOS, objtype=kind, objname=target
            )
        add_front_camera(spec, FRONT_CAMERA_EYE, FRONT_CAMERA_TARGET)
        add_goal_marker(spec, GOAL_BODY, shape="disc", size=0.018, rgba=(0.1, 0.8, 0.2, 0.6))
        gripper = spec.actuator(GRIPPER_JOINT)
        gripper.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        gripper.forcerange = [-GRIPPER_TORQUE, GRIPPER_TORQUE]
        gripper.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        gripper.ctrlrange = list(spec.joint(GRIPPER_JOINT).range)
        spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC


def set_jaw_pads(spec: mujoco.MjSpec, enabled: bool) -> None:
    """Turn the collisions of the jaw pads on or off (before the spec is compiled)."""
    for name in JAW_PAD_GEOMS:
        geom = spec.geom(name)
        geom.contype = geom.conaffinity = int(enabled)


def missing_names(spec: mujoco.MjSpec) -> list[str]:
    """The :data:`REQUIRED_NAMES` that ``spec`` lacks, as ``"kind name"``."""
    return [
        f"{kind} {name}"
        for kind, names in REQUIRED_NAMES.items()
        for name in names
        if getattr(spec, kind)(name) is None
    ]


def write_pick_scene(path: str | Path) -> Path:
    """Write the SO-101 pick scene as an MJCF file and return its path.

    The file is the scene the SO-101 environments compile by default (robot, servos, table,
    block, pads off, goal disc, camera ``"front"``), self-contained (the SO-101's geometry is
    primitives). Edit it and pass it as ``SO101GymEnv(xml_path=...)``: it must keep
    :data:`REQUIRED_NAMES` and pinkctl's SO-101 kinematics.
    """
    robot = load_pink_supported_robot("so101")
    sim = build_simulation(robot, SO101PickScene(robot).callback(), physics_dt=0.002)
    assert sim.spec is not None
    target = Path(path)
    target.write_text(sim.spec.to_xml())
    sim.close()
    return target
