"""Whole-body tasks of PinkIKController: several frames, the CoM, contacts, the support polygon,
and the strict cascade over them (kinematic loops: the command is the next estimate)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pinkctl import PinkIKController, RobotState, load_pink_supported_robot
from pinkctl.controllers.whole_body import FrameCosts
from pinkctl.core.state import JointState, SpatialState
from pinkctl.errors import InputError
from pinkctl.qp.contact_rows import convex_hull, polygon_edges

FEET = ["left_ankle_roll_link", "right_ankle_roll_link"]
LEFT, RIGHT = "left_rubber_hand", "right_rubber_hand"
SOLE = (-0.05, 0.12, -0.03, 0.03)


@pytest.fixture(scope="module")
def g1():
    arms = load_pink_supported_robot("g1", floating_base=True)
    joints = list(arms.model.names[2:])
    return load_pink_supported_robot("g1", floating_base=True, controlled_joint_names=joints)


def _controller(robot, **kw) -> PinkIKController:
    kw.setdefault("contacts", FEET)
    kw.setdefault("sole", SOLE)
    return PinkIKController(
        robot,
        robot.controlled_joint_names,
        [LEFT, RIGHT, *FEET, "com"],
        dt=0.01,
        integrate_from="command",
        orientation_cost=0.0,
        motion_limits=False,
        self_collision=False,  # the feet stand on the floor: contacts, not obstacles
        **kw,
    )


def _state(robot, positions) -> RobotState:
    names = robot.controlled_joint_names
    return RobotState(joints=JointState.from_name(names, positions=(names, positions)))


def _targets(names, positions) -> RobotState:
    space = [LEFT, RIGHT, *FEET, "com"]
    return RobotState(sites=SpatialState.from_name(space, positions=(names, np.array(positions))))


def _run(robot, controller, setpoint, ticks, check=None):
    home = np.array(
        [
            robot.q0[robot.model.joints[robot.model.getJointId(n)].idx_q]
            for n in robot.controlled_joint_names
        ]
    )
    assert controller.reset(_state(robot, home), None, 0.0)
    positions = home
    for k in range(ticks):
        out = controller.forward(_state(robot, positions), setpoint, 0.01 * k)
        assert controller.status.value == "ok", controller.last_error
        positions = out.joints.positions
        if check is not None:
            check(controller.configuration)
    return controller.configuration


def _pose(robot, configuration, frame):
    return configuration.get_transform_frame_to_world(frame)


def test_two_hands_reach_their_sites_while_the_feet_stay(g1) -> None:
    controller = _controller(g1, frames={RIGHT: FrameCosts(1.0, 0.0)}, posture_cost=1e-2)
    start = controller.robot.q0.copy()
    data = g1.model.createData()
    pin.framesForwardKinematics(g1.model, data, start)
    left = data.oMf[g1.model.getFrameId(LEFT)].translation + [0.05, 0.0, -0.05]
    right = data.oMf[g1.model.getFrameId(RIGHT)].translation + [0.05, 0.0, -0.05]
    feet = [data.oMf[g1.model.getFrameId(f)].copy() for f in FEET]
    worst = [0.0]

    def feet_still(configuration) -> None:
        for foot, pose in zip(FEET, feet):
            moved = pin.log6(pose.actInv(_pose(g1, configuration, foot))).vector
            worst[0] = max(worst[0], float(np.abs(moved).max()))

    final = _run(g1, controller, _targets([LEFT, RIGHT], [left, right]), 60, feet_still)
    assert np.linalg.norm(_pose(g1, final, LEFT).translation - left) < 1e-3
    assert np.linalg.norm(_pose(g1, final, RIGHT).translation - right) < 1e-3
    assert worst[0] < 1e-3  # rows: a band of 1e-6 per tick, then second-order terms


def test_com_follows_the_com_site_and_is_held_without_one(g1) -> None:
    controller = _controller(g1, com_cost=10.0, position_cost=0.0, posture_cost=1e-3)
    com0 = pin.centerOfMass(g1.model, g1.model.createData(), g1.q0)
    target = com0 + [0.02, 0.01, -0.03]
    final = _run(g1, controller, _targets(["com"], [target]), 80)
    com = pin.centerOfMass(g1.model, g1.model.createData(), final.q)
    assert np.linalg.norm(com - target) < 1e-3
    held = _run(g1, _controller(g1, com_cost=10.0, position_cost=0.0), None, 20)
    assert np.linalg.norm(pin.centerOfMass(g1.model, g1.model.createData(), held.q) - com0) < 1e-6


def test_the_com_stays_inside_the_support_polygon_with_its_margin(g1) -> None:
    controller = _controller(g1, support_margin=0.03, posture_cost=1e-3)
    support = controller._problem.whole_body.support
    data = g1.model.createData()
    pin.framesForwardKinematics(g1.model, data, g1.q0)
    far = data.oMf[g1.model.getFrameId(LEFT)].translation + [0.6, 0.0, -0.3]  # out of reach
    inside = [np.inf]

    def com_inside(configuration) -> None:
        com = pin.centerOfMass(g1.model, g1.model.createData(), configuration.q)
        inside[0] = min(inside[0], float(support.distances(com).min()))

    _run(g1, controller, _targets([LEFT], [far]), 150, com_inside)
    assert inside[0] >= 0.03 - 1e-4


def test_the_cascade_takes_contacts_com_and_several_frames(g1) -> None:
    levels = [["contacts"], ["com"], ["frame", RIGHT], ["posture"]]
    controller = _controller(g1, frames=[RIGHT], com_cost=1.0, priority_levels=levels)
    assert not any(type(limit).__name__ == "ContactLimit" for limit in controller.limits)
    com0 = pin.centerOfMass(g1.model, g1.model.createData(), g1.q0)
    data = g1.model.createData()
    pin.framesForwardKinematics(g1.model, data, g1.q0)
    left = data.oMf[g1.model.getFrameId(LEFT)].translation + [0.05, 0.0, -0.05]
    final = _run(g1, controller, _targets([LEFT], [left]), 100)
    assert np.linalg.norm(pin.centerOfMass(g1.model, g1.model.createData(), final.q) - com0) < 1e-3
    # the CoM held exactly costs the hands a little: both within 2 cm of their targets
    assert np.linalg.norm(_pose(g1, final, LEFT).translation - left) < 0.02
    for foot in FEET:
        pose = data.oMf[g1.model.getFrameId(foot)]
        assert np.linalg.norm(_pose(g1, final, foot).translation - pose.translation) < 1e-3


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"frames": ["no_such_frame"]}, "frames"),
        ({"frames": ["pelvis"]}, "site space"),
        ({"frames": {RIGHT: {"weight": 1.0}}}, "unknown costs"),
        ({"frames": {RIGHT: 3}}, "FrameCosts"),
        ({"contacts": ["no_such_frame"]}, "contacts"),
        ({"sole": (0.1, -0.1, 0.0, 0.1)}, "sole"),
        ({"com_cost": -1.0}, "com_cost"),
        ({"support_margin": -0.1}, "support_margin"),
        ({"priority_levels": [["frame", "hands"]]}, "unknown entry"),
        ({"priority_levels": [["frame"], ["posture"]], "com_cost": 1.0}, "leaves out"),
    ],
)
def test_bad_whole_body_arguments_are_refused(g1, kw, message) -> None:
    with pytest.raises(InputError, match=message):
        _controller(g1, **kw)


def test_convex_hull_and_edges() -> None:
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [1, 0.5]], dtype=float)
    hull = convex_hull(square)
    assert len(hull) == 4
    normals, offsets = polygon_edges(hull)
    assert np.all(normals @ [0.5, 0.5] <= offsets)
    assert np.any(normals @ [1.5, 0.5] > offsets)
    with pytest.raises(InputError):
        polygon_edges(hull[:2])


def test_a_fixed_base_robot_with_frames_reads_every_target(franka_robot) -> None:
    names = franka_robot.controlled_joint_names
    tool = franka_robot.tool_frame
    other = "panda_link7"
    controller = PinkIKController(
        franka_robot,
        names,
        [tool, other],
        dt=0.01,
        frames={other: FrameCosts(1.0, 0.0)},
        self_collision=False,
    )
    home = franka_robot.home_positions()
    state = RobotState(
        joints=JointState.from_name(names, positions=(names, [home[n] for n in names]))
    )
    assert controller.reset(state, None, 0.0)
    assert "whole-body" in controller.compiled_reason  # the compiled tick reads the tool only
