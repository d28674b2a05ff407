"""Robots pinkctl did not write: raw description files with a configuration, no configuration
at all, MJCF files, floating bases, and the errors a user meets on the way."""

from __future__ import annotations

import importlib.metadata
import shutil
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from pink.tasks import FrameTask

from pinkctl import (
    ControllerStatus,
    JointState,
    MujocoSimulation,
    PinkIKController,
    RobotState,
    RootState,
    SpatialState,
    World,
    find_ik,
    load_pink_robot,
    load_pink_supported_robot,
)
from pinkctl.core.robot import MeshNotFoundError, resolve_frame
from pinkctl.core.robot.meshes import mujoco_readable
from pinkctl.errors import PinkctlWarning

ERD = Path(
    str(
        importlib.metadata.distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data/robots"
        )
    )
)


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PinkctlWarning)
        return function(*args, **kwargs)


def _tool_pose(robot, q=None):
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0 if q is None else q)
    return data.oMf[robot.model.getFrameId(robot.tool_frame)].copy()


def _reach(sim, controller, frame, goal, seconds=3.0, orientation=None):
    """Closed loop toward ``goal``; returns the final position error [m]."""
    sites = {"positions": ([frame], goal.reshape(1, 3))}
    if orientation is not None:
        sites["orientations"] = ([frame], np.reshape(orientation, (1, 4)))
    setpoint = RobotState(sites=SpatialState.from_name([frame], **sites))
    assert controller.reset(sim.get_robot_state(), None, 0.0)
    for k in range(int(seconds / sim.timestep)):
        out = controller.forward(sim.get_robot_state(), setpoint, k * sim.timestep)
        assert out is not None and controller.status is ControllerStatus.OK
        sim.apply(out)
        sim.step()
    return float(np.linalg.norm(sim.get_site_pose(frame)[0] - goal))


# ---------------------------------------------------------------------- raw files + config


def test_raw_urdf_with_srdf_and_a_config_written_here(tmp_path):
    """The UR5 from its raw URDF plus a TOML written in the test: loads, simulates, tracks."""
    config = tmp_path / "ur5.toml"
    urdf = ERD / "ur_description/urdf/ur5_robot.urdf"
    config.write_text(
        f'name = "my_ur5"\nurdf = "{urdf}"\ntool_frame = "tool0"\n'
        "[home]\nshoulder_lift_joint = -1.57\nelbow_joint = 1.57\nwrist_1_joint = -1.57\n"
        "wrist_2_joint = -1.57\n"
        "[limits]\nacceleration = 4.0\njerk = 200.0\n"
    )
    robot = load_pink_robot(config)
    assert robot.name == "my_ur5" and robot.tool_frame == "tool0"
    assert robot.acceleration_limits and robot.jerk_limits
    assert (
        robot.inferred["controlled joints"] == "the chain from the root to the tool frame 'tool0'"
    )
    assert len(robot.controlled_joint_names) == 6
    sim = MujocoSimulation.from_robot(robot)
    controller = PinkIKController(robot, sim.joint_names, sim.site_names, dt=sim.timestep)
    start = sim.get_site_pose("tool0")
    error = _reach(sim, controller, "tool0", start[0] + [0.05, -0.05, 0.05], orientation=start[1])
    assert error < 1e-4


def test_config_as_a_dict_and_keyword_overrides():
    robot = load_pink_robot(
        ERD / "panda_description/urdf/panda.urdf",
        srdf_path=ERD / "panda_description/srdf/panda.srdf",
        config={"limits": {"acceleration": 10.0, "jerk": 5000.0}},
        tool_frame="panda_hand",
        home={"panda_joint4": -2.0, "panda_joint6": 1.5},
    )
    assert robot.tool_frame == "panda_hand"
    assert robot.home_positions()["panda_joint4"] == -2.0
    assert robot.acceleration_limits["panda_joint1"] == 10.0
    assert robot.gripper_joint_names == ["panda_finger_joint1"]


@pytest.mark.parametrize(
    ("file", "tool", "joints"),
    [
        ("ur_description/urdf/ur5_robot.urdf", "tool0", 6),
        ("ur_description/urdf/ur10_robot.urdf", "tool0", 6),
        ("xarm_description/urdf/xarm7.urdf", "link_eef", 7),
        ("kinova_description/robots/kinova.urdf", "j2s6s200_end_effector", 6),
        ("panda_description/urdf/panda.urdf", "panda_hand_tcp", 7),
        ("so_arm_description/urdf/so101.urdf", "gripper_frame_link", 5),
        ("z1_description/urdf/z1.urdf", "gripperStator", 6),
        # a finger robot: every joint named like a gripper, yet they are the chain
        ("finger_edu_description/robots/finger_edu.urdf", "finger_tip_link", 3),
    ],
)
def test_single_chain_arms_need_no_config(file, tool, joints):
    """Inference picks the tool frame (the tip, named like a tool when several end the
    chain) and the chain's joints (gripper joints apart), and says so."""
    with pytest.warns(PinkctlWarning, match="acceleration and jerk limits inferred"):
        robot = load_pink_robot(ERD / file)
    assert robot.tool_frame == tool
    assert len(robot.controlled_joint_names) == joints
    assert "tool frame" in robot.inferred and "controlled joints" in robot.inferred
    assert "home" in robot.inferred
    # no acceleration limits in these descriptions: inferred from their effort limits
    assert "effort limit" in robot.inferred["motion limits"]
    assert set(robot.acceleration_limits) == set(robot.controlled_joint_names)
    assert set(robot.jerk_limits) == set(robot.controlled_joint_names)
    assert "inferred tool frame" in robot.report()


def test_tree_without_config_lists_its_tips():
    with pytest.raises(ValueError, match="tips") as info:
        _quiet(load_pink_robot, ERD / "g1_description/urdf/g1_29dof_rev_1_0.urdf")
    assert "left_wrist_yaw_joint" in str(info.value) and "right_ankle_roll_joint" in str(info.value)


def test_srdf_planning_group_names_the_controlled_joints(tmp_path):
    srdf = tmp_path / "ur5.srdf"
    srdf.write_text(
        '<robot name="ur5"><group name="manipulator">'
        '<chain base_link="base_link" tip_link="tool0"/></group>'
        '<group_state name="ready" group="manipulator">'
        '<joint name="shoulder_lift_joint" value="-1.2"/><joint name="elbow_joint" value="1.0"/>'
        "</group_state></robot>"
    )
    robot = _quiet(
        load_pink_robot,
        ERD / "ur_description/urdf/ur5_robot.urdf",
        srdf_path=srdf,
        config={"planning_group": "manipulator"},
    )
    assert len(robot.controlled_joint_names) == 6
    assert robot.inferred["home"] == "SRDF group_state 'ready'"
    assert robot.home_positions()["elbow_joint"] == 1.0


# ---------------------------------------------------------------------- MJCF

MJCF = """<mujoco model="ballarm">
  <compiler angle="radian"/>
  <worldbody>
    <body name="base" pos="0.1 0 0.1">
      <geom type="cylinder" size="0.05 0.05"/>
      <body name="link1" pos="0 0 0.1">
        <joint name="yaw" type="hinge" axis="0 0 1" range="-3 3"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.03"/>
        <body name="link2" pos="0 0 0.3">
          <joint name="shoulder" type="ball"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.025"/>
          <body name="link3" pos="0.3 0 0">
            <joint name="elbow" type="hinge" axis="0 1 0" range="-2.5 2.5"/>
            <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.02"/>
            <site name="tool" pos="0.25 0 0"/>
          </body>
        </body>
      </body>
    </body>
    <body name="cube" pos="0.5 0.3 0.05">
      <freejoint name="cube_free"/>
      <geom type="box" size="0.03 0.03 0.03"/>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.fixture
def mjcf_robot(tmp_path):
    path = tmp_path / "ballarm.xml"
    path.write_text(MJCF)
    return _quiet(
        load_pink_robot,
        path,
        controlled_joint_names=["yaw", "elbow"],
        tool_frame="tool",
        config={"limits": {"velocity": 2.0}},
    )


def test_mjcf_model_is_controlled_by_site_name(mjcf_robot):
    """The same MJCF for Pinocchio and MuJoCo (the root body's offset included): same FK;
    the arm (hinges; the ball held) reaches a target given at the site."""
    robot = mjcf_robot
    sim = MujocoSimulation.from_robot(robot)
    assert sim.site_names == ["tool"]
    assert _tool_pose(robot).translation == pytest.approx(sim.get_site_pose("tool")[0], abs=1e-12)
    controller = PinkIKController(
        robot, sim.joint_names, sim.site_names, dt=sim.timestep, orientation_cost=0.0
    )
    q = robot.q0.copy()
    q[[0, 5]] = 0.3, 0.4  # yaw, elbow (the ball joint's quaternion sits between them)
    goal = _tool_pose(robot, q).translation
    assert _reach(sim, controller, "tool", goal) < 1e-4


def test_ik_through_the_ball_joint_converges_on_unit_quaternions(mjcf_robot):
    robot = mjcf_robot
    model, data = robot.model, robot.model.createData()
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = pin.normalize(
            model, pin.randomConfiguration(model, -2 * np.ones(model.nq), 2 * np.ones(model.nq))
        )
        pin.framesForwardKinematics(model, data, q)
        target = data.oMf[model.getFrameId("tool")].copy()
        result = find_ik(
            robot,
            target,
            frame="tool",
            joint_names=["yaw", "shoulder", "elbow"],
            time_budget_ms=None,
            max_restarts=20,
            rng=rng,
            world=World(),  # random targets: some configurations collide
            self_collision=False,
        )
        assert result.success
        ball = result.q_full[1:5]
        assert np.linalg.norm(ball) == pytest.approx(1.0, abs=1e-12)
        assert _tool_pose(robot, result.q_full).isApprox(target, 1e-4)


# ---------------------------------------------------------------------- floating base


@pytest.mark.parametrize("name", ["g1", "talos"])
def test_floating_base_humanoid_holds_feet_and_reaches_with_a_hand(name):
    feet = {
        "g1": ("left_ankle_roll_link", "right_ankle_roll_link"),
        "talos": ("leg_left_6_link", "leg_right_6_link"),
    }[name]
    base = _quiet(load_pink_supported_robot, name)
    body = [
        n
        for n in base.joint_names
        if "right" not in n or any(k in n for k in ("leg", "hip", "knee", "ankle"))
    ]
    robot = _quiet(load_pink_supported_robot, name, floating_base=True, controlled_joint_names=body)
    assert robot.floating_base and robot.model.nq == base.model.nq + 7
    names = robot.joint_names
    tasks = [FrameTask(f, position_cost=100.0, orientation_cost=100.0) for f in feet]
    controller = PinkIKController(
        robot, names, [robot.tool_frame], dt=0.01, extra_tasks=tasks, integrate_from="command"
    )
    q = np.array([robot.home_positions()[n] for n in names])
    root = RootState(position=robot.q0[:3], orientation=np.array([robot.q0[6], *robot.q0[3:6]]))
    assert controller.reset(
        RobotState(joints=JointState.from_name(names, positions=(names, q)), root=root), None, 0.0
    )
    for task in tasks:
        task.set_target_from_configuration(controller.configuration)
    feet0 = [controller.configuration.get_transform_frame_to_world(f).copy() for f in feet]
    hand = controller.configuration.get_transform_frame_to_world(robot.tool_frame)
    goal = hand.translation + np.array([0.25, 0.1, -0.15])
    frame = robot.tool_frame
    setpoint = RobotState(
        sites=SpatialState.from_name([frame], positions=([frame], goal.reshape(1, 3)))
    )
    for k in range(400):
        state = RobotState(joints=JointState.from_name(names, positions=(names, q)), root=root)
        out = controller.forward(state, setpoint, k * 0.01)
        assert out is not None and controller.status is ControllerStatus.OK
        q[out.joints.position_indices] = out.joints.positions
        root = out.root
    configuration = controller.configuration
    assert (
        np.linalg.norm(configuration.get_transform_frame_to_world(frame).translation - goal) < 1e-3
    )
    for foot, start in zip(feet, feet0):  # held by a soft task: within half a millimetre
        moved = start.actInv(configuration.get_transform_frame_to_world(foot))
        assert np.linalg.norm(moved.translation) < 5e-4
        assert np.linalg.norm(pin.log3(moved.rotation)) < 2e-3
    assert np.linalg.norm(root.position - robot.q0[:3]) > 0.05  # the base moved to reach


def test_floating_base_ik_moves_the_base():
    robot = _quiet(load_pink_supported_robot, "g1", floating_base=True)
    target = _tool_pose(robot)
    target.translation += np.array([0.3, 0.0, 0.2])  # beyond the arm's reach from the pelvis
    result = find_ik(robot, target, time_budget_ms=None, max_restarts=10)
    assert result.success
    assert np.linalg.norm(result.q_full[:3]) > 0.01
    assert np.linalg.norm(result.q_full[3:7]) == pytest.approx(1.0, abs=1e-12)


# ---------------------------------------------------------------------- errors


def test_missing_mesh_names_the_uri_and_the_folders_tried(tmp_path):
    urdf = tmp_path / "robot.urdf"
    urdf.write_text(
        '<robot name="r"><link name="base"><visual><geometry>'
        '<mesh filename="package://nowhere_pkg/meshes/base.stl"/></geometry></visual></link></robot>'
    )
    with pytest.raises(MeshNotFoundError) as info:
        load_pink_robot(urdf, controlled_joint_names=[])
    message = str(info.value)
    assert "package://nowhere_pkg/meshes/base.stl" in message and str(tmp_path) in message


def test_config_with_unknown_joints_or_frames_suggests_close_names():
    urdf = ERD / "ur_description/urdf/ur5_robot.urdf"
    with pytest.raises(ValueError, match="close names") as info:
        _quiet(load_pink_robot, urdf, controlled_joint_names=["shoulder_pan", "elbow_joint"])
    assert "shoulder_pan_joint" in str(info.value)
    with pytest.raises(ValueError, match="tool_frame 'tool_0'.*close names.*tool0"):
        _quiet(load_pink_robot, urdf, tool_frame="tool_0")
    with pytest.raises(ValueError, match="unknown keys"):
        _quiet(load_pink_robot, urdf, config={"tool": "tool0"})


TWO_TIPS = """<robot name="two_tips">
  <link name="base"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <link name="l1"/>
  <joint name="fa" type="fixed"><parent link="l1"/><child link="left_mount"/>
    <origin xyz="0.1 0.1 0"/></joint>
  <link name="left_mount"/>
  <joint name="fb" type="fixed"><parent link="l1"/><child link="right_mount"/>
    <origin xyz="0.1 -0.1 0"/></joint>
  <link name="right_mount"/>
</robot>
"""


def test_ambiguous_frames_list_their_candidates(tmp_path):
    xml = MJCF.replace('<site name="tool" pos="0.25 0 0"/>', '<site name="link3" pos="0.25 0 0"/>')
    path = tmp_path / "ambiguous.xml"
    path.write_text(xml)
    robot = _quiet(
        load_pink_robot, path, controlled_joint_names=["yaw", "elbow"], tool_frame="base"
    )
    with pytest.raises(ValueError, match="ambiguous.*BODY.*OP_FRAME"):
        resolve_frame(robot.model, "link3")
    urdf = tmp_path / "two_tips.urdf"
    urdf.write_text(TWO_TIPS)
    with pytest.raises(ValueError, match="cannot infer the tool frame.*left_mount.*right_mount"):
        _quiet(load_pink_robot, urdf)
    assert _quiet(load_pink_robot, urdf, tool_frame="left_mount").tool_frame == "left_mount"


def test_a_link_and_a_joint_sharing_a_name_resolve_to_the_link():
    robot = load_pink_supported_robot("z1")
    model = robot.model
    frame = model.frames[resolve_frame(model, "gripperStator")]
    assert frame.type == pin.FrameType.BODY
    assert model.existFrame("gripperStator_joint")
    assert find_ik(robot, _tool_pose(robot), frame="gripperStator").success


def test_unreadable_mesh_gets_a_box_stand_in_with_a_warning(tmp_path):
    broken = tmp_path / "broken.dae"
    broken.write_text("this is not a collada file")
    with pytest.warns(UserWarning, match="broken.dae"):
        stand_in = mujoco_readable(broken, cache=tmp_path / "cache")
    assert stand_in.suffix == ".stl" and stand_in.stat().st_size > 0
    assert not list((tmp_path / "cache").glob("*.part"))  # nothing half-written


def test_loading_errors_leave_no_cache_behind(tmp_path, monkeypatch):
    """A failed load converts nothing half-way: the cache holds whole files only."""
    monkeypatch.setenv("PINKCTL_CACHE", str(tmp_path))
    folder = tmp_path / "robot"
    shutil.copytree(ERD / "kinova_description", folder / "kinova_description")
    urdf = folder / "kinova_description/robots/kinova.urdf"
    text = urdf.read_text().replace("base.dae", "missing_base.dae", 1)
    urdf.write_text(text)
    with pytest.raises(MeshNotFoundError):
        _quiet(load_pink_robot, urdf)
    assert not list(tmp_path.rglob("*.part"))


def test_zero_range_joint_is_locked_for_every_layer(tmp_path):
    """lower = upper: a fixed joint at that value for Pinocchio, the controller and MuJoCo."""
    text = (ERD / "ur_description/urdf/ur5_robot.urdf").read_text()
    start = text.index('<joint name="wrist_3_joint"')
    limit = text.index("<limit", start)
    end = text.index("/>", limit) + 2
    text = (
        text[:limit] + '<limit effort="28.0" lower="0.5" upper="0.5" velocity="3.2"/>' + text[end:]
    )
    urdf = tmp_path / "ur5_locked.urdf"
    urdf.write_text(text.replace("package://example-robot-data/robots/", str(ERD) + "/"))
    with pytest.warns(UserWarning, match="locked"):
        robot = load_pink_robot(urdf, tool_frame="tool0", controlled_joint_names=None)
    assert "wrist_3_joint" not in robot.joint_names
    assert len(robot.controlled_joint_names) == 5
    sim = MujocoSimulation.from_robot(robot)
    assert "wrist_3_joint" not in sim.joint_names
    assert _tool_pose(robot).translation == pytest.approx(sim.get_site_pose("tool0")[0], abs=1e-12)


def _with_bad_inertias(tmp_path, links):
    """The UR5 with ``links`` given a zero inertia tensor (MuJoCo rejects it)."""
    text = (ERD / "ur_description/urdf/ur5_robot.urdf").read_text()
    for link in links:
        start = text.index(f'<link name="{link}"')
        inertia = text.index("<inertia ", start)
        end = text.index("/>", inertia) + 2
        text = (
            text[:inertia]
            + '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>'
            + text[end:]
        )
    urdf = tmp_path / "ur5_bad_inertia.urdf"
    urdf.write_text(text.replace("package://example-robot-data/robots/", str(ERD) + "/"))
    return urdf


def test_inertia_repairs_of_a_users_file_are_one_warning_per_load(tmp_path):
    """Three unphysical links: one warning naming all three (each repaired, each noted)."""
    links = ["upper_arm_link", "forearm_link", "wrist_1_link"]
    urdf = _with_bad_inertias(tmp_path, links)
    limits = {"limits": {"acceleration": 4.0, "jerk": 200.0}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = load_pink_robot(urdf, config=limits)
    repairs = [w for w in caught if "inertia" in str(w.message)]
    assert len(caught) == len(repairs) == 1
    message = str(repairs[0].message)
    assert "inertia of 3 link(s) repaired" in message and "inertia_repairs" in message
    assert all(repr(link) in message for link in links)
    assert sum("inertia of link" in note for note in robot.notes) == 3
    # declared in the configuration, the same repairs are silent (and still noted)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = load_pink_robot(urdf, config={**limits, "inertia_repairs": links})
    assert sum("inertia of link" in note for note in quiet.notes) == 3
    # only the undeclared ones are warned about
    with pytest.warns(PinkctlWarning, match="inertia of 1 link") as partly:
        load_pink_robot(urdf, config={**limits, "inertia_repairs": links[:2]})
    assert "'wrist_1_link'" in str(partly[0].message)
    assert "'forearm_link'" not in str(partly[0].message)


def test_inertia_repairs_naming_no_link_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"config: inertia_repairs: \['no_such_link'\] are not"):
        _quiet(
            load_pink_robot,
            ERD / "ur_description/urdf/ur5_robot.urdf",
            config={"inertia_repairs": ["no_such_link"]},
        )


# ---------------------------------------------------------------------- pinkctl inspect


def test_inspect_a_catalog_robot_and_a_raw_file(capsys):
    from pinkctl.app.cli import main

    assert main(["inspect", "z1", "--hold", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "tool frame: gripperStator" in out and "renamed 'gripperStator_joint'" in out
    assert "ready for a closed loop" in out
    assert main(["inspect", str(ERD / "xarm_description/urdf/xarm7.urdf"), "--hold", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "inferred tool frame" in out and "link_eef" in out


def test_inspect_says_in_one_line_why_a_robot_cannot_run(capsys):
    from pinkctl.app.cli import main

    status = main(["inspect", str(ERD / "g1_description/urdf/g1_29dof_rev_1_0.urdf")])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert status == 1 and len(lines) == 1 and "tips" in lines[0] and not captured.out
    assert main(["inspect", "no_such_robot.urdf"]) == 2  # a bad argument
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["pinkctl inspect: no_such_robot.urdf: no such file"]
    assert main(["inspect", "no_such_robot"]) == 2  # a name: the catalog is listed
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown robot 'no_such_robot': not a catalog robot" in err[0]
    assert "franka" in err[0]
