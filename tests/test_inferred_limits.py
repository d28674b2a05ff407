"""Acceleration and jerk limits inferred for a description without them
(:mod:`pinkctl.core.robot.acceleration`), and the closed loop they make possible."""

from __future__ import annotations

import importlib.metadata
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from motion_check import check_limits

from pinkctl import MujocoSimulation, PinkIKController, load_pink_robot, load_pink_supported_robot
from pinkctl.core.robot.acceleration import (
    ACCELERATION_RAMP,
    DEFAULT_RAMP_UP,
    FASTEST_RAMP_UP,
    SLOWEST_RAMP_UP,
    inertia_bound,
)
from pinkctl.core.state import RobotState, SpatialState
from pinkctl.errors import PinkctlWarning

ROBOTS = Path(
    str(
        importlib.metadata.distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data/robots"
        )
    )
)
DT = 0.002
#: The PR2's right arm away from its body: where the loop starts, and the target's configuration.
START = [-0.9, 0.0, -1.0, -1.0, 0.0, -1.0, 0.0]
TARGET = [-1.2, -0.2, -1.5, -0.6, 1.0, -1.2, 0.5]


def pr2():
    """The PR2 with its right arm controlled; its description has velocity limits only."""
    folder = ROBOTS / "pr2_description"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # links in contact at home, inertia repairs
        return load_pink_robot(
            folder / "urdf" / "pr2.urdf",
            srdf_path=folder / "srdf" / "pr2.srdf",
            config={"planning_group": "right_arm", "tool_frame": "r_gripper_tool_frame"},
        )


def _configuration(robot, values):
    """The full configuration with the controlled joints at ``values`` (continuous joints
    as (cos, sin))."""
    model, q = robot.model, robot.q0.copy()
    for name, x in zip(robot.controlled_joint_names, values, strict=True):
        joint = model.joints[model.getJointId(name)]
        q[joint.idx_q : joint.idx_q + joint.nq] = [np.cos(x), np.sin(x)] if joint.nq == 2 else [x]
    return q


def test_a_description_without_acceleration_limits_gets_them():
    robot = pr2()
    names = robot.controlled_joint_names
    assert set(robot.acceleration_limits) == set(names) == set(robot.jerk_limits)
    for name in names:
        v, a = robot.velocity_limits[name], robot.acceleration_limits[name]
        assert v / SLOWEST_RAMP_UP <= a <= v / FASTEST_RAMP_UP
        assert robot.jerk_limits[name] == pytest.approx(a / ACCELERATION_RAMP)
    # the shoulder moves the whole arm on 30 N m: slower than the wrist on 10 N m
    assert robot.acceleration_limits["r_shoulder_pan_joint"] < 5.0
    assert robot.acceleration_limits["r_wrist_roll_joint"] > 10.0
    assert "effort limit" in robot.inferred["motion limits"]
    assert "inferred motion limits" in robot.report()


def test_configured_limits_win():
    robot = load_pink_supported_robot("franka")
    assert robot.acceleration_limits["panda_joint2"] == 7.5
    assert robot.jerk_limits["panda_joint2"] == 3750.0
    assert "motion limits" not in robot.inferred


@pytest.mark.parametrize(
    ("folder", "file"),
    [("pr2_description", "urdf/pr2.urdf"), ("ur_description", "urdf/ur5_robot.urdf")],
)
def test_the_inertia_bound_holds_everywhere(folder, file):
    """No configuration makes a joint carry more than :func:`inertia_bound` says."""
    robot = pr2() if folder == "pr2_description" else load_pink_robot(ROBOTS / folder / file)
    model, data = robot.model, robot.model.createData()
    joints = [model.getJointId(n) for n in robot.controlled_joint_names]
    bound = np.array([inertia_bound(model, j) for j in joints])
    dofs = [model.joints[j].idx_v for j in joints]
    rng = np.random.default_rng(0)
    largest = np.zeros(len(joints))
    for _ in range(200):
        q = _configuration(robot, rng.uniform(-np.pi, np.pi, len(joints)))
        largest = np.maximum(largest, np.diag(pin.crba(model, data, q))[dofs])
    assert np.all(largest <= bound)
    assert np.all(bound < 3.0 * largest)  # and not uselessly loose where the arm reaches out


def test_a_joint_without_effort_limit_gets_the_default(tmp_path):
    urdf = tmp_path / "arm.urdf"
    link = (
        '<link name="{0}"><inertial><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
    )
    joint = (
        '<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/>'
        '<origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>'
        '<limit lower="-2" upper="2" effort="{3}" velocity="{4}"/></joint>'
    )
    urdf.write_text(
        '<robot name="arm">'
        + "".join(link.format(n) for n in ("base", "upper", "lower"))
        + joint.format("j1", "base", "upper", 20, 30.0)
        + joint.format("j2", "upper", "lower", 0, 1.5)
        + "</robot>"
    )
    with pytest.warns(PinkctlWarning, match=r"joints \['j2'\] have no effort limit"):
        robot = load_pink_robot(urdf)
    assert robot.acceleration_limits["j2"] == pytest.approx(1.5 / DEFAULT_RAMP_UP)
    # j1: half its 20 N m over the two links it swings (each 0.01 kg m^2 about its centre,
    # the second one 0.3 m out), below full speed (30 rad/s) in FASTEST_RAMP_UP
    expected = 0.5 * 20.0 / (0.01 + 0.01 + 1.0 * 0.3**2)
    assert expected < 30.0 / FASTEST_RAMP_UP
    assert robot.acceleration_limits["j1"] == pytest.approx(expected)


def test_the_pr2_arm_follows_its_commands_in_mujoco(monkeypatch):
    """The default controller (integrating from the measurement) on the PR2's arm in
    MuJoCo: without acceleration limits its commands flipped between the velocity limits
    every few ticks and the arm fell up to 1 rad behind them; with the inferred limits every
    command holds the four limits and the arm stays within 0.02 rad of them."""
    monkeypatch.setenv("PINKCTL_DEBUG", "1")
    robot = pr2()
    sim = MujocoSimulation.from_robot(robot)
    names = list(robot.controlled_joint_names)
    sim.reset(dict(zip(names, START, strict=True)))
    controller = PinkIKController(robot, sim.joint_names, sim.site_names, dt=DT)
    assert controller.shaper.limits.acceleration is not None
    frame = robot.tool_frame
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, _configuration(robot, TARGET))
    pose = data.oMf[robot.model.getFrameId(frame)]
    rotation = pin.Quaternion(pose.rotation)
    setpoint = RobotState(
        sites=SpatialState.from_name(
            [frame],
            positions=([frame], pose.translation.reshape(1, 3)),
            orientations=([frame], np.array([[rotation.w, rotation.x, rotation.y, rotation.z]])),
        )
    )
    assert controller.reset(sim.get_robot_state(), None, 0.0)
    index = [sim.joint_names.index(n) for n in controller.shaper.limits.joint_names]
    commands, lag = [controller.shaper.position.copy()], 0.0
    for k in range(600):
        state = sim.get_robot_state()
        desired = controller.forward(state, setpoint, k * DT)
        commands.append(controller.shaper.position.copy())
        lag = max(lag, float(np.max(np.abs(commands[-1] - state.joints.positions[index]))))
        sim.apply(desired)
        sim.step()
    check_limits(np.array(commands), controller.shaper.limits, DT)
    assert lag < 0.02
    velocity = np.diff(np.array(commands), axis=0) / DT
    assert not np.any(velocity[1:] * velocity[:-1] < -1.0)  # no tick-to-tick reversal
    assert np.linalg.norm(sim.get_site_pose(frame)[0] - pose.translation) < 5e-3
