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
from pinkctl.app.demo import DemoConfig, command_limit_report, robot_limits, run_demo
from pinkctl.controllers import ControllerStatus, PinkIKController
from pinkctl.core.state import JointState, RobotState, SpatialState
from pinkctl.motion.check import check_trajectory
from pinkctl.motion.limits import MotionLimits
from pinkctl.sim import MujocoSimulation

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
@pytest.mark.parametrize("integrate_from", ["measured", "command"])
def test_soak_jumping_targets(name, motion_limits, integrate_from):
    """Targets jump every 0.5 s; zero NaN, zero violations of every enforced limit set."""
    robot = load_pink_supported_robot(name)
    joints = robot.joint_names
    controller = PinkIKController(
        robot,
        joints,
        [robot.tool_frame],
        dt=DT,
        integrate_from=integrate_from,
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


def independent_limit_check(robot, commands, dt):
    """Peak ratio to its limit of every kind, the command sequence differentiated here.

    Written from the robot's own limits (the Pinocchio model's range, ``robot.*_limits``), not
    with pinkctl's checker: positions ``commands[k]``, backward differences, the robot at rest
    before ``commands[0]``. A ratio above 1 (beyond float64 rounding of the differences) is a
    command a robot's interface would reject.
    """
    names = robot.controlled_joint_names
    model = robot.model
    idx = [model.joints[model.getJointId(n)].idx_q for n in names]
    lower, upper = model.lowerPositionLimit[idx], model.upperPositionLimit[idx]
    q = np.asarray(commands)
    scale = np.maximum(1.0, np.abs(q).max(axis=0))
    eps = np.finfo(float).eps
    ratios = {"position": float(np.max(np.maximum(lower - q, q - upper) / (upper - lower)))}
    derivative = np.vstack([q[:1], q[:1], q[:1], q])  # at rest before the first command
    for order, kind in enumerate(("velocity", "acceleration", "jerk"), start=1):
        derivative = np.diff(derivative, axis=0) / dt
        limit = np.array([getattr(robot, f"{kind}_limits")[n] for n in names])
        floor = 2.0 ** (order + 1) * eps * scale / dt**order  # rounding of the differences
        ratios[kind] = float(np.max((np.abs(derivative) - floor) / limit))
    return ratios


def test_independent_checker_sees_a_hard_stop(franka):
    """The checker itself: moving at half the velocity limit, then holding, is rejected."""
    names = franka.controlled_joint_names
    speed = 0.5 * np.array([franka.velocity_limits[n] for n in names])
    start = np.array([franka.home_positions()[n] for n in names])
    ramp = start + np.outer(np.arange(50), speed * DT * 1e-3)  # slow start: within limits
    moving = ramp[-1] + np.outer(np.arange(1, 4), speed * DT)
    stop = np.repeat(moving[-1:], 3, axis=0)
    ratios = independent_limit_check(franka, np.vstack([ramp, moving, stop]), DT)
    assert ratios["position"] < 0.0 and ratios["velocity"] <= 0.5 + 1e-9
    assert ratios["acceleration"] > 50.0 and ratios["jerk"] > 1.0


def mujoco_soak(name, integrate_from, ticks, *, blocked_ticks, drop_every=97, noise=1e-4):
    """MuJoCo at 1 kHz, targets jumping every 0.5 s, dropped estimates, noisy measurements and
    a blocked arm; returns the robot, the command sequence and the statuses seen."""
    robot = load_pink_supported_robot(name)
    sim = MujocoSimulation.from_robot(robot, timestep=DT)
    controller = PinkIKController(
        robot, sim.joint_names, sim.site_names, dt=DT, integrate_from=integrate_from
    )
    rng = np.random.default_rng(11)
    targets = stress_targets(robot, rng, 20)
    arm = robot.controlled_joint_names
    assert controller.reset(sim.get_robot_state(), None, 0.0)
    commands = [sim.get_joint_positions(arm)]
    statuses = []
    blocked = range(ticks // 2, ticks // 2 + blocked_ticks)
    for k in range(ticks):
        position, orientation = targets[(k // 500) % len(targets)]
        measured = sim.get_joint_positions() + rng.normal(scale=noise, size=len(sim.joint_names))
        estimate = RobotState(
            joints=JointState.from_name(sim.joint_names, positions=(sim.joint_names, measured))
        )
        if k % drop_every == drop_every - 1:
            estimate = RobotState()  # a dropped estimate
        out = controller.forward(
            estimate, pose_state(robot.tool_frame, position, orientation), k * DT
        )
        assert out is not None, controller.last_error
        assert np.isfinite(out.joints.data_array).all()
        statuses.append(controller.status)
        commands.append(out.joints.get_positions(arm))
        if k not in blocked:  # blocked: the arm does not follow, the estimate stays put
            sim.apply(out)
            sim.step()
    return robot, np.array(commands), statuses


@pytest.mark.parametrize("name", ["franka", "ur10", "so101"])
@pytest.mark.parametrize("integrate_from", ["measured", "command"])
def test_mujoco_soak_default_settings_never_breaks_a_limit(name, integrate_from):
    """Default controller in MuJoCo: jumping targets (reachable, 2 m away, singular, behind),
    a dropped estimate every 97 ticks, 0.1 mrad noise, 0.5 s of blocked arm: every command is
    inside all four limit sets, relative to the previous command."""
    ticks = max(SOAK_TICKS // 2, 2000)
    robot, commands, statuses = mujoco_soak(name, integrate_from, ticks, blocked_ticks=500)
    ratios = independent_limit_check(robot, commands, DT)
    assert ratios["position"] <= 0.0, "a command left the position range"
    for kind in ("velocity", "acceleration", "jerk"):
        assert ratios[kind] <= 1.0 + 1e-6, (kind, ratios)
    # the limits were reached, not trivially met; every dropped estimate braked, nothing else
    assert ratios["acceleration"] > 0.9
    braking = [k for k, s in enumerate(statuses) if s is ControllerStatus.BRAKING]
    assert braking == [k for k in range(ticks) if k % 97 == 96]


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
    # no estimate of the controlled joints: a braking step (at rest: the same command)
    held = controller.forward(wrong_space, good, 0.0)
    assert controller.status is ControllerStatus.BRAKING and controller.last_error
    assert np.array_equal(
        held.joints.positions, est.joints.get_positions(held.joints.position_names)
    )
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
    """A solver that fails (OSQP stopped after one iteration) hands the tick to daqp."""
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
    assert alone.forward(est, target, 0.0) is not None
    assert alone.status is ControllerStatus.BRAKING
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


def test_conflicting_user_constraints_brake_then_recover(franka):
    """Two barriers that cannot both hold: a braking step with the reason, then work again."""
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
    assert controller.forward(est, None, 0.0) is not None
    assert controller.status is ControllerStatus.BRAKING
    assert "infeasible" in controller.last_error
    # the user lifts the conflict: the next tick works
    above.p_min = np.array([p[2] - 0.5])
    below.p_max = np.array([p[2] + 0.5])
    out = controller.forward(est, None, 0.002)
    assert out is not None and controller.last_error is None
    assert controller.status is ControllerStatus.OK
    assert np.all(np.isfinite(out.joints.data_array))


# ---------------------------------------------------------------------- failed ticks


def kinematic_start(robot, **kwargs):
    """A 1 kHz controller over every joint, reset at home; returns it, the names and q."""
    names = robot.joint_names
    controller = PinkIKController(robot, names, [robot.tool_frame], dt=DT, **kwargs)
    q = np.array([robot.home_positions()[n] for n in names])
    assert controller.reset(
        RobotState(joints=JointState.from_name(names, positions=(names, q))), None, 0.0
    )
    return controller, names, q


def moving_controller(robot, **kwargs):
    """A default kinematic 1 kHz controller driven toward a target 0.3 m away for 0.3 s: the
    arm is at speed. Returns the controller, the joint space, q and the last commands."""
    controller, names, q = kinematic_start(robot, **kwargs)
    p, quat = fk_pose(robot, robot.q0, robot.tool_frame)
    target = pose_state(robot.tool_frame, p + [0.0, 0.3, -0.1], quat)
    commands = [q[[names.index(n) for n in robot.controlled_joint_names]]]
    for k in range(300):
        est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
        out = controller.forward(est, target, k * DT)
        q[out.joints.position_indices] = out.joints.positions
        commands.append(out.joints.positions.copy())
    return controller, names, q, commands, target


def braking_time(robot):
    """Upper bound on the time to stop from full speed: v/A + A/J per joint, plus a margin."""
    names = robot.controlled_joint_names
    v = np.array([robot.velocity_limits[n] for n in names])
    a = np.array([robot.acceleration_limits[n] for n in names])
    j = np.array([robot.jerk_limits[n] for n in names])
    return float(np.max(v / a + a / j)) + 10 * DT


@pytest.mark.parametrize("failure", ["qp", "estimate", "callback"])
def test_failed_tick_mid_motion_brakes_within_limits_to_rest(franka, failure):
    """From speed, every tick fails from now on: each output is the next braking step, inside
    all four limit sets, and the arm is at rest within the braking time."""
    controller, names, q, commands, target = moving_controller(franka)
    speed = np.abs(np.diff(commands[-2:], axis=0)).max() / DT
    assert speed > 0.3  # really moving
    if failure == "qp":  # OSQP stopped after one iteration, no polish: every solve fails
        controller.solver = "osqp"
        controller.solver_options = {"max_iter": 1, "polish": False}
    elif failure == "callback":
        controller.pre_step_callback = lambda configuration, setpoint: 1 / 0
    limit = braking_time(franka)
    stopped_at = None
    for k in range(int(limit / DT) + 50):
        est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
        out = controller.forward(
            RobotState() if failure == "estimate" else est, target, 0.3 + k * DT
        )
        assert out is not None and controller.status is ControllerStatus.BRAKING
        assert controller.last_error
        q[out.joints.position_indices] = out.joints.positions
        commands.append(out.joints.positions.copy())
        if stopped_at is None and not np.any(out.joints.velocities):
            stopped_at = k * DT
    ratios = independent_limit_check(franka, np.array(commands), DT)
    assert ratios["position"] <= 0.0
    assert max(ratios["velocity"], ratios["acceleration"], ratios["jerk"]) <= 1.0 + 1e-6
    assert stopped_at is not None and stopped_at <= limit
    np.testing.assert_array_equal(commands[-1], commands[-2])  # and stays at rest


def test_braking_then_recovery_continues_smoothly(franka):
    """A dropped estimate mid-motion: one braking step, then the tasks again, no limit
    broken across the switch in either direction."""
    controller, names, q, commands, target = moving_controller(franka)
    for k in range(200):
        est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
        dropped = k in (5, 6, 40)
        out = controller.forward(RobotState() if dropped else est, target, 0.3 + k * DT)
        expected = ControllerStatus.BRAKING if dropped else ControllerStatus.OK
        assert controller.status is expected
        q[out.joints.position_indices] = out.joints.positions
        commands.append(out.joints.positions.copy())
    ratios = independent_limit_check(franka, np.array(commands), DT)
    assert max(ratios["velocity"], ratios["acceleration"], ratios["jerk"]) <= 1.0 + 1e-6


def test_daqp_cycling_is_retried_not_a_failed_tick(franka):
    """No posture task and a target 2 m away made DAQP report cycling on most ticks; the
    regularised retry solves them."""
    for motion_limits in (True, False):
        controller, names, q = kinematic_start(
            franka, posture_cost=0.0, motion_limits=motion_limits
        )
        p, quat = fk_pose(franka, franka.q0, franka.tool_frame)
        target = pose_state(franka.tool_frame, p + [2.0, 0.0, 0.0], quat)
        for k in range(1000):
            est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
            out = controller.forward(est, target, k * DT)
            assert controller.status is ControllerStatus.OK, controller.last_error
            q[out.joints.position_indices] = out.joints.positions


# ---------------------------------------------------------------------- convergence


def settle(robot, motion_limits, offset, *, seconds=4.0, **kwargs):
    """Kinematic 1 kHz loop toward the home tool pose + ``offset``; returns the final tool
    position error [m], the largest |velocity| of the last 0.5 s, and the controller."""
    controller, names, q = kinematic_start(robot, motion_limits=motion_limits, **kwargs)
    p, quat = fk_pose(robot, robot.q0, robot.tool_frame)
    goal = p + np.asarray(offset)
    target = pose_state(robot.tool_frame, goal, quat)
    late = 0.0
    ticks = int(seconds / DT)
    for k in range(ticks):
        est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
        out = controller.forward(est, target, k * DT)
        assert controller.status is ControllerStatus.OK, controller.last_error
        q[out.joints.position_indices] = out.joints.positions
        if k >= ticks - int(0.5 / DT):
            late = max(late, float(np.abs(out.joints.velocities).max()))
    final = arm_q(robot, q[[names.index(n) for n in robot.controlled_joint_names]])
    error = float(np.linalg.norm(fk_pose(robot, final, robot.tool_frame)[0] - goal))
    return error, late, controller


@pytest.mark.parametrize("name", ["franka", "ur10", "so101"])
def test_every_bundled_robot_settles_with_motion_limits(name):
    """A fixed target 3.6 cm away: with motion limits the arm comes to rest where it does
    without them (the UR10 and SO-101 used to ring in a limit cycle forever)."""
    robot = load_pink_supported_robot(name)
    offset = [0.02, 0.02, -0.02]
    free_error, _, _ = settle(robot, False, offset)
    error, late, _ = settle(robot, None, offset)
    assert late < 1e-6  # at rest (a limit cycle moved at 0.16 to 0.5 rad/s)
    assert abs(error - free_error) < 1e-6  # the same accuracy (SO-101: its 5-DoF optimum)


def test_joint_only_setpoint_moves_with_motion_limits(franka):
    """Frame costs 0, posture cost 1: the posture target is reached (a joint whose wanted
    speed was exactly 0 used to freeze every joint)."""
    controller, names, q = kinematic_start(
        franka, position_cost=0.0, orientation_cost=0.0, posture_cost=1.0
    )
    arm = franka.controlled_joint_names
    goal = np.array([franka.home_positions()[n] for n in arm])
    goal[0] += 0.3  # only joint 1 moves: the others want exactly zero speed
    setpoint = RobotState(joints=JointState.from_name(arm, positions=(arm, goal)))
    for k in range(2000):
        est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
        out = controller.forward(est, setpoint, k * DT)
        q[out.joints.position_indices] = out.joints.positions
    np.testing.assert_allclose(out.joints.positions, goal, atol=1e-6)


# ---------------------------------------------------------------------- never raise, never hang


def test_frame_task_gain_zero_at_run_time_does_not_raise(franka):
    controller, names, q, commands, target = moving_controller(franka)
    controller.get_frame_task().gain = 0.0
    est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
    for k in range(20):
        assert controller.forward(est, target, 0.3 + k * DT) is not None


@pytest.mark.parametrize("solver", ["daqp", "quadprog", "osqp", "clarabel", "proxqp"])
def test_absurd_target_is_refused_not_solved_for_seconds(franka, solver):
    """A target 1e8 m away kept ProxQP busy for 35 s: it is refused (braking, reason given);
    a far but finite target (500 m) still solves, and every solver has an iteration cap."""
    from pinkctl.qp.solvers import DEFAULT_SOLVER_OPTIONS

    controller, est = fresh_controller(franka)
    controller.solver = solver
    frame = franka.tool_frame
    for distance in (1e8, 1e100):
        out = controller.forward(
            est, pose_state(frame, [distance, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]), 0.0
        )
        assert out is not None and controller.status is ControllerStatus.BRAKING
        assert "beyond" in controller.last_error
    out = controller.forward(est, pose_state(frame, [500.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]), 0.0)
    assert controller.status is ControllerStatus.OK, controller.last_error
    if solver in ("osqp", "proxqp"):
        assert DEFAULT_SOLVER_OPTIONS[solver]["max_iter"] <= 10000


def test_gripper_nan_time_holds_and_recovers():
    from pinkctl import GripperController

    gripper = GripperController(
        ["finger"], joint="finger", open_position=0.04, closed_position=0.0, speed=0.1
    )
    est = RobotState(joints=JointState.from_name(["finger"], positions=(["finger"], [0.04])))
    assert gripper.reset(est, None, 0.0)
    gripper.close()
    assert gripper.forward(est, None, 0.1).joints.positions[0] == pytest.approx(0.03)
    held = gripper.forward(est, None, float("nan"))
    assert held.joints.positions[0] == pytest.approx(0.03) and held.joints.velocities[0] == 0.0
    assert "finite" in gripper.last_error
    assert gripper.forward(est, None, 0.2).joints.positions[0] == pytest.approx(0.02)
    assert gripper.last_error is None
    assert not gripper.reset(est, None, float("inf"))


# ---------------------------------------------------------------------- without motion limits


@pytest.mark.parametrize("integrate_from", ["measured", "command"])
def test_without_motion_limits_range_and_configured_velocity_hold(integrate_from):
    """motion_limits=False, 0.1 mrad noise, joint 4 parked at its upper limit and a target
    that pulls it further, configured velocity limits of 1 rad/s (the URDF says 2.175):
    every command is inside the range and within 1 rad/s of the previous one."""
    robot = load_pink_supported_robot("franka")
    robot.velocity_limits = {n: 1.0 for n in robot.controlled_joint_names}
    names = robot.joint_names
    controller = PinkIKController(
        robot,
        names,
        [robot.tool_frame],
        dt=DT,
        motion_limits=False,
        integrate_from=integrate_from,
    )
    model = robot.model
    j4 = model.joints[model.getJointId("panda_joint4")].idx_q
    q = np.array([robot.home_positions()[n] for n in names])
    q[names.index("panda_joint4")] = model.upperPositionLimit[j4]
    assert controller.reset(
        RobotState(joints=JointState.from_name(names, positions=(names, q))), None, 0.0
    )
    start = q.copy()
    start_full = arm_q(robot, start[[names.index(n) for n in robot.controlled_joint_names]])
    p, quat = fk_pose(robot, start_full, robot.tool_frame)
    rng = np.random.default_rng(5)
    commands = [start[[names.index(n) for n in robot.controlled_joint_names]]]
    for k in range(3000):
        # targets far out: the arm stretches, joint 4 pushed against its limit, fast moves
        target = pose_state(robot.tool_frame, p + [0.8 * ((k // 500) % 2), 0.3, 0.2], quat)
        noisy = q + rng.normal(scale=1e-4, size=q.size)
        est = RobotState(joints=JointState.from_name(names, positions=(names, noisy)))
        out = controller.forward(est, target, k * DT)
        assert controller.status is ControllerStatus.OK, controller.last_error
        q[out.joints.position_indices] = out.joints.positions
        commands.append(out.joints.positions.copy())
    commands = np.array(commands)
    idx = [model.joints[model.getJointId(n)].idx_q for n in robot.controlled_joint_names]
    assert np.all(commands >= model.lowerPositionLimit[idx])
    assert np.all(commands <= model.upperPositionLimit[idx])
    speed = np.abs(np.diff(commands, axis=0)) / DT
    assert speed.max() <= 1.0 + 1e-9
    assert speed.max() > 0.9  # the limit was reached


# ---------------------------------------------------------------------- bugs are visible


def _buggy(controller):
    """Make the controller's compiled QP fail the way a bug would (not a solver failure), on
    the Python path (the compiled tick does not call the QP object)."""

    def solve(*args, **kwargs):
        return 1 / 0

    controller.compiled = False
    controller.qp_step.solve = solve


def test_an_unexpected_error_brakes_with_its_traceback_logged(franka, caplog, monkeypatch):
    """A bug inside a tick (here a ZeroDivisionError in the QP) is not swallowed: the tick
    brakes with the exception named, its traceback goes to the ``pinkctl`` logger, and the
    next healthy tick runs again."""
    monkeypatch.delenv("PINKCTL_DEBUG", raising=False)
    controller, est = fresh_controller(franka)
    p, quat = fk_pose(franka, franka.q0, franka.tool_frame)
    target = pose_state(franka.tool_frame, p + [0.02, 0.0, 0.0], quat)
    _buggy(controller)
    with caplog.at_level("ERROR", logger="pinkctl"):
        out = controller.forward(est, target, 0.0)
    assert out is not None and controller.status is ControllerStatus.BRAKING
    assert "internal error: ZeroDivisionError" in controller.last_error
    records = [r for r in caplog.records if r.name == "pinkctl" and r.levelname == "ERROR"]
    assert records and records[0].exc_info is not None
    assert "Traceback" in caplog.text and "1 / 0" in caplog.text
    del controller.qp_step.solve  # the bug fixed: the class's method again
    assert controller.forward(est, target, 0.002) is not None
    assert controller.status is ControllerStatus.OK, controller.last_error


def test_debug_mode_reraises_an_unexpected_error(franka, monkeypatch):
    """``PINKCTL_DEBUG=1``: the same bug propagates out of ``forward``; known runtime
    conditions (here a failing user callback) still brake."""
    monkeypatch.setenv("PINKCTL_DEBUG", "1")
    controller, est = fresh_controller(franka)
    controller.pre_step_callback = lambda configuration, setpoint: 1 / 0
    assert controller.forward(est, None, 0.0) is not None
    assert controller.status is ControllerStatus.BRAKING
    assert "pre_step_callback raised ZeroDivisionError" in controller.last_error
    controller.pre_step_callback = None
    _buggy(controller)
    with pytest.raises(ZeroDivisionError):
        controller.forward(est, None, 0.002)
