"""One joint model: every layer (controller maps, IK, motion limits, the controller's QP
limits) reads kinds, indices and limits through pinkctl.core.joint_info and agrees."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from pinkctl import InputError, PinkIKController, load_pink_robot, load_pink_supported_robot
from pinkctl.core.joint_info import UNBOUNDED, configured_velocity_limits, joint_info
from pinkctl.ik.joints import JointSubset
from pinkctl.motion import MotionLimits

URDF_DIR = Path(__file__).parent / "urdf"


def test_kinds_indices_and_ranges() -> None:
    franka = load_pink_supported_robot("franka")
    model = franka.model
    joint1 = joint_info(model, "panda_joint1")
    assert joint1.kind == "scalar" and joint1.bounded
    assert (joint1.lower, joint1.upper) == (
        model.lowerPositionLimit[joint1.idx_q],
        model.upperPositionLimit[joint1.idx_q],
    )
    assert joint_info(model, "panda_finger_joint2").kind == "mimic"
    with pytest.warns(UserWarning):
        continuous = load_pink_robot(URDF_DIR / "continuous_arm.urdf")
    wrist = [joint_info(continuous.model, n) for n in continuous.model.names[1:]]
    assert any(info.kind == "continuous" and not info.bounded for info in wrist)
    free = pin.buildModelFromUrdf(str(franka.description.path), pin.JointModelFreeFlyer())
    assert joint_info(free, "root_joint").kind == "multi"


def test_unknown_joint_names_the_closest() -> None:
    model = load_pink_supported_robot("franka").model
    with pytest.raises(InputError, match="panda_joint1"):
        joint_info(model, "panda_joint_1")


def test_huge_pinocchio_limits_mean_unbounded() -> None:
    model = load_pink_supported_robot("ur10").model.copy()
    info = joint_info(model, model.names[1])
    model.lowerPositionLimit[info.idx_q] = -10 * UNBOUNDED
    model.upperPositionLimit[info.idx_q] = 10 * UNBOUNDED
    assert not joint_info(model, model.names[1]).bounded


@pytest.mark.parametrize("robot_name", ["franka", "ur10", "so101"])
def test_layers_agree_on_limits(robot_name: str) -> None:
    robot = load_pink_supported_robot(robot_name)
    names = list(robot.controlled_joint_names)
    subset = JointSubset(robot.model, names)
    motion = MotionLimits.from_robot(robot)
    np.testing.assert_array_equal(subset.lower, motion.lower)
    np.testing.assert_array_equal(subset.upper, motion.upper)
    velocity = configured_velocity_limits(robot)
    idx_v = [joint_info(robot.model, n).idx_v for n in names]
    np.testing.assert_array_equal(velocity[idx_v], motion.velocity)
    controller = PinkIKController(robot, robot.joint_names, [robot.tool_frame], dt=0.01)
    qp_velocity = np.asarray(controller.limits[1].velocity_limit)  # the QP's VelocityLimit
    np.testing.assert_array_equal(qp_velocity[idx_v], motion.velocity)
