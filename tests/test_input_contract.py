"""Bad input is rejected at the boundary with a ValueError naming the argument, and leaves
the object as it was (constructors, loaders, setters, the simulation, the containers)."""

from __future__ import annotations

import shutil

import numpy as np
import pinocchio as pin
import pytest
from pink.tasks import FrameTask, PostureTask

import pinkctl.core.robot.loader as robot_module
from pinkctl import (
    ChainedController,
    CombinedController,
    GripperController,
    IKSolver,
    MujocoSimulation,
    PinkIKController,
    SelectableController,
    find_ik,
    load_pink_supported_robot,
)
from pinkctl.core.state import JointState, RobotState, SpatialState

DT = 0.002


@pytest.fixture(scope="module")
def franka():
    return load_pink_supported_robot("franka")


def make(robot, **kwargs):
    arguments = {"dt": DT, **kwargs}
    return PinkIKController(robot, robot.joint_names, [robot.tool_frame], **arguments)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"extra_tasks": [1]}, "extra_tasks"),
        ({"extra_tasks": [None]}, "extra_tasks"),
        ({"extra_tasks": "abc"}, "extra_tasks"),
        ({"extra_tasks": [FrameTask("no_such_frame", 1.0, 1.0)]}, "no_such_frame"),
        ({"extra_limits": [PostureTask(cost=1.0)]}, "extra_limits"),
        ({"extra_barriers": [3]}, "extra_barriers"),
        ({"pre_step_callback": 3}, "pre_step_callback"),
        ({"solver_options": {"junk": 1}}, "junk"),
        ({"solver_options": ["eps_abs"]}, "solver_options"),
        ({"position_cost": 1e300}, "position_cost"),
        ({"orientation_cost": [1.0, 1e300, 1.0]}, "orientation_cost"),
        ({"posture_cost": 1e300}, "posture_cost"),
        ({"damping": 1e300}, "damping"),
        ({"lm_damping": float("inf")}, "lm_damping"),
        ({"gain": "1"}, "gain"),
        ({"gain": 0.0}, "gain"),
        ({"gain": 1.5}, "gain"),
        ({"dt": None}, "dt"),
        ({"dt": True}, "dt"),
        ({"dt": 5e-324}, "dt"),
        ({"dt": 1e300}, "dt"),
        ({"dt": "0.002"}, "dt"),
        ({"tool_frame": 3}, "tool_frame"),
        ({"solver": 3}, "solver"),
        ({"fallback_solver": "nope"}, "fallback_solver"),
        ({"qp_path": "numpy"}, "qp_path"),
        ({"integrate_from": "sometimes"}, "integrate_from"),
        ({"configuration_limit_gain": 2.0}, "configuration_limit_gain"),
        ({"motion_limits": "yes"}, "motion_limits"),
    ],
)
def test_controller_constructor_rejects(franka, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make(franka, **kwargs)


def test_controller_rejects_bad_spaces(franka):
    with pytest.raises(ValueError, match="robot_joint_space"):
        PinkIKController(franka, "panda_joint1", [franka.tool_frame], dt=DT)
    with pytest.raises(ValueError, match="robot_site_space"):
        PinkIKController(franka, franka.joint_names, [franka.tool_frame, 3], dt=DT)
    with pytest.raises(ValueError, match="pink_robot"):
        PinkIKController("franka", franka.joint_names, [franka.tool_frame], dt=DT)


def _state(robot):
    names = robot.joint_names
    positions = np.array([robot.home_positions()[n] for n in names])
    return RobotState(joints=JointState.from_name(names, positions=(names, positions)))


def _target(robot, offset):
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    pose = data.oMf[robot.model.getFrameId(robot.tool_frame)]
    quat = pin.Quaternion(pose.rotation)
    frame = robot.tool_frame
    return RobotState(
        sites=SpatialState.from_name(
            [frame],
            positions=([frame], (pose.translation + offset).reshape(1, 3)),
            orientations=([frame], np.array([[quat.w, quat.x, quat.y, quat.z]])),
        )
    )


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        ("solver", "garbage"),
        ("solver", None),
        ("fallback_solver", "garbage"),
        ("qp_path", "numpy"),
        ("integrate_from", "sometimes"),
        ("damping", -1.0),
        ("damping", "0"),
        ("solver_options", {"junk": 1}),
        ("pre_step_callback", "not callable"),
    ],
)
def test_run_time_settings_are_validated_and_leave_the_controller_as_it_was(
    franka, attribute, value
):
    controller, reference = make(franka), make(franka)
    before = getattr(controller, attribute)
    est, target = _state(franka), _target(franka, [0.05, 0.0, 0.0])
    assert controller.reset(est, None, 0.0) and reference.reset(est, None, 0.0)
    with pytest.raises(ValueError, match=attribute):
        setattr(controller, attribute, value)
    assert getattr(controller, attribute) == before
    for k in range(5):
        a = controller.forward(est, target, k * DT)
        b = reference.forward(est, target, k * DT)
        np.testing.assert_array_equal(a.joints.data_array, b.joints.data_array)


def test_run_time_settings_take_effect(franka):
    controller = make(franka)
    controller.solver = "quadprog"
    controller.fallback_solver = "daqp"
    controller.damping = 1e-6
    controller.integrate_from = "command"
    assert (controller.solver, controller.fallback_solver) == ("quadprog", "daqp")
    est, target = _state(franka), _target(franka, [0.05, 0.0, 0.0])
    assert controller.reset(est, None, 0.0)
    assert controller.forward(est, target, 0.0) is not None and controller.last_error is None


@pytest.mark.parametrize("container", [ChainedController, CombinedController])
def test_containers_reject_the_same_controller_twice(franka, container):
    ik = make(franka)
    with pytest.raises(ValueError, match="same PinkIKController"):
        container([ik, ik])
    other = make(franka)
    nested = CombinedController(
        [
            ik,
            GripperController(
                franka.joint_names,
                joint="panda_finger_joint1",
                open_position=0.04,
                closed_position=0.0,
                speed=0.1,
            ),
        ]
    )
    with pytest.raises(ValueError, match="same PinkIKController"):
        container([nested, ik])
    selectable = SelectableController({"a": ik, "b": other}, "a")
    with pytest.raises(ValueError, match="same PinkIKController"):
        container([selectable, other])
    assert container([ik, other]) is not None  # two instances are fine


# ---------------------------------------------------------------------- robot files


@pytest.fixture
def robot_folder(tmp_path, monkeypatch):
    """A copy of the bundled franka in a temporary robot_configurations folder."""
    root = tmp_path / "robots"
    shutil.copytree(robot_module.robot_configurations_dir() / "franka", root / "franka")
    monkeypatch.setattr(robot_module, "robot_configurations_dir", lambda: root)
    return root / "franka"


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("value", ["-2.175", "nan", "inf", "0.0", '"fast"', "true"])
def test_robot_toml_velocity_limits_are_checked(robot_folder, value):
    _edit(robot_folder / "robot.toml", "panda_joint1 = 2.175", f"panda_joint1 = {value}")
    with pytest.raises(ValueError, match="velocity of 'panda_joint1'"):
        load_pink_supported_robot("franka")


@pytest.mark.parametrize(
    ("section", "old", "new", "match"),
    [
        ("mujoco.kp", "panda_joint1 = 4500.0", "panda_joint1 = -100.0", "mujoco.kp"),
        ("mujoco.kp", "panda_joint1 = 4500.0", "panda_joint1 = nan", "mujoco.kp"),
        ("limits.acceleration", "panda_joint1 = 15.0", "panda_joint1 = 0", "acceleration"),
        ("limits.jerk", "panda_joint1 = 7500.0", "panda_joint1 = -1", "jerk"),
        ("home", "panda_joint2 = -0.785", "panda_joint2 = nan", "home"),
        ("home", "panda_joint2 = -0.785", "panda_joint2 = 1e300", "home"),
        ("home", "panda_joint2 = -0.785", "panda_joint2 = 3.0", "outside its range"),
        ("tool_frame", 'tool_frame = "panda_hand_tcp"', "tool_frame = 3", "tool_frame"),
        ("urdf", 'urdf = "robot.urdf"', 'urdf = "../../../etc/passwd"', "outside"),
        ("srdf", 'srdf = "robot.srdf"', 'srdf = "/etc/passwd"', "outside"),
    ],
)
def test_robot_toml_values_are_checked(robot_folder, section, old, new, match):
    _edit(robot_folder / "robot.toml", old, new)
    with pytest.raises(ValueError, match=match):
        load_pink_supported_robot("franka")


def test_robot_toml_controlled_joints_must_be_a_list(robot_folder):
    text = (robot_folder / "robot.toml").read_text()
    start = text.index("controlled_joints = [")
    end = text.index("]", start) + 1
    (robot_folder / "robot.toml").write_text(
        text[:start] + 'controlled_joints = "panda_joint1"' + text[end:]
    )
    with pytest.raises(ValueError, match="controlled_joints"):
        load_pink_supported_robot("franka")


@pytest.mark.parametrize("value", ["nan", "1e300", "", "inf", "abc"])
def test_srdf_home_values_are_checked(robot_folder, value):
    """The SRDF's home state is checked when loaded, even when robot.toml gives the home."""
    srdf = robot_folder / "robot.srdf"
    text = srdf.read_text()
    start = text.index('<joint name="panda_joint2" value="')
    end = text.index('"', start + len('<joint name="panda_joint2" value="'))
    srdf.write_text(text[:start] + f'<joint name="panda_joint2" value="{value}' + text[end:])
    with pytest.raises(ValueError, match="panda_joint2"):
        load_pink_supported_robot("franka")


# ---------------------------------------------------------------------- simulation


@pytest.fixture(scope="module")
def sim(franka):
    return MujocoSimulation.from_robot(franka)


def test_sim_reset_rejects_non_finite_values_and_changes_nothing(sim):
    sim.reset()
    sim.step(10)
    before = sim.data.qpos.copy(), sim.time
    for bad in ({"panda_joint1": float("nan")}, {"panda_joint1": "0.1"}, {"nope": 0.0}):
        with pytest.raises(ValueError):
            sim.reset(bad)
    np.testing.assert_array_equal(sim.data.qpos, before[0])
    assert sim.time == before[1]


@pytest.mark.parametrize(
    ("position", "quaternion"),
    [
        ([float("nan"), 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]),
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]),
        ([0.0, 0.0, 0.0], [float("inf"), 0.0, 0.0, 0.0]),
        ([0.0, 0.0], [1.0, 0.0, 0.0, 0.0]),
    ],
)
def test_target_marker_rejects_bad_poses(sim, position, quaternion):
    before = sim.data.mocap_pos.copy(), sim.data.mocap_quat.copy()
    with pytest.raises(ValueError):
        sim.set_target_marker(position, quaternion)
    np.testing.assert_array_equal(sim.data.mocap_pos, before[0])
    np.testing.assert_array_equal(sim.data.mocap_quat, before[1])


def test_target_marker_normalises_the_quaternion(sim):
    sim.set_target_marker([0.1, 0.2, 0.3], [2.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(sim.data.mocap_quat[0], [1.0, 0.0, 0.0, 0.0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kp": -100.0}, "kp"),
        ({"kp": float("nan")}, "kp"),
        ({"kv": -1.0}, "kv"),
        ({"timestep": 0.0}, "timestep"),
        ({"timestep": True}, "timestep"),
        ({"spec_callback": 3}, "spec_callback"),
    ],
)
def test_simulation_rejects_bad_settings(franka, kwargs, match):
    with pytest.raises(ValueError, match=match):
        MujocoSimulation.from_robot(franka, **kwargs)


# ---------------------------------------------------------------------- IK callbacks


def test_find_ik_validate_callback_that_raises_is_a_rejection(franka):
    solver = IKSolver(franka)
    data = franka.model.createData()
    pin.framesForwardKinematics(franka.model, data, franka.q0)
    target = data.oMf[franka.model.getFrameId(franka.tool_frame)]
    target = pin.SE3(target.rotation, target.translation + np.array([0.05, 0.0, 0.0]))

    def validate(q):
        raise RuntimeError("collision checker offline")

    result = solver.find(target, validate=validate, max_restarts=3, time_budget_ms=None)
    assert not result.success
    assert "collision checker offline" in result.reason
    # the module-level entry point too
    result = find_ik(franka, target, validate=validate, max_restarts=3, time_budget_ms=None)
    assert not result.success and "validate raised RuntimeError" in result.reason
