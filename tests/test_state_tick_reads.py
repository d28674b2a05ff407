"""The compiled tick reads states by their shared masks and rows (a JointSpace's estimate, a
SiteSpace's setpoint): whatever states arrive, in whatever order, it commands what the Python
path commands."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pinkctl import load_pink_supported_robot
from pinkctl._native import tick_available
from pinkctl.controllers import PinkIKController
from pinkctl.core.state import JointSpace, JointState, RobotState, SiteSpace, SpatialState

AVAILABLE, REASON = tick_available()
DT = 0.005


def _controller(compiled: bool) -> tuple[PinkIKController, list[str], np.ndarray]:
    robot = load_pink_supported_robot("franka")
    model = robot.model
    joints = [model.names[j] for j in range(1, model.njoints)]
    controller = PinkIKController(robot, joints, [robot.tool_frame], dt=DT, self_collision=False)
    controller.compiled = compiled
    q = np.array([robot.q0[model.joints[j].idx_q] for j in range(1, model.njoints)])
    assert controller.reset(RobotState(joints=JointSpace(joints).state(q)), None, 0.0)
    return controller, joints, q


def _setpoints(tool: str, home: pin.SE3, k: int, spaces: list[SiteSpace]) -> list[RobotState]:
    """One target pose as every kind of setpoint state the tick may meet (``spaces``: over
    ``[tool]``, ``["elbow", tool]``, ``[tool, "elbow"]``, ``["elbow"]``, made once)."""
    offset = 0.05 * np.array([0.0, np.sin(0.05 * k), np.cos(0.05 * k) - 1.0])
    xyzquat = pin.SE3ToXYZQUAT(pin.SE3(home.rotation, home.translation + offset))
    p, o = xyzquat[None, :3].copy(), xyzquat[None, [6, 3, 4, 5]].copy()
    two_p, two_o = np.vstack([p + 1.0, p]), np.vstack([[[1.0, 0.0, 0.0, 0.0]], o])
    return [
        RobotState(sites=spaces[0].state(p, o)),
        RobotState(sites=spaces[1].state(two_p, two_o)),  # the tool in row 1
        RobotState(sites=spaces[2].state(two_p[::-1].copy(), two_o[::-1].copy())),
        RobotState(sites=spaces[0].state(p)),  # no orientation: the rotation held
        RobotState(sites=SpatialState.from_name([tool], positions=([tool], p))),
        RobotState(
            sites=SpatialState.from_name([tool], positions=([tool], p), orientations=([tool], o))
        ),
        RobotState(sites=spaces[3].state(p, o)),  # no tool: the target stays
    ]


@pytest.mark.skipif(not AVAILABLE, reason=f"compiled tick not available: {REASON}")
def test_mixed_states_give_the_python_paths_commands() -> None:
    compiled, joints, q = _controller(True)
    reference, _, _ = _controller(False)
    assert compiled.compiled, compiled.compiled_reason
    robot = compiled.robot
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    home = data.oMf[robot.model.getFrameId(compiled.tool_frame)]
    spaces = [JointSpace(joints), JointSpace(list(reversed(joints)))]
    tool = compiled.tool_frame
    site_spaces = [SiteSpace(names) for names in ([tool], ["elbow", tool], [tool, "elbow"])]
    site_spaces.append(SiteSpace(["elbow"]))
    k = 0
    for rounds in range(3):
        for setpoint in _setpoints(tool, home, k, site_spaces):
            k += 1
            v = np.zeros(len(joints))
            estimates = [
                RobotState(joints=spaces[0].state(q, v)),
                RobotState(joints=spaces[1].state(q[::-1].copy())),  # another order
                RobotState(joints=JointState.from_name(joints, positions=(joints, q))),
                RobotState(joints=spaces[0].state(q)),
                RobotState(joints=JointState.from_name(joints, positions=(joints[1:], q[1:]))),
            ]
            estimate = estimates[(k + rounds) % len(estimates)]
            a = compiled.forward(estimate, setpoint, k * DT)
            b = reference.forward(estimate, setpoint, k * DT)
            assert a is not None and b is not None and a.joints and b.joints
            np.testing.assert_allclose(a.joints.data_array, b.joints.data_array, atol=1e-9)
            assert compiled.status == reference.status
            q = spaces[0].positions(b.joints, fill=q)
    assert 0 < compiled.compiled_ticks < k and reference.compiled_ticks == 0
