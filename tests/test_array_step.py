"""controller.step(q, target_pose): the forward tick on arrays gives the same commands."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pinkctl import (
    InputError,
    JointSpace,
    PinkIKController,
    RobotState,
    SpatialState,
    load_pink_supported_robot,
)
from pinkctl.controllers import ControllerStatus


def _controllers():
    robot = load_pink_supported_robot("franka")
    names = robot.joint_names
    twins = [PinkIKController(robot, names, [robot.tool_frame], dt=0.005) for _ in range(2)]
    return robot, list(names), twins


def _target(robot, k: int) -> pin.SE3:
    model, data = robot.model, robot.model.createData()
    pin.framesForwardKinematics(model, data, robot.q0)
    home = data.oMf[model.getFrameId(robot.tool_frame)]
    offset = 0.1 * np.array([np.sin(0.01 * k), 1.0 - np.cos(0.01 * k), 0.02 * k / 100])
    return pin.SE3(home.rotation, home.translation + offset)


def test_step_equals_forward_over_a_run() -> None:
    robot, names, (a, b) = _controllers()
    joints = JointSpace(names)
    q = np.array([robot.q0[robot.model.joints[robot.model.getJointId(n)].idx_q] for n in names])
    a.reset(RobotState(joints=joints.state(q)), None, 0.0)
    b.reset(RobotState(joints=joints.state(q)), None, 0.0)
    qa, qb = q.copy(), q.copy()
    for k in range(500):
        target = _target(robot, k)
        qa = a.step(qa, target)
        quat = pin.Quaternion(target.rotation).coeffs()  # (x, y, z, w)
        sites = [robot.tool_frame]
        setpoint = RobotState(
            sites=SpatialState.from_name(
                sites,
                positions=(sites, target.translation.reshape(1, 3)),
                orientations=(sites, np.array([[quat[3], quat[0], quat[1], quat[2]]])),
            )
        )
        command = b.forward(RobotState(joints=joints.state(qb)), setpoint, 0.0)
        qb = qb.copy()  # joints the controller does not move keep their measured value
        qb[[names.index(n) for n in command.joints.position_names]] = command.joints.positions
        assert qa is not None
        np.testing.assert_allclose(qa, qb, rtol=0, atol=1e-12)
        assert a.status == b.status == ControllerStatus.OK
    assert np.abs(qa - q).max() > 0.01  # [rad] the arm moved


def test_step_accepts_the_pose_spellings_and_refuses_bad_input() -> None:
    robot, names, (a, _) = _controllers()
    joints = JointSpace(names)
    q = np.zeros(len(names))
    q[:] = [robot.q0[robot.model.joints[robot.model.getJointId(n)].idx_q] for n in names]
    a.reset(RobotState(joints=joints.state(q)), None, 0.0)
    target = _target(robot, 10)
    xyzw = pin.Quaternion(target.rotation).coeffs()
    wxyz = np.array([xyzw[3], *xyzw[:3]])
    first = a.step(q, target)
    a.reset(RobotState(joints=joints.state(q)), None, 0.0)
    second = a.step(q, (target.translation, wxyz))
    a.reset(RobotState(joints=joints.state(q)), None, 0.0)
    third = a.step(q, target.homogeneous)
    np.testing.assert_allclose(first, second, atol=1e-12)
    np.testing.assert_allclose(first, third, atol=1e-12)
    with pytest.raises(InputError):
        a.step(q[:3], target)
    with pytest.raises(InputError):
        a.step(np.full_like(q, np.nan), target)
    with pytest.raises(InputError):
        a.step(q, "up")
