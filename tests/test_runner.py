"""The closed-loop runner: setpoint sources, the log, its metrics, save and plot."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pinkctl import load_pink_supported_robot
from pinkctl.controllers import (
    BaseController,
    ChainedController,
    PinkIKController,
    TrajectoryFollower,
)
from pinkctl.core.state import JointState, RobotState, SpatialState
from pinkctl.errors import InputError
from pinkctl.sim import ClosedLoopLog, MujocoSimulation, run_closed_loop
from pinkctl.trajectories import CircleTrajectory


@pytest.fixture(scope="module")
def robot():
    return load_pink_supported_robot("franka")


def make(robot):
    sim = MujocoSimulation.from_robot(robot)
    ik = PinkIKController(
        robot, sim.joint_names, sim.site_names, dt=0.004, integrate_from="command"
    )
    return sim, ik


def pose_setpoint(frame, position, orientation):
    return RobotState(
        sites=SpatialState.from_name(
            [frame],
            positions=([frame], np.reshape(position, (1, 3))),
            orientations=([frame], np.reshape(orientation, (1, 4))),
        )
    )


def test_fixed_setpoint_converges_and_log_is_complete(robot, tmp_path):
    sim, ik = make(robot)
    frame = robot.tool_frame
    start, orientation = sim.get_site_pose(frame)
    goal = start + [0.05, 0.05, -0.05]
    log = run_closed_loop(
        sim, ik, duration=1.0, control_rate=250.0, setpoint=pose_setpoint(frame, goal, orientation)
    )
    n = 250
    assert log.time.shape == (n,) and log.q.shape == (n, len(sim.joint_names))
    assert np.allclose(np.diff(log.time), 0.004)
    assert log.command.shape == (n, len(sim.actuated_joint_names))
    assert np.all(np.isfinite(log.tick_time)) and np.all(log.tick_time > 0)
    assert log.position_error[-1] < 1e-3
    assert log.orientation_error[-1] < 1e-3
    assert log.position_error[0] > 0.05
    s = log.summary()
    assert s["ticks"] == n and s["ticks_none"] == 0 and s["limit_violations"] == 0
    assert "position error RMS" in log.format_summary()
    saved = np.load(log.save(tmp_path / "run.npz"))
    assert np.array_equal(saved["q"], log.q)
    png = log.plot(tmp_path / "run.png", title="test")
    assert png.stat().st_size > 10_000


def test_log_load_reads_back_what_save_wrote(robot, tmp_path):
    sim, ik = make(robot)
    frame = robot.tool_frame
    start, orientation = sim.get_site_pose(frame)
    log = run_closed_loop(
        sim, ik, duration=0.2, control_rate=250.0, setpoint=pose_setpoint(frame, start, orientation)
    )
    log.reasons.append("t=0.1000: an example reason")
    loaded = ClosedLoopLog.load(log.save(tmp_path / "run.npz"))
    for f in dataclasses.fields(ClosedLoopLog):
        ours, theirs = getattr(log, f.name), getattr(loaded, f.name)
        if isinstance(ours, np.ndarray):
            nan = ours.dtype.kind == "f"  # the status array holds strings
            assert theirs.dtype == ours.dtype and np.array_equal(theirs, ours, equal_nan=nan)
        else:
            assert theirs == ours, f.name
    assert loaded.format_summary() == log.format_summary()
    np.savez(tmp_path / "other.npz", q=log.q)
    with pytest.raises(InputError, match="not a saved ClosedLoopLog"):
        ClosedLoopLog.load(tmp_path / "other.npz")


def test_callable_setpoint_and_reference(robot):
    sim, ik = make(robot)
    frame = robot.tool_frame
    start, orientation = sim.get_site_pose(frame)
    circle = CircleTrajectory(
        frame,
        start - [0, 0.05, 0],
        radius=0.05,
        period=2.0,
        orientation=orientation,
        ramp_time=0.5,
    )
    log = run_closed_loop(
        sim, ik, duration=2.0, control_rate=250.0, setpoint=circle.get_target_state
    )
    assert log.summary()["rms_position_error_mm"] < 1.0
    assert np.ptp(log.target_position[:, 1]) > 0.05


def test_upstream_controller_as_setpoint_source(robot):
    sim, ik = make(robot)
    frame = robot.tool_frame
    start, orientation = sim.get_site_pose(frame)
    follower = TrajectoryFollower()
    follower.set_trajectory(
        CircleTrajectory(
            frame, start - [0, 0.05, 0], radius=0.05, period=1.0, orientation=orientation
        )
    )
    log = run_closed_loop(sim, ik, duration=0.8, control_rate=250.0, setpoint=follower)
    assert np.all(np.isfinite(log.target_position))
    assert log.summary()["ticks_none"] == 0


class _NoneEveryOther(BaseController):
    """Commands home on even ticks, returns None on odd ones."""

    def __init__(self, names):
        super().__init__()
        self.names = names
        self.k = 0

    def reset(self, estimated_state, setpoint_state, t, **kwargs):
        return True

    def forward(self, estimated_state, setpoint_state, t, **kwargs):
        self.k += 1
        if self.k % 2 == 0:
            return self._fail("odd tick")
        js = estimated_state.joints
        return RobotState(
            joints=JointState.from_name(
                js.robot_joint_space, positions=(self.names, js.get_positions(self.names))
            )
        )


def test_none_ticks_are_counted_and_command_held(robot):
    sim = MujocoSimulation.from_robot(robot)
    controller = _NoneEveryOther(robot.controlled_joint_names)
    log = run_closed_loop(sim, controller, duration=0.1, control_rate=100.0)
    assert log.summary()["ticks_none"] == 5
    assert log.reasons and "odd tick" in log.reasons[0]
    assert np.array_equal(log.command[1], log.command[0])  # held through the None tick
    assert np.all(np.isnan(log.position_error))  # no target given


def test_bad_arguments(robot):
    sim, ik = make(robot)
    with pytest.raises(ValueError, match="duration"):
        run_closed_loop(sim, ik, duration=0.0)
    with pytest.raises(ValueError, match="whole number"):
        run_closed_loop(sim, ik, duration=1.0, control_rate=300.0)
    with pytest.raises(ValueError, match="tool_frame"):
        run_closed_loop(sim, ik, duration=1.0, tool_frame="nope")


def test_failed_reset_raises(robot):
    sim = MujocoSimulation.from_robot(robot)
    follower = TrajectoryFollower()  # no trajectory: reset returns False
    with pytest.raises(RuntimeError, match="reset"):
        run_closed_loop(sim, follower, duration=0.1)


def test_braking_ticks_are_counted_and_fail_the_demo_check(robot):
    """A controller whose every tick brakes (its pre-step callback raises): the log counts 100
    braking ticks with the reason, and the demo's "every tick solved" check fails the run."""
    from pinkctl.app.demo import tick_failures  # noqa: PLC0415

    sim, ik = make(robot)

    def broken(configuration, setpoint):
        raise RuntimeError("sensor fusion lost")

    ik.pre_step_callback = broken
    log = run_closed_loop(sim, ik, duration=0.4, control_rate=250.0)
    summary = log.summary()
    assert summary["ticks"] == 100 and summary["ticks_braking"] == 100
    assert summary["ticks_ok"] == 0 and summary["ticks_none"] == 0  # braking still commands
    assert np.all(log.status == "braking")
    assert len(log.reasons) == 20 and "sensor fusion lost" in log.reasons[0]
    assert "ticks braking" in log.format_summary()
    assert tick_failures(summary) == ["braking ticks: 100"]


def test_statuses_of_a_chain_and_of_a_controller_without_status(robot):
    """A chain reports its IK child's status (OK ticks logged "ok"); a controller that reports
    no status is logged "ok" with an output and "none" without one."""
    sim, ik = make(robot)
    frame = robot.tool_frame
    start, orientation = sim.get_site_pose(frame)
    follower = TrajectoryFollower()
    follower.set_trajectory(
        CircleTrajectory(
            frame, start - [0, 0.05, 0], radius=0.05, period=1.0, orientation=orientation
        )
    )
    log = run_closed_loop(sim, ChainedController([follower, ik]), duration=0.2, control_rate=250.0)
    assert np.all(log.status == "ok") and log.summary()["ticks_ok"] == 50
    other = MujocoSimulation.from_robot(robot)
    log = run_closed_loop(
        other, _NoneEveryOther(robot.controlled_joint_names), duration=0.1, control_rate=100.0
    )
    assert list(log.status) == ["ok", "none"] * 5
    assert log.summary()["ticks_none"] == 5 and log.summary()["ticks_braking"] == 0
