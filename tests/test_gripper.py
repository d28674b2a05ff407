"""GripperController: speed-limited open/close of one gripper joint."""

from __future__ import annotations

import numpy as np
import pytest

from pinkctl import CombinedController, GripperController, RobotState
from pinkctl.core.state import JointState

SPACE = ["arm", "finger"]


def measured(finger: float) -> RobotState:
    return RobotState(
        joints=JointState.from_name(SPACE, positions=(SPACE, np.array([0.0, finger])))
    )


def make() -> GripperController:
    return GripperController(
        SPACE, joint="finger", open_position=0.04, closed_position=0.0, speed=0.1
    )


def test_moves_toward_the_goal_at_its_speed_and_stops_there():
    gripper = make()
    assert gripper.forward(measured(0.04), None, 0.0) is None  # before reset
    assert gripper.reset(measured(0.04), None, 0.0)
    gripper.close()
    positions, velocities = [], []
    for k in range(1, 80):
        out = gripper.forward(measured(0.04), None, 0.01 * k)
        assert out.joints.position_names == ["finger"]  # only its joint
        positions.append(out.joints.positions[0])
        velocities.append(out.joints.velocities[0])
    steps = -np.diff(np.concatenate([[0.04], positions]))
    assert np.all(steps <= 0.1 * 0.01 + 1e-12)  # speed limit
    assert positions[-1] == pytest.approx(0.0)
    assert velocities[0] == pytest.approx(-0.1) and velocities[-1] == 0.0
    gripper.open()
    out = gripper.forward(measured(0.0), None, 0.8)
    assert out.joints.positions[0] > 0.0 and out.joints.velocities[0] == pytest.approx(0.1)


def test_reset_starts_from_the_measurement_and_needs_the_joint():
    gripper = make()
    assert gripper.reset(measured(0.02), None, 1.0)
    assert gripper.forward(measured(0.02), None, 1.0).joints.positions[0] == 0.02
    arm_only = RobotState(joints=JointState.from_name(SPACE, positions=(["arm"], np.zeros(1))))
    assert gripper.reset(arm_only, None, 0.0) is False
    assert "finger" in gripper.last_error


def test_runs_beside_another_controller_without_overlap():
    gripper, other = make(), make()
    other.joint = "arm"
    combined = CombinedController([gripper, other])
    assert combined.reset(measured(0.04), None, 0.0)
    out = combined.forward(measured(0.04), None, 0.01)
    assert sorted(out.joints.position_names) == ["arm", "finger"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"joint": "nope"}, "joint"),
        ({"speed": 0.0}, "speed"),
        ({"open_position": float("nan")}, "open_position"),
    ],
)
def test_bad_arguments(kwargs, match):
    arguments = {"joint": "finger", "open_position": 0.04, "closed_position": 0.0, "speed": 0.1}
    with pytest.raises(ValueError, match=match):
        GripperController(SPACE, **{**arguments, **kwargs})
