"""Generate the bundled robot descriptions: robot_configurations/<name>/robot.urdf and .srdf.

Usage::

    python tools/gen_urdfs.py                 # all robots
    python tools/gen_urdfs.py franka --samples 4000

What comes from where:

* Kinematics (joint origins, axes, position limits, velocity and effort limits) and inertial
  parameters are the published values of each arm, as listed in the ``example-robot-data``
  descriptions (``panda.urdf``, ``ur10_robot.urdf``, ``so101.urdf``). Link names, fixed frames and
  the kinematic tree are the same, so every frame name of those files exists here too.
* Geometry is ours: a few primitives per link (boxes, spheres, cylinders, and "capsules" written
  as a cylinder plus two end spheres, since URDF has no capsule element that Pinocchio's parser
  reads), fitted by hand to the outline of each link. The same primitives serve as collision and
  visual geometry.
* The SRDF's disabled collision pairs are computed here by sampling random configurations
  (Pinocchio + coal distances on these primitives), then refining the closest samples by local
  search: a link pair is disabled when the links are adjacent (at most one moving joint apart),
  when it is in collision in every sample, or when its smallest distance found stays above
  ``NEVER_MARGIN``. Pairs that can come closer than the margin stay enabled.

Needs numpy and pinocchio (with coal). Deterministic for a given ``--seed``.
"""

from __future__ import annotations

import argparse
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1] / "robot_configurations"
PI_2 = 1.5707963267948966

Vec = tuple[float, float, float]


# --------------------------------------------------------------------------------------------
# Description data model
# --------------------------------------------------------------------------------------------


@dataclass
class Shape:
    """A primitive in the link frame [m]. kind: box (lo, hi corners), sphere (a = centre),
    cylinder (a, b = axis end centres) or capsule (segment a-b, swept sphere of radius r)."""

    kind: str
    a: Vec
    b: Vec = (0.0, 0.0, 0.0)
    r: float = 0.0
    material: str = ""


def box(lo: Vec, hi: Vec, material: str = "") -> Shape:
    return Shape("box", lo, hi, 0.0, material)


def sphere(c: Vec, r: float, material: str = "") -> Shape:
    return Shape("sphere", c, c, r, material)


def cylinder(a: Vec, b: Vec, r: float, material: str = "") -> Shape:
    return Shape("cylinder", a, b, r, material)


def capsule(a: Vec, b: Vec, r: float, material: str = "") -> Shape:
    return Shape("capsule", a, b, r, material)


@dataclass
class Inertial:
    mass: float  # [kg]
    com: Vec  # centre of mass in the link frame [m]
    inertia: tuple[float, float, float, float, float, float]  # ixx ixy ixz iyy iyz izz [kg m^2]


@dataclass
class Link:
    name: str
    inertial: Inertial | None = None
    shapes: list[Shape] = field(default_factory=list)


@dataclass
class Joint:
    name: str
    type: str  # revolute, prismatic, continuous, fixed
    parent: str
    child: str
    xyz: Vec = (0.0, 0.0, 0.0)
    rpy: Vec = (0.0, 0.0, 0.0)
    axis: Vec | None = None
    lower: float = 0.0
    upper: float = 0.0
    effort: float = 0.0
    velocity: float = 0.0
    damping: float | None = None
    mimic: str | None = None


@dataclass
class Robot:
    name: str
    urdf_name: str
    materials: dict[str, tuple[float, float, float, float]]
    links: list[Link]
    joints: list[Joint]
    arm_joints: list[str]
    gripper_joints: list[str]
    home: dict[str, float]
    base_link: str
    tip_link: str
    never_margin: float
    comment: str
    # Link pairs disabled by decision rather than by sampling (name1, name2, reason).
    extra_disabled: list[tuple[str, str, str]] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Franka Emika Panda
# --------------------------------------------------------------------------------------------

W, G, D = "white", "grey", "dark"


def franka() -> Robot:
    links = [
        Link(
            "panda_link0",
            Inertial(
                0.629769,
                (-0.041018, -0.00014, 0.049974),
                (0.00315, 8.2904e-07, 0.00015, 0.00388, 8.2299e-06, 0.004285),
            ),
            [
                cylinder((0, 0, 0), (0, 0, 0.138), 0.072, W),
                box((-0.155, -0.09, 0.0), (-0.03, 0.09, 0.06), W),
                cylinder((-0.1, 0, 0.05), (-0.035, 0, 0.115), 0.045, W),
            ],
        ),
        Link(
            "panda_link1",
            Inertial(
                4.970684,
                (0.003875, 0.002081, -0.04762),
                (0.70337, -0.000139, 0.006772, 0.70661, 0.019169, 0.009117),
            ),
            [
                cylinder((0, 0, -0.192), (0, 0, 0), 0.0585, W),
                cylinder((0, -0.132, 0), (0, 0.0585, 0), 0.0585, W),
                cylinder((0, -0.1, -0.03), (0, -0.03, -0.15), 0.05, W),
            ],
        ),
        Link(
            "panda_link2",
            Inertial(
                0.646926,
                (-0.003141, -0.02872, 0.003495),
                (0.007962, -0.003925, 0.010254, 0.02811, 0.000704, 0.025995),
            ),
            [
                cylinder((0, -0.192, 0), (0, 0, 0), 0.0585, W),
                cylinder((0, 0, -0.0585), (0, 0, 0.132), 0.0585, W),
                cylinder((0, -0.03, 0.1), (0, -0.15, 0.03), 0.05, W),
            ],
        ),
        Link(
            "panda_link3",
            Inertial(
                3.228604,
                (2.7518e-02, 3.9252e-02, -6.6502e-02),
                (0.037242, -0.004761, -0.011396, 0.036155, -0.012805, 0.01083),
            ),
            [
                cylinder((0, 0, -0.121), (0, 0, 0.0), 0.056, W),
                cylinder((0.0825, -0.056, 0), (0.0825, 0.111, 0), 0.056, W),
                cylinder((0.07, 0.04, -0.02), (0.0, 0.03, -0.09), 0.05, W),
            ],
        ),
        Link(
            "panda_link4",
            Inertial(
                3.587895,
                (-5.317e-02, 1.04419e-01, 2.7454e-02),
                (0.025853, 0.007796, -0.001332, 0.019552, 0.008641, 0.028323),
            ),
            [
                cylinder((0, 0, -0.056), (0, 0, 0.111), 0.056, W),
                cylinder((-0.0825, 0.0, 0), (-0.0825, 0.124, 0), 0.056, W),
                cylinder((-0.01, 0.03, 0.07), (-0.08, 0.08, 0.02), 0.05, W),
            ],
        ),
        Link(
            "panda_link5",
            Inertial(
                1.225946,
                (-1.1953e-02, 4.1065e-02, -3.8437e-02),
                (0.035549, -0.002117, -0.004037, 0.029474, 0.000229, 0.008627),
            ),
            [
                cylinder((0, 0, -0.265), (0, 0, 0.0), 0.055, W),
                cylinder((0, 0.0, 0), (0, 0.13, 0), 0.055, W),
                cylinder((0, 0.04, -0.22), (0, 0.075, -0.03), 0.055, W),
            ],
        ),
        Link(
            "panda_link6",
            Inertial(
                1.666555,
                (6.0149e-02, -1.4117e-02, -1.0517e-02),
                (0.001964, 0.000109, -0.001158, 0.004354, 0.000341, 0.005433),
            ),
            [
                cylinder((0, 0, -0.044), (0, 0, 0.056), 0.049, W),
                cylinder((0.088, -0.051, 0), (0.088, 0.082, 0), 0.047, D),
                cylinder((0.0, 0.03, 0), (0.088, 0.03, 0), 0.045, W),
            ],
        ),
        Link(
            "panda_link7",
            Inertial(
                0.735522,
                (1.0517e-02, -4.252e-03, 6.1597e-02),
                (0.012516, -0.000428, -0.001196, 0.010027, -0.000741, 0.004815),
            ),
            [
                cylinder((0, 0, 0.052), (0, 0, 0.107), 0.045, D),
                sphere((0.045, 0.045, 0.08), 0.037, D),
            ],
        ),
        Link("panda_link8"),
        Link(
            "panda_hand",
            Inertial(0.73, (-0.01, 0.0, 0.03), (0.001, 0.0, 0.0, 0.0025, 0.0, 0.0017)),
            [
                box((-0.0316, -0.104, -0.01), (0.0316, 0.104, 0.066), W),
                cylinder((0, 0, -0.026), (0, 0, 0), 0.035, D),
            ],
        ),
        Link("panda_hand_tcp"),
        Link(
            "panda_leftfinger",
            Inertial(0.015, (0.0, 0.0, 0.0), (2.375e-06, 0.0, 0.0, 2.375e-06, 0.0, 7.5e-07)),
            [box((-0.011, 0.0, 0.0), (0.011, 0.026, 0.0545), D)],
        ),
        Link(
            "panda_rightfinger",
            Inertial(0.015, (0.0, 0.0, 0.0), (2.375e-06, 0.0, 0.0, 2.375e-06, 0.0, 7.5e-07)),
            [box((-0.011, -0.026, 0.0), (0.011, 0.0, 0.0545), D)],
        ),
    ]
    arm_damping = 0.1  # [N m s/rad]
    q4 = 2.8973
    joints = [
        Joint("panda_joint1", "revolute", "panda_link0", "panda_link1", (0, 0, 0.333), (0, 0, 0),
              (0, 0, 1), -q4, q4, 87.0, 2.175, damping=arm_damping),
        Joint("panda_joint2", "revolute", "panda_link1", "panda_link2", (0, 0, 0), (-PI_2, 0, 0),
              (0, 0, 1), -1.7628, 1.7628, 87.0, 2.175, damping=arm_damping),
        Joint("panda_joint3", "revolute", "panda_link2", "panda_link3", (0, -0.316, 0),
              (PI_2, 0, 0), (0, 0, 1), -q4, q4, 87.0, 2.175, damping=arm_damping),
        Joint("panda_joint4", "revolute", "panda_link3", "panda_link4", (0.0825, 0, 0),
              (PI_2, 0, 0), (0, 0, 1), -3.0718, -0.0698, 87.0, 2.175, damping=arm_damping),
        Joint("panda_joint5", "revolute", "panda_link4", "panda_link5", (-0.0825, 0.384, 0),
              (-PI_2, 0, 0), (0, 0, 1), -q4, q4, 12.0, 2.61, damping=arm_damping),
        Joint("panda_joint6", "revolute", "panda_link5", "panda_link6", (0, 0, 0), (PI_2, 0, 0),
              (0, 0, 1), -0.0175, 3.7525, 12.0, 2.61, damping=arm_damping),
        Joint("panda_joint7", "revolute", "panda_link6", "panda_link7", (0.088, 0, 0),
              (PI_2, 0, 0), (0, 0, 1), -q4, q4, 12.0, 2.61, damping=arm_damping),
        Joint("panda_joint8", "fixed", "panda_link7", "panda_link8", (0, 0, 0.107)),
        Joint("panda_hand_joint", "fixed", "panda_link8", "panda_hand", (0, 0, 0),
              (0, 0, -0.7853981633974483)),
        Joint("panda_hand_tcp_joint", "fixed", "panda_hand", "panda_hand_tcp", (0, 0, 0.1034)),
        Joint("panda_finger_joint1", "prismatic", "panda_hand", "panda_leftfinger",
              (0, 0, 0.0584), (0, 0, 0), (0, 1, 0), 0.0, 0.04, 100.0, 0.2, damping=0.3),
        Joint("panda_finger_joint2", "prismatic", "panda_hand", "panda_rightfinger",
              (0, 0, 0.0584), (0, 0, 0), (0, -1, 0), 0.0, 0.04, 100.0, 0.2, damping=0.3,
              mimic="panda_finger_joint1"),
    ]  # fmt: skip
    arm_joints = [f"panda_joint{i}" for i in range(1, 8)]
    home = dict(zip(arm_joints, [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785], strict=True))
    home["panda_finger_joint1"] = 0.04
    return Robot(
        name="franka",
        urdf_name="panda",
        materials={
            W: (0.95, 0.95, 0.95, 1.0),
            G: (0.6, 0.6, 0.62, 1.0),
            D: (0.2, 0.2, 0.22, 1.0),
        },
        links=links,
        joints=joints,
        arm_joints=arm_joints,
        gripper_joints=["panda_finger_joint1"],
        home=home,
        base_link="panda_link0",
        tip_link="panda_hand_tcp",
        never_margin=0.05,
        comment="Franka Emika Panda arm with Franka Hand",
        # The fingers touch each other whenever the gripper closes on nothing; that contact is
        # the gripper's business, not a self-collision for the arm controller to avoid.
        extra_disabled=[("panda_leftfinger", "panda_rightfinger", "Gripper")],
    )


# --------------------------------------------------------------------------------------------
# Universal Robots UR10 (CB-series kinematics)
# --------------------------------------------------------------------------------------------


def ur10() -> Robot:
    B, M = "blue", "metal"
    links = [
        Link(
            "base_link",
            Inertial(4.0, (0, 0, 0), (0.0061063308908, 0.0, 0.0, 0.0061063308908, 0.0, 0.01125)),
            [cylinder((0, 0, 0), (0, 0, 0.035), 0.09, M)],
        ),
        Link("base"),
        Link(
            "shoulder_link",
            Inertial(
                7.778, (0, 0, 0), (0.0314743125769, 0.0, 0.0, 0.0314743125769, 0.0, 0.021875625)
            ),
            [
                cylinder((0, 0, -0.089), (0, 0, 0.088), 0.076, B),
                cylinder((0, -0.075, 0), (0, 0.086, 0), 0.076, M),
            ],
        ),
        Link(
            "upper_arm_link",
            Inertial(
                12.93, (0, 0, 0.306), (0.421753803798, 0.0, 0.0, 0.421753803798, 0.0, 0.036365625)
            ),
            [
                cylinder((0, -0.135, 0), (0, 0.042, 0), 0.076, B),
                cylinder((0, -0.045, 0.0), (0, -0.045, 0.11), 0.07, M),
                cylinder((0, -0.045, 0.07), (0, -0.045, 0.56), 0.055, M),
                cylinder((0, -0.105, 0.612), (0, 0.023, 0.612), 0.062, B),
            ],
        ),
        Link(
            "forearm_link",
            Inertial(
                3.87,
                (0, 0, 0.28615),
                (0.111069694097, 0.0, 0.0, 0.111069694097, 0.0, 0.010884375),
            ),
            [
                cylinder((0, -0.069, 0), (0, 0.067, 0), 0.06, B),
                cylinder((0, 0, 0.0), (0, 0, 0.09), 0.058, M),
                cylinder((0, 0, 0.05), (0, 0, 0.53), 0.044, M),
                cylinder((0, -0.058, 0.5723), (0, 0.061, 0.5723), 0.047, M),
            ],
        ),
        Link(
            "wrist_1_link",
            Inertial(1.96, (0, 0, 0), (0.0051082479567, 0.0, 0.0, 0.0051082479567, 0.0, 0.0055125)),
            [
                cylinder((0, 0.061, 0), (0, 0.161, 0), 0.046, B),
                cylinder((0, 0.1149, -0.057), (0, 0.1149, 0.062), 0.046, M),
            ],
        ),
        Link(
            "wrist_2_link",
            Inertial(1.96, (0, 0, 0), (0.0051082479567, 0.0, 0.0, 0.0051082479567, 0.0, 0.0055125)),
            [
                cylinder((0, 0, 0.062), (0, 0, 0.162), 0.046, B),
                cylinder((0, -0.057, 0.1157), (0, 0.062, 0.1157), 0.046, M),
            ],
        ),
        Link(
            "wrist_3_link",
            Inertial(
                0.202, (0, 0, 0), (0.000526462289415, 0.0, 0.0, 0.000526462289415, 0.0, 0.000568125)
            ),
            [cylinder((0, 0.0616, 0), (0, 0.0921, 0), 0.046, M)],
        ),
        Link("ee_link"),
        Link("tool0"),
    ]
    tau = 6.28318530718
    joints = [
        Joint("base_link-base_fixed_joint", "fixed", "base_link", "base", (0, 0, 0),
              (0, 0, -3.14159265359)),
        Joint("shoulder_pan_joint", "revolute", "base_link", "shoulder_link", (0, 0, 0.1273),
              (0, 0, 0), (0, 0, 1), -tau, tau, 330.0, 2.16),
        Joint("shoulder_lift_joint", "revolute", "shoulder_link", "upper_arm_link",
              (0, 0.220941, 0), (0, 1.57079632679, 0), (0, 1, 0), -tau, tau, 330.0, 2.16),
        Joint("elbow_joint", "revolute", "upper_arm_link", "forearm_link", (0, -0.1719, 0.612),
              (0, 0, 0), (0, 1, 0), -3.14159265359, 3.14159265359, 150.0, 3.15),
        Joint("wrist_1_joint", "revolute", "forearm_link", "wrist_1_link", (0, 0, 0.5723),
              (0, 1.57079632679, 0), (0, 1, 0), -tau, tau, 54.0, 3.2),
        Joint("wrist_2_joint", "revolute", "wrist_1_link", "wrist_2_link", (0, 0.1149, 0),
              (0, 0, 0), (0, 0, 1), -tau, tau, 54.0, 3.2),
        Joint("wrist_3_joint", "revolute", "wrist_2_link", "wrist_3_link", (0, 0, 0.1157),
              (0, 0, 0), (0, 1, 0), -tau, tau, 54.0, 3.2),
        Joint("ee_fixed_joint", "fixed", "wrist_3_link", "ee_link", (0, 0.0922, 0),
              (0, 0, 1.57079632679)),
        Joint("wrist_3_link-tool0_fixed_joint", "fixed", "wrist_3_link", "tool0", (0, 0.0922, 0),
              (-1.57079632679, 0, 0)),
    ]  # fmt: skip
    for j in joints:
        if j.type == "revolute":
            j.damping = 0.5
    arm_joints = [
        "shoulder_pan_joint",
        "shoulder_lift_joint",
        "elbow_joint",
        "wrist_1_joint",
        "wrist_2_joint",
        "wrist_3_joint",
    ]
    home = dict(zip(arm_joints, [0.0, -1.57, 1.57, -1.57, -1.57, 0.0], strict=True))
    return Robot(
        name="ur10",
        urdf_name="ur10",
        materials={B: (0.35, 0.55, 0.75, 1.0), M: (0.75, 0.76, 0.78, 1.0)},
        links=links,
        joints=joints,
        arm_joints=arm_joints,
        gripper_joints=[],
        home=home,
        base_link="base_link",
        tip_link="tool0",
        never_margin=0.05,
        comment="Universal Robots UR10 (CB-series kinematics)",
    )


# --------------------------------------------------------------------------------------------
# SO-101 (LeRobot / TheRobotStudio), STS3215 servos
# --------------------------------------------------------------------------------------------


def so101() -> Robot:
    P, S = "printed", "servo"
    links = [
        Link(
            "base_link",
            Inertial(
                0.147,
                (0.0137179, -5.19711e-05, 0.0334843),
                (0.000114686, -4.59787e-07, 4.97151e-06, 0.000136117, 9.75275e-08, 0.000130364),
            ),
            [
                box((-0.02, -0.055, -0.0024), (0.065, 0.055, 0.012), P),  # foot plate
                box((-0.031, -0.026, 0.012), (0.022, 0.026, 0.07), P),  # servo housing
                box((0.022, -0.0125, 0.025), (0.056, 0.0125, 0.056), S),  # pan servo front
            ],
        ),
        Link(
            "shoulder_link",
            Inertial(
                0.100006,
                (-0.0307604, -1.66727e-05, -0.0252713),
                (8.3759e-05, 7.55525e-08, -1.16342e-06, 8.10403e-05, 1.54663e-07, 2.39783e-05),
            ),
            # Shoulder frame: z down, x backwards, origin on the pan axis 62.4 mm above the foot.
            [
                box((-0.05, -0.026, -0.064), (-0.008, 0.029, -0.0126), S),  # lift servo
                cylinder((0, 0, 0.002), (0, 0, -0.0126), 0.014, P),  # horn disc
                box((-0.0512, -0.02, -0.0126), (-0.0362, 0.02, 0.0474), P),  # bracket wall
            ],
        ),
        Link(
            "upper_arm_link",
            Inertial(
                0.103,
                (-0.0898471, -0.00838224, 0.0184089),
                (4.08002e-05, -1.97819e-05, -4.03016e-08, 0.000147318, 8.97326e-09, 0.000142487),
            ),
            [
                box((-0.1, -0.012, -0.012), (0.012, 0.012, 0.046), P),
                box((-0.132, -0.038, -0.0135), (-0.09, 0.012, 0.054), S),
            ],
        ),
        Link(
            "lower_arm_link",
            Inertial(
                0.104,
                (-0.0980701, 0.00324376, 0.0182831),
                (2.87438e-05, 7.41152e-06, 1.26409e-06, 0.000159844, -4.90188e-08, 0.00014529),
            ),
            [
                box((-0.1, -0.015, -0.012), (0.012, 0.015, 0.052), P),
                box((-0.145, -0.015, -0.012), (-0.1, 0.022, 0.052), S),
            ],
        ),
        Link(
            "wrist_link",
            Inertial(
                0.079,
                (-0.000103312, -0.0386143, 0.0281156),
                (3.68263e-05, 1.7893e-08, -5.28128e-08, 2.5391e-05, 3.6412e-06, 2.1e-05),
            ),
            [
                box((-0.02, -0.066, -0.009), (0.016, -0.025, 0.053), S),
                box((-0.012, -0.025, 0.03), (0.012, 0.012, 0.053), P),
                box((-0.012, -0.025, -0.009), (0.012, 0.012, 0.005), P),
            ],
        ),
        Link(
            "gripper_link",
            Inertial(
                0.087,
                (0.000213627, 0.000245138, -0.025187),
                (2.75087e-05, -3.35241e-07, -5.7352e-06, 4.33657e-05, -5.17847e-08, 3.45059e-05),
            ),
            [
                box((-0.035, -0.028, -0.045), (0.03, 0.024, 0.001), S),
                capsule((-0.025, 0, -0.045), (-0.01, 0, -0.095), 0.01, P),
            ],
        ),
        Link("gripper_frame_link"),
        Link(
            "moving_jaw_so101_v1_link",
            Inertial(
                0.012,
                (-0.00157495, -0.0300244, 0.0192755),
                (6.61427e-06, -3.19807e-07, -5.90717e-09, 1.89032e-06, -1.09945e-07, 5.28738e-06),
            ),
            [
                box((-0.012, -0.02, -0.005), (0.01, 0.01, 0.043), P),
                capsule((0, -0.02, 0.02), (0, -0.075, 0.02), 0.008, P),
            ],
        ),
    ]
    joints = [
        Joint("shoulder_pan", "revolute", "base_link", "shoulder_link",
              (0.0388353, -8.97657e-09, 0.0624), (3.14159, 4.18253e-17, -3.14159), (0, 0, 1),
              -1.91986, 1.91986, 10.0, 10.0),
        Joint("shoulder_lift", "revolute", "shoulder_link", "upper_arm_link",
              (-0.0303992, -0.0182778, -0.0542), (-1.5708, -1.5708, 0), (0, 0, 1),
              -1.74533, 1.74533, 10.0, 10.0),
        Joint("elbow_flex", "revolute", "upper_arm_link", "lower_arm_link",
              (-0.11257, -0.028, 1.73763e-16), (-3.63608e-16, 8.74301e-16, 1.5708), (0, 0, 1),
              -1.69, 1.69, 10.0, 10.0),
        Joint("wrist_flex", "revolute", "lower_arm_link", "wrist_link",
              (-0.1349, 0.0052, 3.62355e-17), (4.02456e-15, 8.67362e-16, -1.5708), (0, 0, 1),
              -1.65806, 1.65806, 10.0, 10.0),
        Joint("wrist_roll", "revolute", "wrist_link", "gripper_link",
              (5.55112e-17, -0.0611, 0.0181), (1.5708, 0.0486795, 3.14159), (0, 0, 1),
              -2.74385, 2.84121, 10.0, 10.0),
        Joint("gripper_frame_joint", "fixed", "gripper_link", "gripper_frame_link",
              (-0.0079, -0.000218121, -0.0981274), (0, 3.14159, 0)),
        Joint("gripper", "revolute", "gripper_link", "moving_jaw_so101_v1_link",
              (0.0202, 0.0188, -0.0234), (1.5708, -5.24284e-08, -1.41553e-15), (0, 0, 1),
              -0.174533, 1.74533, 10.0, 10.0),
    ]  # fmt: skip
    for j in joints:
        if j.type == "revolute":
            j.damping = 0.05
    arm_joints = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]
    home = dict(zip(arm_joints, [0.0, -0.6, 0.6, 1.2, 0.0], strict=True))
    home["gripper"] = 0.0
    return Robot(
        name="so101",
        urdf_name="so101",
        materials={P: (1.0, 0.82, 0.12, 1.0), S: (0.1, 0.1, 0.1, 1.0)},
        links=links,
        joints=joints,
        arm_joints=arm_joints,
        gripper_joints=["gripper"],
        home=home,
        base_link="base_link",
        tip_link="gripper_frame_link",
        never_margin=0.02,
        comment="SO-101 arm (TheRobotStudio / LeRobot), STS3215 servos",
    )


ROBOTS = {"franka": franka, "ur10": ur10, "so101": so101}


# --------------------------------------------------------------------------------------------
# URDF writer
# --------------------------------------------------------------------------------------------


def _f(x: float) -> str:
    """Shortest decimal that reads back as the same float (kinematic facts stay exact)."""
    s = repr(float(x))
    return "0" if s in ("0.0", "-0.0") else s.removesuffix(".0")


def _v(v: Vec | np.ndarray) -> str:
    return " ".join(_f(x) for x in v)


def _g(x: float) -> str:
    """Geometry numbers: 0.1 mm / 1e-9 rad is plenty."""
    s = f"{float(x):.10g}"
    return "0" if s in ("0", "-0") else s


def _rpy_z_to(u: np.ndarray) -> np.ndarray:
    """Roll-pitch-yaw of a rotation taking the z axis onto the unit vector ``u``."""
    u = u / np.linalg.norm(u)
    if abs(u[2]) > 1 - 1e-12:
        return np.zeros(3) if u[2] > 0 else np.array([math.pi, 0.0, 0.0])
    # Rotation R = Rz(yaw) Ry(pitch) (roll = 0): R z = (cos(yaw) sin(p), sin(yaw) sin(p), cos(p)).
    pitch = math.acos(float(np.clip(u[2], -1.0, 1.0)))
    yaw = math.atan2(u[1], u[0])
    return np.array([0.0, pitch, yaw])


def _primitive_elements(shape: Shape) -> list[tuple[np.ndarray, np.ndarray, str, dict[str, str]]]:
    """(xyz, rpy, geometry tag, attributes) of the URDF primitives making up ``shape``."""
    a, b = np.asarray(shape.a, float), np.asarray(shape.b, float)
    zero = np.zeros(3)
    if shape.kind == "box":
        return [((a + b) / 2, zero, "box", {"size": " ".join(_g(s) for s in b - a)})]
    if shape.kind == "sphere":
        return [(a, zero, "sphere", {"radius": _g(shape.r)})]
    out = []
    length = float(np.linalg.norm(b - a))
    if length > 1e-9:
        out.append(
            (
                (a + b) / 2,
                _rpy_z_to(b - a),
                "cylinder",
                {"radius": _g(shape.r), "length": _g(length)},
            )
        )
    if shape.kind == "capsule":
        out.append((a, zero, "sphere", {"radius": _g(shape.r)}))
        if length > 1e-9:
            out.append((b, zero, "sphere", {"radius": _g(shape.r)}))
    return out


def _contains(shape: Shape, c: np.ndarray, r: float) -> bool:
    """Whether the ball (c, r) lies inside ``shape`` (so an end sphere there adds nothing)."""
    a, b = np.asarray(shape.a, float), np.asarray(shape.b, float)
    tol = 1e-9
    if shape.kind == "box":
        return bool(np.all(c - r >= a - tol) and np.all(c + r <= b + tol))
    if shape.kind == "sphere":
        return bool(np.linalg.norm(c - a) + r <= shape.r + tol)
    d = b - a
    length2 = float(d @ d)
    t = float(np.clip((c - a) @ d / length2, 0.0, 1.0)) if length2 > 0 else 0.0
    if shape.kind == "capsule":
        return bool(np.linalg.norm(c - (a + t * d)) + r <= shape.r + tol)
    # cylinder: radial and axial room for the ball
    u = d / math.sqrt(length2)
    s = float((c - a) @ u)
    radial = float(np.linalg.norm((c - a) - s * u))
    return radial + r <= shape.r + tol and r - tol <= s <= math.sqrt(length2) - r + tol


def link_elements(link: Link) -> list[tuple[np.ndarray, np.ndarray, str, dict[str, str], str]]:
    """URDF primitives of a link: capsule end spheres already inside another primitive of the
    same link (or equal to an earlier one) are dropped, since they change neither the shape
    nor any distance but cost a collision pair each."""
    out: list[tuple[np.ndarray, np.ndarray, str, dict[str, str], str]] = []
    seen_spheres: list[tuple[np.ndarray, float]] = []
    for i, shape in enumerate(link.shapes):
        for xyz, rpy, tag, attrs in _primitive_elements(shape):
            if shape.kind == "capsule" and tag == "sphere":
                others = [o for k, o in enumerate(link.shapes) if k != i]
                if any(_contains(o, xyz, shape.r) for o in others) or any(
                    np.linalg.norm(xyz - c) + shape.r <= r + 1e-9 for c, r in seen_spheres
                ):
                    continue
                seen_spheres.append((xyz, shape.r))
            out.append((xyz, rpy, tag, attrs, shape.material))
    return out


def _indent(elem: ET.Element) -> None:
    ET.indent(elem, space="  ")


def write_urdf(robot: Robot, path: Path) -> None:
    root = ET.Element("robot", name=robot.urdf_name)
    root.append(
        ET.Comment(
            f" {robot.comment}. Written by pinkctl's tools/gen_urdfs.py: kinematics, limits and"
            " inertials are the manufacturer's published values (as listed by example-robot-data);"
            " geometry is primitives only (capsule = cylinder + two spheres). "
        )
    )
    mj = ET.SubElement(root, "mujoco")
    ET.SubElement(
        mj,
        "compiler",
        discardvisual="false",
        fusestatic="false",
        balanceinertia="true",
        angle="radian",
    )
    for name, rgba in robot.materials.items():
        mat = ET.SubElement(root, "material", name=name)
        ET.SubElement(mat, "color", rgba=" ".join(_g(c) for c in rgba))
    for link in robot.links:
        le = ET.SubElement(root, "link", name=link.name)
        if link.inertial is not None:
            ine = ET.SubElement(le, "inertial")
            ET.SubElement(ine, "origin", xyz=_v(link.inertial.com), rpy="0 0 0")
            ET.SubElement(ine, "mass", value=_f(link.inertial.mass))
            keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
            ET.SubElement(
                ine, "inertia", {k: _f(v) for k, v in zip(keys, link.inertial.inertia, strict=True)}
            )
        elements = link_elements(link)
        for kind in ("visual", "collision"):
            for xyz, rpy, tag, attrs, material in elements:
                ge = ET.SubElement(le, kind)
                ET.SubElement(
                    ge, "origin", xyz=" ".join(_g(x) for x in xyz), rpy=" ".join(_g(x) for x in rpy)
                )
                geo = ET.SubElement(ge, "geometry")
                ET.SubElement(geo, tag, attrs)
                if kind == "visual" and material:
                    ET.SubElement(ge, "material", name=material)
    for j in robot.joints:
        je = ET.SubElement(root, "joint", name=j.name, type=j.type)
        ET.SubElement(je, "origin", xyz=_v(j.xyz), rpy=_v(j.rpy))
        ET.SubElement(je, "parent", link=j.parent)
        ET.SubElement(je, "child", link=j.child)
        if j.type != "fixed":
            assert j.axis is not None
            ET.SubElement(je, "axis", xyz=_v(j.axis))
            ET.SubElement(
                je,
                "limit",
                lower=_f(j.lower),
                upper=_f(j.upper),
                effort=_f(j.effort),
                velocity=_f(j.velocity),
            )
            if j.damping is not None:
                ET.SubElement(je, "dynamics", damping=_f(j.damping), friction="0")
            if j.mimic is not None:
                ET.SubElement(je, "mimic", joint=j.mimic, multiplier="1", offset="0")
    _indent(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="unicode", xml_declaration=True)
    with path.open("a") as f:
        f.write("\n")


# --------------------------------------------------------------------------------------------
# SRDF: disabled collision pairs by sampling
# --------------------------------------------------------------------------------------------


@dataclass
class PairStats:
    adjacent: bool
    min_distance: float = math.inf  # smallest distance found [m]
    max_distance: float = -math.inf  # largest distance found [m]
    geometry_pairs: list[int] = field(default_factory=list)


def compute_disabled_pairs(
    robot: Robot, urdf: Path, samples: int, seed: int
) -> tuple[list[tuple[str, str, str]], dict[tuple[str, str], PairStats]]:
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(urdf), True)
    data = model.createData()
    gmodel = pin.buildGeomFromUrdf(model, str(urdf), pin.GeometryType.COLLISION)
    gmodel.addAllCollisionPairs()
    gdata = pin.GeometryData(gmodel)

    def link_of(gid: int) -> str:
        return str(model.frames[gmodel.geometryObjects[gid].parentFrame].name)

    def joint_of(gid: int) -> int:
        return int(gmodel.geometryObjects[gid].parentJoint)

    # Every pair of links with geometry, adjacent ones included (Pinocchio skips pairs on the
    # same joint, but the SRDF should still name them).
    geom_links = sorted({link_of(i) for i in range(len(gmodel.geometryObjects))})
    link_joint = {link_of(i): joint_of(i) for i in range(len(gmodel.geometryObjects))}
    stats: dict[tuple[str, str], PairStats] = {}
    for i, la in enumerate(geom_links):
        for lb in geom_links[i + 1 :]:
            ja, jb = link_joint[la], link_joint[lb]
            adjacent = ja == jb or model.parents[ja] == jb or model.parents[jb] == ja
            stats[(la, lb)] = PairStats(adjacent)
    for k, cp in enumerate(gmodel.collisionPairs):
        la, lb = sorted((link_of(cp.first), link_of(cp.second)))
        stats[(la, lb)].geometry_pairs.append(k)

    lo = model.lowerPositionLimit.copy()
    hi = model.upperPositionLimit.copy()
    rng = np.random.default_rng(seed)

    def pair_distances(q: np.ndarray) -> np.ndarray:
        pin.forwardKinematics(model, data, q)
        pin.updateGeometryPlacements(model, data, gmodel, gdata)
        pin.computeDistances(gmodel, gdata)
        return np.array([r.min_distance for r in gdata.distanceResults])

    def link_distance(q: np.ndarray, gp: list[int]) -> float:
        pin.forwardKinematics(model, data, q)
        pin.updateGeometryPlacements(model, data, gmodel, gdata)
        return min(pin.computeDistance(gmodel, gdata, k).min_distance for k in gp)

    checked = [(key, s) for key, s in stats.items() if s.geometry_pairs]
    best_q: dict[tuple[str, str], list[tuple[float, np.ndarray]]] = {k: [] for k, _ in checked}
    qs = [robot_home_q(robot, model)] + [rng.uniform(lo, hi) for _ in range(samples)]
    for q in qs:
        dist = pair_distances(q)
        for key, s in checked:
            d = float(dist[s.geometry_pairs].min())
            s.min_distance = min(s.min_distance, d)
            s.max_distance = max(s.max_distance, d)
            keep = best_q[key]
            keep.append((d, q))
            keep.sort(key=lambda t: t[0])
            del keep[4:]

    # Local search from the closest samples, for pairs that sampling says stay apart.
    span = hi - lo
    for key, s in checked:
        if s.adjacent or s.min_distance <= robot.never_margin:
            continue
        for d0, q0 in best_q[key]:
            q, d = q0.copy(), d0
            step = 0.2
            while step > 1e-3 and d > robot.never_margin:
                improved = False
                for _ in range(20):
                    cand = np.clip(q + rng.normal(scale=step, size=q.shape) * span, lo, hi)
                    dc = link_distance(cand, s.geometry_pairs)
                    if dc < d:
                        q, d, improved = cand, dc, True
                if not improved:
                    step *= 0.5
            s.min_distance = min(s.min_distance, d)

    disabled: list[tuple[str, str, str]] = []
    extra = {tuple(sorted((a, b))): reason for a, b, reason in robot.extra_disabled}
    for key, s in stats.items():
        if s.adjacent:
            disabled.append((*key, "Adjacent"))
        elif key in extra:
            disabled.append((*key, extra[key]))
        elif s.max_distance <= 0.0:
            disabled.append((*key, "Always"))
        elif s.min_distance > robot.never_margin:
            disabled.append((*key, "Never"))
    return disabled, stats


def robot_home_q(robot: Robot, model: object) -> np.ndarray:
    import pinocchio as pin

    assert isinstance(model, pin.Model)
    q = pin.neutral(model)
    for name, value in robot.home.items():
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 1:
            q[joint.idx_q] = value
    return q


def write_srdf(
    robot: Robot, path: Path, disabled: list[tuple[str, str, str]], samples: int
) -> None:
    root = ET.Element("robot", name=robot.urdf_name)
    root.append(
        ET.Comment(
            " Written by pinkctl's tools/gen_urdfs.py. Disabled pairs: Adjacent (at most one moving"
            " joint apart), Always (in collision in every sample), Never (never closer than"
            f" {robot.never_margin} m over {samples} random configurations refined by local"
            " search), or named otherwise. "
        )
    )
    group = ET.SubElement(root, "group", name="arm")
    for j in robot.arm_joints:
        ET.SubElement(group, "joint", name=j)
    if robot.gripper_joints:
        hand = ET.SubElement(root, "group", name="gripper")
        for j in robot.gripper_joints:
            ET.SubElement(hand, "joint", name=j)
    root.append(ET.Comment(" home: arm joints, then gripper joints (mimic followers omitted) "))
    state = ET.SubElement(root, "group_state", name="home", group="arm")
    for name, value in robot.home.items():
        ET.SubElement(state, "joint", name=name, value=_f(value))
    for a, b, reason in disabled:
        ET.SubElement(root, "disable_collisions", link1=a, link2=b, reason=reason)
    _indent(root)
    ET.ElementTree(root).write(path, encoding="unicode", xml_declaration=True)
    with path.open("a") as f:
        f.write("\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "robots", nargs="*", help=f"robots to write (default: all of {list(ROBOTS)})"
    )
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=ROOT)
    parser.add_argument("-v", "--verbose", action="store_true", help="print every link pair")
    args = parser.parse_args()
    unknown = [r for r in args.robots if r not in ROBOTS]
    if unknown:
        parser.error(f"unknown robots {unknown}; choose from {list(ROBOTS)}")
    for name in args.robots or list(ROBOTS):
        robot = ROBOTS[name]()
        folder = args.out / name
        urdf = folder / "robot.urdf"
        write_urdf(robot, urdf)
        disabled, stats = compute_disabled_pairs(robot, urdf, args.samples, args.seed)
        write_srdf(robot, folder / "robot.srdf", disabled, args.samples)
        n_geom_pairs = sum(len(s.geometry_pairs) for s in stats.values())
        kept = [k for k, s in stats.items() if k not in {(a, b) for a, b, _ in disabled}]
        n_kept_geom = sum(len(stats[k].geometry_pairs) for k in kept)
        print(
            f"{name}: {len(stats)} link pairs, {len(disabled)} disabled, {len(kept)} kept; "
            f"geometry pairs {n_geom_pairs} -> {n_kept_geom}"
        )
        if args.verbose:
            reasons = {(a, b): reason for a, b, reason in disabled}
            for k, st in stats.items():
                what = reasons.get(k, "kept")
                print(f"   {what:9s} {k[0]} / {k[1]}: min distance {st.min_distance * 1000:.1f} mm")


if __name__ == "__main__":
    main()
