"""Robot loading: bundled robots, plain URDF + SRDF, and the documented errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from pinkctl import PinkRobot, load_pink_robot, load_pink_supported_robot, supported_robots

URDF_DIR = Path(__file__).parent / "urdf"


def test_supported_robots_lists_the_bundled_ones():
    assert supported_robots() == sorted(supported_robots())
    assert {"franka", "ur10", "so101"} <= set(supported_robots())


@pytest.mark.parametrize(
    ("name", "dof", "tool", "gripper"),
    [
        ("franka", 7, "panda_hand_tcp", ["panda_finger_joint1"]),
        ("ur10", 6, "tool0", []),
        ("so101", 5, "gripper_frame_link", ["gripper"]),
    ],
)
def test_load_pink_supported_robot_fields(name, dof, tool, gripper):
    robot = load_pink_supported_robot(name)
    assert isinstance(robot, PinkRobot)
    assert robot.name == name
    assert len(robot.controlled_joint_names) == dof
    assert robot.tool_frame == tool and robot.model.existFrame(tool)
    assert robot.gripper_joint_names == gripper
    assert robot.q0.shape == (robot.model.nq,)
    assert np.all(robot.q0 >= robot.model.lowerPositionLimit - 1e-12)
    assert np.all(robot.q0 <= robot.model.upperPositionLimit + 1e-12)
    assert robot.collision_model is None
    assert set(robot.velocity_limits) == set(robot.controlled_joint_names)
    assert robot.directory.is_dir() and robot.urdf_path.is_file()


def test_unknown_robot_lists_available_names():
    with pytest.raises(FileNotFoundError) as info:
        load_pink_supported_robot("no_such_robot")
    message = str(info.value)
    assert "no_such_robot" in message
    for name in supported_robots():
        assert name in message


def test_FileNotFoundError_for_a_missing_urdf_or_srdf(tmp_path):
    with pytest.raises(FileNotFoundError, match="URDF file not found"):
        load_pink_robot(tmp_path / "missing.urdf")
    with pytest.raises(FileNotFoundError, match="SRDF file not found"):
        load_pink_robot(URDF_DIR / "mimic_gripper.urdf", srdf_path=tmp_path / "missing.srdf")


def test_ValueError_for_a_malformed_urdf_names_the_file(tmp_path):
    bad = tmp_path / "broken.urdf"
    bad.write_text("<robot name='x'><link name='a'></robot")
    with pytest.raises(ValueError, match="broken.urdf"):
        load_pink_robot(bad)
    not_a_robot = tmp_path / "empty.urdf"
    not_a_robot.write_text("<robot name='x'><joint name='j' type='revolute'/></robot>")
    with pytest.raises(ValueError, match="empty.urdf"):
        load_pink_robot(not_a_robot)


def test_unknown_controlled_joint(tmp_path):
    with pytest.raises(ValueError, match="not_a_joint"):
        load_pink_robot(URDF_DIR / "mimic_gripper.urdf", controlled_joint_names=["not_a_joint"])


def test_mimic_and_continuous_joints_load():
    mimic = load_pink_robot(URDF_DIR / "mimic_gripper.urdf")
    kinds = [j.shortname() for j in mimic.model.joints]
    assert "JointModelMimic" in kinds
    # the mimic follower has no coordinate of its own, so it is not controlled
    assert all(
        mimic.model.joints[mimic.model.getJointId(n)].nq == 1 for n in mimic.controlled_joint_names
    )
    continuous = load_pink_robot(URDF_DIR / "continuous_arm.urdf")
    assert any(j.nq == 2 and j.nv == 1 for j in continuous.model.joints)
    assert continuous.model.nq == continuous.model.nv + 1


def test_srdf_path_excludes_pairs_from_build_collision_model():
    robot = load_pink_supported_robot("franka", build_collision_model=True)
    n_geoms = robot.collision_model.ngeoms
    all_pairs = n_geoms * (n_geoms - 1) // 2
    assert 0 < len(robot.collision_model.collisionPairs) < all_pairs
    pin.computeDistances(
        robot.model, robot.data, robot.collision_model, robot.collision_data, robot.q0
    )
    assert min(r.min_distance for r in robot.collision_data.distanceResults) > 0.0
