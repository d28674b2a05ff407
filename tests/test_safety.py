"""Safety and reliability: commands a real robot would accept, under stress.

The soak runs 20,000 ticks per robot with ``PINKCTL_SOAK_TICKS=20000`` (``make soak``); CI runs
the same scenario with a reduced count.
"""

from __future__ import annotations

import os

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from pink.barriers import SelfCollisionBarrier

from pinkctl import load_pink_supported_robot
from pinkctl.controllers import PinkIKController
from pinkctl.demo import DemoConfig, command_limit_report, robot_limits, run_demo
from pinkctl.motion_limits import MotionLimits, check_trajectory
from pinkctl.state import JointState, RobotState, SpatialState

SOAK_TICKS = int(os.environ.get("PINKCTL_SOAK_TICKS", "4000"))
DT = 0.001  # 1 kHz


def pose_state(frame, position, orientation):
    return RobotState(
        sites=SpatialState.from_name(
            [frame],
            positions=([frame], np.reshape(position, (1, 3))),
            orientations=([frame], np.reshape(orientation, (1, 4))),
        )
    )


def fk_pose(robot, q, frame):
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    pose = data.oMf[robot.model.getFrameId(frame)]
    quat = pin.Quaternion(pose.rotation)
    return pose.translation.copy(), np.array([quat.w, quat.x, quat.y, quat.z])


def arm_q(robot, values):
    q = robot.q0.copy()
    for name, value in zip(robot.controlled_joint_names, values):
        q[robot.model.joints[robot.model.getJointId(name)].idx_q] = value
    return q


def stress_targets(robot, rng, count):
    """Reachable, unreachable (2 m away), singular (stretched arm, wrist) and behind-the-robot."""
    frame = robot.tool_frame
    model = robot.model
    names = robot.controlled_joint_names
    idx = [model.joints[model.getJointId(n)].idx_q for n in names]
    lower, upper = model.lowerPositionLimit[idx], model.upperPositionLimit[idx]
    home_p, home_q = fk_pose(robot, robot.q0, frame)
    stretched = np.clip(np.zeros(len(names)), lower, upper)  # elbow straight: arm stretched
    wrist = np.clip(robot.q0[idx].copy(), lower, upper)
    wrist[-2] = np.clip(0.0, lower[-2], upper[-2])  # wrist axes aligned
    singular = [
        fk_pose(robot, arm_q(robot, stretched), frame),
        fk_pose(robot, arm_q(robot, wrist), frame),
    ]
    targets = []
    for k in range(count):
        kind = k % 5
        if kind == 0:
            q = lower + rng.random(len(names)) * (upper - lower)
            targets.append(fk_pose(robot, arm_q(robot, q), frame))
        elif kind == 1:
            direction = rng.normal(size=3)
            direction /= np.linalg.norm(direction)
            targets.append((2.0 * direction + [0.0, 0.0, 0.5], home_q))
        elif kind == 2:
            targets.append(singular[k % 2])
        elif kind == 3:
            targets.append((np.array([-0.6 * abs(home_p[0]) - 0.3, 0.1, 0.4]), home_q))
        else:
            targets.append((home_p, home_q))
    return targets


def soak(robot, controller, targets, ticks, hold_ticks):
    """Kinematic loop at 1 kHz: the command is the next measurement. Returns the commands."""
    names = list(controller.robot_joint_space)
    positions = dict(robot.home_positions())
    q = np.array([positions.get(n, 0.0) for n in names])
    start = RobotState(joints=JointState.from_name(names, positions=(names, q)))
    assert controller.reset(start, None, 0.0)
    commands = np.empty((ticks + 1, len(robot.controlled_joint_names)))
    commands[0] = q[[names.index(n) for n in robot.controlled_joint_names]]
    frame = controller.tool_frame
    nones = 0
    for k in range(ticks):
        position, orientation = targets[(k // hold_ticks) % len(targets)]
        est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
        out = controller.forward(est, pose_state(frame, position, orientation), k * DT)
        if out is None:
            nones += 1
            commands[k + 1] = commands[k]
            continue
        cmd = out.joints.positions
        assert np.all(np.isfinite(cmd)) and np.all(np.isfinite(out.joints.velocities))
        commands[k + 1] = cmd
        q[out.joints.position_indices] = cmd
    return commands, nones


@pytest.mark.slow
@pytest.mark.parametrize("name", ["franka", "ur10"])
@pytest.mark.parametrize("motion_limits", [False, True])
def test_soak_jumping_targets(name, motion_limits):
    """Targets jump every 0.5 s; zero NaN, zero violations of every enforced limit set."""
    robot = load_pink_supported_robot(name)
    joints = robot.joint_names
    controller = PinkIKController(
        robot,
        joints,
        [robot.tool_frame],
        dt=DT,
        integrate_from="command",
        motion_limits=motion_limits,
    )
    rng = np.random.default_rng(7)
    targets = stress_targets(robot, rng, 40)
    commands, nones = soak(robot, controller, targets, SOAK_TICKS, hold_ticks=500)
    assert nones == 0
    limits = MotionLimits.from_robot(robot, use_acceleration=motion_limits)
    report = check_trajectory(commands, DT, limits)
    assert report.ok, str(report)
    if motion_limits:
        assert set(report.kinds) == {"position", "velocity", "acceleration", "jerk"}
        # the limits were exercised, not trivially met
        assert report.max_ratio("acceleration") > 0.9
    else:
        assert report.max_ratio("velocity") > 0.9


def test_fast_figure_eight_respects_all_four_franka_limit_sets(capsys):
    """Period 2 s: no violation of position, velocity, acceleration or jerk limits."""
    result = run_demo(
        DemoConfig(robot="franka", trajectory="figure8", period=2.0, duration=5.0),
        progress=False,
    )
    report = result.limit_report
    assert set(report.kinds) == {"position", "velocity", "acceleration", "jerk"}
    assert report.ok, str(report)
    assert result.summary["ticks_none"] == 0
    # the summary reports the resulting tracking error
    assert "position error max" in result.table and "limit violations: jerk" in result.table
    assert result.summary["max_position_error_mm"] < 5.0
    print(result.table)


def test_checker_catches_a_controller_without_motion_limits():
    """The same fast figure-eight with motion limits off: the checker sees what would trip."""
    robot = load_pink_supported_robot("franka")
    limits = robot_limits(robot)
    names = robot.joint_names
    controller = PinkIKController(
        robot,
        names,
        [robot.tool_frame],
        dt=0.002,
        integrate_from="command",
        motion_limits=False,
    )
    frame = robot.tool_frame
    start = RobotState(
        joints=JointState.from_name(
            names, positions=(names, np.array([robot.home_positions()[n] for n in names]))
        )
    )
    assert controller.reset(start, None, 0.0)
    home_p, home_q = fk_pose(robot, robot.q0, frame)
    # a 10 cm target step: dead-beat IK without jerk limits jumps
    out = controller.forward(start, pose_state(frame, home_p + [0, 0.1, 0], home_q), 0.0)
    commands = np.vstack(
        [start.joints.get_positions(robot.controlled_joint_names), out.joints.positions]
    )
    report = check_trajectory(commands, 0.002, limits)
    assert not report.ok
    assert report.counts()["jerk"] > 0


def test_self_collision_barrier_over_random_target_sequences():
    """200 random target sequences: no commanded configuration is in collision."""
    robot = load_pink_supported_robot("franka", build_collision_model=True)
    names = robot.joint_names
    barrier = SelfCollisionBarrier(
        n_collision_pairs=len(robot.collision_model.collisionPairs),
        gain=5.0,
        safe_displacement_gain=1.0,
        d_min=0.01,
    )
    controller = PinkIKController(
        robot,
        names,
        [robot.tool_frame],
        dt=0.01,
        integrate_from="command",
        extra_barriers=[barrier],
    )
    rng = np.random.default_rng(3)
    model = robot.model
    data = model.createData()
    geom_data = robot.collision_model.createData()
    frame = robot.tool_frame
    home = np.array([robot.home_positions()[n] for n in names])
    closest = np.inf
    checked = 0
    for _ in range(200):
        q = home.copy()
        est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
        assert controller.reset(est, None, 0.0)
        # targets pulled toward the robot's own body: the arm folds onto itself
        target = np.array([0.0, 0.0, 0.2]) + rng.uniform(-0.25, 0.25, size=3)
        setpoint = pose_state(frame, target, fk_pose(robot, robot.q0, frame)[1])
        for k in range(12):
            est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
            out = controller.forward(est, setpoint, k * 0.01)
            if out is None:
                continue
            q[out.joints.position_indices] = out.joints.positions
            full = arm_q(robot, out.joints.positions)
            pin.computeDistances(model, data, robot.collision_model, geom_data, full)
            closest = min(closest, min(r.min_distance for r in geom_data.distanceResults))
            checked += 1
    assert checked > 1500
    assert closest > 0.0


# ---------------------------------------------------------------------- input contract


@pytest.fixture(scope="module")
def franka():
    return load_pink_supported_robot("franka")


def fresh_controller(robot):
    names = robot.joint_names
    controller = PinkIKController(robot, names, [robot.tool_frame], dt=0.002)
    est = RobotState(
        joints=JointState.from_name(
            names, positions=(names, np.array([robot.home_positions()[n] for n in names]))
        )
    )
    assert controller.reset(est, None, 0.0)
    return controller, est


def test_bad_input_leaves_the_controller_as_it_was(franka):
    controller, est = fresh_controller(franka)
    reference, _ = fresh_controller(franka)
    frame = franka.tool_frame
    p, quat = fk_pose(franka, franka.q0, frame)
    good = pose_state(frame, p + [0.02, 0.0, 0.0], quat)
    wrong_space = RobotState(
        joints=JointState.from_name(["other"], positions=(["other"], np.zeros(1)))
    )
    for bad in ({"joints": 1}, 3.0, "state"):
        with pytest.raises(ValueError, match="RobotState"):
            controller.forward(bad, good, 0.0)
        with pytest.raises(ValueError, match="RobotState"):
            controller.forward(est, bad, 0.0)
    assert controller.forward(wrong_space, good, 0.0) is None
    assert controller.last_error
    # after the rejected calls it behaves exactly like a fresh controller
    a = controller.forward(est, good, 0.0)
    b = reference.forward(est, good, 0.0)
    assert np.array_equal(a.joints.data_array, b.joints.data_array)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dt": 0.0}, "dt"),
        ({"dt": -0.01}, "dt"),
        ({"dt": float("nan")}, "dt"),
        ({"position_cost": float("nan")}, "position_cost"),
        ({"orientation_cost": -1.0}, "orientation_cost"),
        ({"posture_cost": [1.0, 2.0, 3.0]}, "posture_cost"),
        ({"gain": 0.0}, "gain"),
        ({"damping": -1.0}, "damping"),
        ({"tool_frame": "nope"}, "tool_frame"),
        ({"solver": "nope"}, "solver"),
        ({"integrate_from": "nope"}, "integrate_from"),
        ({"motion_limits": "yes"}, "motion_limits"),
    ],
)
def test_constructor_contract(franka, kwargs, match):
    arguments = {"dt": 0.002, **kwargs}
    with pytest.raises(ValueError, match=match):
        PinkIKController(franka, franka.joint_names, [franka.tool_frame], **arguments)


def test_empty_spaces_are_rejected(franka):
    with pytest.raises(ValueError, match="robot_joint_space"):
        PinkIKController(franka, [], [franka.tool_frame], dt=0.002)
    with pytest.raises(ValueError, match="robot_site_space"):
        PinkIKController(franka, franka.joint_names, [], dt=0.002)


finite_or_not = st.floats(allow_nan=True, allow_infinity=True, width=64)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # huge values overflow inside the QP
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    positions=arrays(np.float64, st.integers(0, 12), elements=finite_or_not),
    target=arrays(np.float64, st.integers(0, 5), elements=finite_or_not),
    quat=arrays(np.float64, st.integers(0, 5), elements=finite_or_not),
)
def test_forward_fuzz_never_crashes_nor_emits_nan(franka, positions, target, quat):
    """Arbitrary floats and shapes: only the documented ValueError, and never NaN out."""
    controller, est = fresh_controller(franka)
    names = franka.joint_names
    frame = franka.tool_frame
    try:
        n = min(len(names), positions.size)
        state = (
            RobotState(joints=JointState.from_name(names, positions=(names[:n], positions[:n])))
            if n
            else est
        )
        setpoint = pose_state(frame, target, quat)
    except ValueError:
        return  # rejected at the boundary, as documented
    out = controller.forward(state, setpoint, 0.0)
    if out is not None:
        assert np.all(np.isfinite(out.joints.data_array))
    else:
        assert controller.last_error


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_huge_but_finite_targets_give_finite_commands(franka):
    controller, est = fresh_controller(franka)
    frame = franka.tool_frame
    for value in (1e6, 1e12, 1e300):
        out = controller.forward(est, pose_state(frame, [value, -value, value], [1.0, 0, 0, 0]), 0)
        assert out is None or np.all(np.isfinite(out.joints.data_array))


def test_limit_report_of_a_demo_run(franka):
    """command_limit_report checks the commands the demo sent (sample 0 = the start)."""
    result = run_demo(DemoConfig(robot="franka", trajectory="circle", duration=2.0), progress=False)
    report = command_limit_report(result.log, robot_limits(franka), 0.002)
    assert report.ok
    assert len(result.log.time) == 1000


def test_failing_solver_falls_back_to_the_second_one(franka):
    """A backend that fails (OSQP stopped after one iteration) hands the tick to daqp."""
    names = franka.joint_names
    frame = franka.tool_frame
    p, quat = fk_pose(franka, franka.q0, frame)
    target = pose_state(frame, p + [0.05, 0.0, 0.0], quat)
    crippled = {"max_iter": 1, "polish": False}
    est = fresh_controller(franka)[1]
    alone = PinkIKController(
        franka, names, [frame], dt=0.002, solver="osqp", solver_options=crippled
    )
    assert alone.reset(est, None, 0.0)
    assert alone.forward(est, target, 0.0) is None
    assert "osqp" in alone.last_error
    backed = PinkIKController(
        franka,
        names,
        [frame],
        dt=0.002,
        solver="osqp",
        solver_options=crippled,
        fallback_solver="daqp",
    )
    reference = PinkIKController(franka, names, [frame], dt=0.002, solver="daqp")
    assert backed.reset(est, None, 0.0) and reference.reset(est, None, 0.0)
    a = backed.forward(est, target, 0.0)
    b = reference.forward(est, target, 0.0)
    assert a is not None and backed.last_error is None
    assert np.allclose(a.joints.data_array, b.joints.data_array, atol=1e-12)


def test_conflicting_user_constraints_return_none_then_recover(franka):
    """Two barriers that cannot both hold: None with the reason, then work again."""
    from pink.barriers import PositionBarrier

    names = franka.joint_names
    frame = franka.tool_frame
    p, quat = fk_pose(franka, franka.q0, frame)
    above = PositionBarrier(frame, indices=[2], p_min=np.array([p[2] + 0.2]), gain=1.0)
    below = PositionBarrier(frame, indices=[2], p_max=np.array([p[2] - 0.2]), gain=1.0)
    controller = PinkIKController(
        franka, names, [frame], dt=0.002, extra_barriers=[above, below], motion_limits=False
    )
    est = fresh_controller(franka)[1]
    assert controller.reset(est, None, 0.0)
    assert controller.forward(est, None, 0.0) is None
    assert "infeasible" in controller.last_error
    # the user lifts the conflict: the next tick works
    above.p_min = np.array([p[2] - 0.5])
    below.p_max = np.array([p[2] + 0.5])
    out = controller.forward(est, None, 0.002)
    assert out is not None and controller.last_error is None
    assert np.all(np.isfinite(out.joints.data_array))
