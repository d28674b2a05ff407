"""TrajectoryFollower (Isaac semantics) and the opt-in HoldingTrajectoryFollower."""

from __future__ import annotations

import numpy as np
import pytest

from pinkctl.controllers.containers import SelectableController
from pinkctl.controllers.trajectory_follower import HoldingTrajectoryFollower, TrajectoryFollower
from pinkctl.core.state import JointState, RobotState
from pinkctl.trajectories import FigureEightTrajectory, Path, Trajectory

SPACE = ["a", "b"]
ESTIMATED = RobotState(joints=JointState.from_name(SPACE, positions=(SPACE, np.zeros(2))))


class RecordingTrajectory(Trajectory):
    """Duration 2 s; the target position of joint ``a`` is the queried time itself."""

    def __init__(self, duration: float = 2.0) -> None:
        self._duration = duration
        self.queries: list[float] = []

    @property
    def duration(self) -> float:
        return self._duration

    def get_target_state(self, time: float) -> RobotState | None:
        self.queries.append(time)
        return RobotState(
            joints=JointState.from_name(
                SPACE, positions=(["a"], np.array([time])), velocities=(["a"], np.array([1.0]))
            )
        )


def position_a(state: RobotState | None) -> float:
    assert state is not None and state.joints is not None
    return float(state.joints.get_positions(["a"])[0])


def test_set_trajectory_rejects_non_trajectories_and_keeps_state() -> None:
    follower = TrajectoryFollower()
    traj = RecordingTrajectory()
    follower.set_trajectory(traj)
    assert follower.reset(ESTIMATED, None, 1.0)
    with pytest.raises(ValueError):
        follower.set_trajectory("not a trajectory")  # type: ignore[arg-type]
    assert follower.trajectory is traj and follower.start_time == 1.0


def test_without_trajectory_reset_fails_and_forward_returns_none() -> None:
    follower = TrajectoryFollower()
    assert not follower.has_trajectory()
    assert follower.forward(ESTIMATED, None, 0.0) is None
    assert follower.last_error is not None
    assert follower.reset(ESTIMATED, None, 0.0) is False
    assert follower.last_error is not None and "set_trajectory" in follower.last_error


def test_forward_needs_reset_after_set_trajectory() -> None:
    follower = TrajectoryFollower()
    traj = RecordingTrajectory()
    follower.set_trajectory(traj)
    assert follower.has_trajectory()
    assert follower.forward(ESTIMATED, None, 0.5) is None
    assert traj.queries == []
    assert follower.reset(ESTIMATED, None, 10.0)
    assert follower.start_time == 10.0
    assert position_a(follower.forward(ESTIMATED, None, 10.25)) == pytest.approx(0.25)
    assert follower.last_error is None
    # set_trajectory clears the start time, even when re-setting the same trajectory
    follower.set_trajectory(traj)
    assert follower.start_time is None
    assert follower.forward(ESTIMATED, None, 10.5) is None
    assert follower.has_trajectory()


def test_reset_ignores_estimate_and_setpoint() -> None:
    follower = TrajectoryFollower()
    follower.set_trajectory(RecordingTrajectory())
    assert follower.reset(ESTIMATED, ESTIMATED, 3.0, anything=1)
    assert position_a(follower.forward(RobotState(), None, 4.0, anything=2)) == pytest.approx(1.0)


def test_window_bounds_are_inclusive() -> None:
    follower = TrajectoryFollower()
    traj = RecordingTrajectory(duration=2.0)
    follower.set_trajectory(traj)
    follower.reset(ESTIMATED, None, 1.0)
    assert position_a(follower.forward(ESTIMATED, None, 1.0)) == 0.0
    assert position_a(follower.forward(ESTIMATED, None, 3.0)) == 2.0
    assert traj.queries == [0.0, 2.0]


@pytest.mark.parametrize("t", [3.0 + 1e-9, 0.5])  # after the end, before the start
def test_outside_the_window_clears_trajectory_and_start(t: float) -> None:
    follower = TrajectoryFollower()
    traj = RecordingTrajectory(duration=2.0)
    follower.set_trajectory(traj)
    follower.reset(ESTIMATED, None, 1.0)
    assert follower.forward(ESTIMATED, None, t) is None
    assert traj.queries == []
    assert not follower.has_trajectory() and follower.start_time is None
    assert follower.last_error is not None and "outside" in follower.last_error
    # stays dead: a time inside the old window gives None and reset fails
    assert follower.forward(ESTIMATED, None, 2.0) is None
    assert follower.reset(ESTIMATED, None, 2.0) is False
    # re-armed by set_trajectory + reset
    follower.set_trajectory(traj)
    assert follower.reset(ESTIMATED, None, 5.0)
    assert position_a(follower.forward(ESTIMATED, None, 5.5)) == pytest.approx(0.5)


def test_non_finite_time_gives_none_without_clearing() -> None:
    follower = TrajectoryFollower()
    follower.set_trajectory(RecordingTrajectory())
    assert follower.reset(ESTIMATED, None, float("nan")) is False
    assert follower.reset(ESTIMATED, None, 0.0)
    assert follower.forward(ESTIMATED, None, float("nan")) is None
    assert follower.has_trajectory() and follower.start_time == 0.0


def test_follows_a_minimal_time_joint_trajectory() -> None:
    traj = Path([[0.0, 0.0], [0.5, -0.2]]).to_minimal_time_joint_trajectory(
        [1.0, 1.0], [2.0, 2.0], SPACE, SPACE
    )
    follower = TrajectoryFollower()
    follower.set_trajectory(traj)
    follower.reset(ESTIMATED, None, 2.0)
    end = follower.forward(ESTIMATED, None, 2.0 + traj.duration)
    assert end is not None and end.joints is not None
    np.testing.assert_allclose(end.joints.positions, [0.5, -0.2])
    assert follower.forward(ESTIMATED, None, 2.0 + traj.duration + 0.01) is None  # no hold


def test_selectable_container_rearms_a_follower() -> None:
    follower = TrajectoryFollower()
    other = TrajectoryFollower()
    other.set_trajectory(RecordingTrajectory())
    container = SelectableController({"idle": other, "follow": follower}, "idle")
    assert container.reset(ESTIMATED, None, 0.0)
    follower_ref = container.get_controller("follow")
    assert isinstance(follower_ref, TrajectoryFollower)
    follower_ref.set_trajectory(RecordingTrajectory(duration=1.0))
    container.set_next_controller("follow")
    # the switch resets the follower with this forward's t, so tau starts at 0
    assert position_a(container.forward(ESTIMATED, None, 7.0)) == 0.0
    assert position_a(container.forward(ESTIMATED, None, 7.5)) == pytest.approx(0.5)


# --------------------------------------------------------------------------------------------
# HoldingTrajectoryFollower
# --------------------------------------------------------------------------------------------


def test_holding_follower_keeps_the_final_state_at_rest() -> None:
    # without a ramp the figure eight ends at full speed; holding must command zero velocity
    traj = FigureEightTrajectory("tool", [0.5, 0.0, 0.4], half_width=0.1, period=2.0)
    final = traj.get_target_state(traj.duration)
    assert final.sites is not None and np.linalg.norm(final.sites.linear_velocities) > 0.1
    follower = HoldingTrajectoryFollower()
    follower.set_trajectory(traj)
    follower.reset(ESTIMATED, None, 1.0)
    for t in (1.0 + traj.duration + 0.01, 100.0):
        held = follower.forward(ESTIMATED, None, t)
        assert held is not None and held.sites is not None
        assert held.sites.valid_array.all()
        np.testing.assert_allclose(held.sites.positions, final.sites.positions)
        np.testing.assert_allclose(held.sites.orientations, final.sites.orientations)
        np.testing.assert_allclose(held.sites.linear_velocities, 0.0)
        np.testing.assert_allclose(held.sites.angular_velocities, 0.0)
        assert follower.last_error is None
    assert follower.has_trajectory()


def test_holding_follower_joint_state_and_before_start() -> None:
    traj = RecordingTrajectory(duration=2.0)
    follower = HoldingTrajectoryFollower()
    follower.set_trajectory(traj)
    follower.reset(ESTIMATED, None, 1.0)
    assert follower.forward(ESTIMATED, None, 0.5) is None  # before the start
    assert follower.has_trajectory() and follower.start_time == 1.0  # kept
    held = follower.forward(ESTIMATED, None, 10.0)
    assert held is not None and held.joints is not None
    assert held.joints.get_positions(["a"])[0] == 2.0
    assert held.joints.velocity_names == ["a"]  # velocity still commanded, now zero
    assert held.joints.get_velocities(["a"])[0] == 0.0
    assert position_a(follower.forward(ESTIMATED, None, 2.0)) == pytest.approx(1.0)  # still plays
