"""Robots with branches (two arms, a head, legs): the tool frame names the chain to control, SRDF
planning groups resolve their nested references as the SRDF specification defines them, and a
setting that gives no joint to control is refused at load, naming the setting."""

from __future__ import annotations

import importlib.metadata
import warnings
from pathlib import Path

import pytest

from pinkctl import MujocoSimulation, load_pink_robot, load_pink_supported_robot
from pinkctl.app.cli import main
from pinkctl.errors import ConfigurationError, PinkctlWarning

ERD = Path(
    str(
        importlib.metadata.distribution("example-robot-data").locate_file(
            "cmeel.prefix/share/example-robot-data/robots"
        )
    )
)
BAXTER = ERD / "baxter_description/urdf/baxter.urdf"
PR2 = ERD / "pr2_description/urdf/pr2.urdf"
PR2_SRDF = ERD / "pr2_description/srdf/pr2.srdf"
ANYMAL_KINOVA = ERD / "anymal_b_simple_description/robots/anymal-kinova.urdf"

PR2_RIGHT_ARM = [
    "r_shoulder_pan_joint",
    "r_shoulder_lift_joint",
    "r_upper_arm_roll_joint",
    "r_elbow_flex_joint",
    "r_forearm_roll_joint",
    "r_wrist_flex_joint",
    "r_wrist_roll_joint",
]


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PinkctlWarning)
        return function(*args, **kwargs)


@pytest.mark.parametrize(
    ("urdf", "frame", "expected"),
    [
        (
            BAXTER,
            "right_gripper",
            ["right_s0", "right_s1", "right_e0", "right_e1", "right_w0", "right_w1", "right_w2"],
        ),
        (
            BAXTER,
            "left_gripper",
            ["left_s0", "left_s1", "left_e0", "left_e1", "left_w0", "left_w1", "left_w2"],
        ),
        (PR2, "r_gripper_tool_frame", ["torso_lift_joint", *PR2_RIGHT_ARM]),
        (ANYMAL_KINOVA, "j2s6s200_end_effector", [f"j2s6s200_joint_{i}" for i in range(1, 7)]),
    ],
)
def test_a_tool_frame_alone_names_the_chain_of_a_branched_robot(urdf, frame, expected):
    """Baxter (two arms, a head), PR2 (two arms, a head, a laser) and ANYmal with a Kinova arm
    (four legs, an arm): with the tool frame alone the chain from the root to it moves."""
    robot = _quiet(load_pink_robot, urdf, tool_frame=frame)
    assert robot.controlled_joint_names == expected
    assert robot.tool_frame == frame
    assert (
        robot.inferred["controlled joints"]
        == f"the chain from the root to the tool frame {frame!r}"
    )


def test_tool_frame_of_a_configuration_names_the_chain_too(tmp_path):
    config = tmp_path / "baxter.toml"
    config.write_text(f'urdf = "{BAXTER}"\ntool_frame = "left_gripper"\n')
    robot = _quiet(load_pink_robot, config)
    assert robot.controlled_joint_names[0] == "left_s0" and len(robot.controlled_joint_names) == 7
    # the gripper joint that hangs after the chain is found as on a single arm
    assert robot.gripper_joint_names == ["l_gripper_l_finger_joint"]


def test_a_branched_robot_follows_a_target_with_one_arm():
    """The chain found from the tool frame simulates and tracks: Baxter's right arm."""
    from pinkctl import PinkIKController, RobotState, SpatialState

    robot = _quiet(load_pink_robot, BAXTER, tool_frame="right_gripper")
    sim = _quiet(MujocoSimulation.from_robot, robot)
    controller = PinkIKController(
        robot, sim.joint_names, sim.site_names, dt=sim.timestep, integrate_from="command"
    )
    start, orientation = sim.get_site_pose("right_gripper")
    goal = start + [0.0, 0.05, 0.05]
    setpoint = RobotState(
        sites=SpatialState.from_name(
            ["right_gripper"],
            positions=(["right_gripper"], goal.reshape(1, 3)),
            orientations=(["right_gripper"], orientation.reshape(1, 4)),
        )
    )
    assert controller.reset(sim.get_robot_state(), None, 0.0)
    for k in range(1000):
        out = controller.forward(sim.get_robot_state(), setpoint, k * sim.timestep)
        assert out is not None
        assert set(out.joints.position_names) == set(robot.controlled_joint_names)
        sim.apply(out)
        sim.step()
    assert float(((sim.get_site_pose("right_gripper")[0] - goal) ** 2).sum() ** 0.5) < 1e-3


def test_a_tool_frame_on_the_root_is_refused_naming_the_setting():
    with pytest.raises(ConfigurationError, match="tool_frame 'torso'.*no joint moves it"):
        _quiet(load_pink_robot, BAXTER, tool_frame="torso")


# ---------------------------------------------------------------------- SRDF planning groups


def test_pr2_planning_group_right_arm_is_the_real_definition(tmp_path):
    """The PR2's SRDF references ``right_arm`` inside ``arms``; the reference must not replace
    the definition (today's bug: zero controlled joints)."""
    config = tmp_path / "robot.toml"
    config.write_text(
        f'urdf = "{PR2}"\nsrdf = "{PR2_SRDF}"\nplanning_group = "right_arm"\n'
        'tool_frame = "r_gripper_tool_frame"\n'
    )
    robot = _quiet(load_pink_robot, config)
    assert robot.controlled_joint_names == PR2_RIGHT_ARM
    assert robot.inferred["controlled joints"] == "SRDF planning group 'right_arm'"


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        # a group of references: each subgroup's joints, in order
        ("arms", [n.replace("r_", "l_", 1) for n in PR2_RIGHT_ARM] + PR2_RIGHT_ARM),
        # a group of <joint> entries
        ("torso", ["torso_lift_joint"]),
        # a group of <link> entries: the links' parent joints (fixed ones and mimics left out)
        ("right_gripper", ["r_gripper_l_finger_joint"]),
        # references nested two levels deep, a virtual joint left out
        (
            "whole_body",
            [n.replace("r_", "l_", 1) for n in PR2_RIGHT_ARM]
            + PR2_RIGHT_ARM
            + ["torso_lift_joint"],
        ),
    ],
)
def test_pr2_groups_resolve_as_the_srdf_specification_defines_them(group, expected):
    robot = _quiet(
        load_pink_robot,
        PR2,
        srdf_path=PR2_SRDF,
        config={"planning_group": group, "tool_frame": "r_gripper_tool_frame"},
    )
    assert robot.controlled_joint_names == expected


SRDF_LOOP = """<robot name="r">
  <group name="a"><group name="b"/></group>
  <group name="b"><group name="a"/></group>
  <group name="c"><group name="nowhere"/></group>
  <group name="d"><link name="torso"/></group>
</robot>
"""


@pytest.mark.parametrize(
    ("group", "message"),
    [
        ("a", "planning groups reference each other: a -> b -> a"),
        ("c", "no planning group 'nowhere' \\(referenced by group 'c'\\)"),
        ("missing", "no planning group 'missing'; groups: \\['a', 'b', 'c', 'd'\\]"),
        ("d", "planning_group 'd' .*gives no movable joint to control"),
    ],
)
def test_bad_planning_groups_name_the_file_and_the_group(tmp_path, group, message):
    srdf = tmp_path / "loop.srdf"
    srdf.write_text(SRDF_LOOP)
    with pytest.raises(ConfigurationError, match=message) as info:
        _quiet(load_pink_robot, BAXTER, srdf_path=srdf, config={"planning_group": group})
    assert "loop.srdf" in str(info.value)


# ---------------------------------------------------------------------- empty joint sets


@pytest.mark.parametrize(
    ("kwargs", "setting"),
    [
        ({"controlled_joint_names": []}, "controlled_joint_names gives no movable joint"),
        ({"config": {"controlled_joints": []}}, "config: controlled_joints gives no movable"),
    ],
)
def test_an_empty_set_of_controlled_joints_is_refused_naming_the_setting(kwargs, setting):
    with pytest.raises(ConfigurationError, match=setting):
        _quiet(load_pink_robot, BAXTER, tool_frame="right_gripper", **kwargs)


def test_a_catalog_override_with_no_joints_is_refused():
    with pytest.raises(ConfigurationError, match="controlled_joint_names gives no movable"):
        load_pink_supported_robot("franka", controlled_joint_names=[])


# ---------------------------------------------------------------------- the CLI


def test_inspect_takes_a_tool_frame_for_a_branched_robot(capsys):
    assert main(["inspect", str(BAXTER), "--tool-frame", "right_gripper", "--hold", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "controlled joints: right_s0, right_s1" in out
    assert out.strip().endswith("ready for a closed loop")


def test_inspect_of_an_empty_planning_group_is_one_line_naming_the_setting(tmp_path, capsys):
    config = tmp_path / "robot.toml"
    config.write_text(f'urdf = "{PR2}"\nsrdf = "{PR2_SRDF}"\nplanning_group = "base"\n')
    assert main(["inspect", str(config)]) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and not captured.out
    assert "planning_group 'base'" in lines[0] and "gives no movable joint" in lines[0]


def test_demo_takes_a_tool_frame_for_a_branched_robot(capsys):
    """``pinkctl demo`` on Baxter's right arm, named by its tool frame alone."""
    code = main(["demo", str(BAXTER), "--tool-frame", "right_gripper", "--duration", "1.5"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.splitlines()[0].startswith("pinkctl demo: baxter, figure8")
    assert captured.out.splitlines()[-1].startswith("passed:")


def test_demo_takes_the_controlled_joints(capsys):
    """``--controlled-joints`` moves the joints named (Baxter's left arm, its gripper's frame)."""
    from pinkctl.app.demo import DemoConfig, run_demo

    joints = ["left_s0", "left_s1", "left_e0", "left_e1", "left_w0", "left_w1", "left_w2"]
    code = main(
        [
            "demo",
            str(BAXTER),
            "--tool-frame",
            "left_gripper",
            "--controlled-joints",
            ",".join(joints),
            "--duration",
            "1.5",
        ]
    )
    assert code == 0, capsys.readouterr().err
    config = DemoConfig(
        robot=str(BAXTER), tool_frame="left_gripper", controlled_joints=joints, duration=0.2
    )
    result = _quiet(run_demo, config, progress=False)
    assert result.log.command_names[: len(joints)] == joints
    assert result.log.tool_frame == "left_gripper"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["demo", str(BAXTER), "--controlled-joints", " , "],
            "pinkctl demo: --controlled-joints: expected comma-separated joint names, got ' , '",
        ),
        (
            ["demo", str(BAXTER), "--tool-frame", "no_such_frame"],
            "pinkctl demo: tool_frame 'no_such_frame' is not a frame of the model",
        ),
    ],
)
def test_demo_rejects_bad_joint_and_frame_options_in_one_line(argv, expected, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines()[-1].startswith(expected)
    assert "simulating" not in captured.err
