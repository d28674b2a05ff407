"""PinkIKController: closed loops in MuJoCo, setpoint semantics, solvers, barriers, joints."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import qpsolvers
from pink.barriers import PositionBarrier, SelfCollisionBarrier
from pink.limits import Limit
from pink.tasks import DampingTask, RelativeFrameTask

from pinkctl import load_pink_robot, load_pink_supported_robot
from pinkctl.controllers import ControllerStatus, PinkIKController, TickMode
from pinkctl.core.state import JointState, RobotState, SpatialState
from pinkctl.sim import MujocoSimulation

URDF_DIR = Path(__file__).parent / "urdf"
DT = 0.002


def site_target(frame, position, orientation=None):
    positions = ([frame], np.asarray(position, dtype=float).reshape(1, 3))
    orientations = None
    if orientation is not None:
        orientations = ([frame], np.asarray(orientation, dtype=float).reshape(1, 4))
    return RobotState(
        sites=SpatialState.from_name([frame], positions=positions, orientations=orientations)
    )


def rotate_z(quat, angle):
    """Quaternion (w, x, y, z) rotated by ``angle`` about the world z axis."""
    r = pin.Quaternion(np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2))
    w, x, y, z = quat
    out = r * pin.Quaternion(w, x, y, z)
    return np.array([out.w, out.x, out.y, out.z])


def quat_angle(a, b):
    return 2.0 * np.arccos(min(1.0, abs(float(np.dot(a, b)))))


def run_loop(sim, controller, setpoint, seconds, check=None):
    """Closed loop at the physics rate; returns the commanded positions (K, n)."""
    assert controller.reset(sim.get_robot_state(), None, 0.0), controller.last_error
    commands = []
    for k in range(int(round(seconds / DT))):
        est = sim.get_robot_state()
        sp = setpoint(k * DT) if callable(setpoint) else setpoint
        desired = controller.forward(est, sp, k * DT)
        assert desired is not None, controller.last_error
        commands.append(desired.joints.positions)
        if check is not None:
            check(sim, desired)
        sim.apply(desired)
        sim.step()
    return np.array(commands)


def assert_within_limits(robot, names, positions, tol=1e-9):
    model = robot.model
    idx = [model.joints[model.getJointId(n)].idx_q for n in names]
    assert np.all(positions >= model.lowerPositionLimit[idx] - tol)
    assert np.all(positions <= model.upperPositionLimit[idx] + tol)


@pytest.mark.parametrize("name", ["franka", "ur10"])
@pytest.mark.parametrize(
    ("integrate_from", "gain"),
    # closing on the measurement, the task gain sets the loop bandwidth (gain / dt = 50 /s);
    # integrating its own command, the controller can be dead-beat
    [("measured", 0.1), ("command", 1.0)],
)
def test_reaches_pose_20cm_away_in_mujoco(name, integrate_from, gain):
    robot = load_pink_supported_robot(name)
    sim = MujocoSimulation.from_robot(robot)
    offset = [0.1, 0.15, -0.1]
    controller = PinkIKController(
        robot, sim.joint_names, sim.site_names, dt=DT, integrate_from=integrate_from, gain=gain
    )
    frame = robot.tool_frame
    start, orientation = sim.get_site_pose(frame)
    goal = start + np.array(offset)
    goal_orientation = rotate_z(orientation, 0.3)
    assert np.linalg.norm(goal - start) == pytest.approx(0.206, abs=0.01)
    measured = []
    commands = run_loop(
        sim,
        controller,
        site_target(frame, goal, goal_orientation),
        4.0,
        check=lambda s, d: measured.append(s.get_joint_positions(robot.controlled_joint_names)),
    )
    pos, quat = sim.get_site_pose(frame)
    assert np.linalg.norm(pos - goal) < 1e-3
    assert quat_angle(quat, goal_orientation) < 1e-3
    assert_within_limits(robot, robot.controlled_joint_names, commands)
    assert_within_limits(robot, robot.controlled_joint_names, np.array(measured), tol=1e-6)


def test_so101_position_only_target():
    robot = load_pink_supported_robot("so101")
    sim = MujocoSimulation.from_robot(robot)
    controller = PinkIKController(
        robot, sim.joint_names, sim.site_names, orientation_cost=0.0, dt=DT
    )
    frame = robot.tool_frame
    start, _ = sim.get_site_pose(frame)
    goal = start + np.array([0.03, 0.04, -0.02])
    commands = run_loop(sim, controller, site_target(frame, goal), 3.0)
    assert np.linalg.norm(sim.get_site_pose(frame)[0] - goal) < 1e-3
    assert_within_limits(robot, robot.controlled_joint_names, commands)


def kinematic_setup(name="franka", **kwargs):
    robot = load_pink_supported_robot(name, build_collision_model=kwargs.pop("collision", False))
    sim = MujocoSimulation.from_robot(robot)
    controller = PinkIKController(robot, sim.joint_names, sim.site_names, dt=DT, **kwargs)
    return robot, sim, controller


def joint_estimate(names, positions):
    """A RobotState with the positions of ``names`` read from the ``positions`` dict."""
    return RobotState(
        joints=JointState.from_name(
            names, positions=(names, np.array([positions[n] for n in names]))
        )
    )


def kinematic_loop(controller, space, q, setpoint, ticks):
    """Integrate the commands without dynamics (the command becomes the next measurement)."""
    names = list(space)
    positions = dict(zip(names, q))
    outputs = []
    for k in range(ticks):
        desired = controller.forward(joint_estimate(names, positions), setpoint, k * DT)
        assert desired is not None, controller.last_error
        positions.update(zip(desired.joints.position_names, desired.joints.positions))
        outputs.append(desired)
    return positions, outputs


def test_only_controlled_joints_are_commanded():
    robot, sim, controller = kinematic_setup()
    est = sim.get_robot_state()
    assert controller.reset(est, None, 0.0)
    out = controller.forward(est, None, 0.0)
    assert out.joints.position_names == robot.controlled_joint_names
    assert out.joints.velocity_names == robot.controlled_joint_names
    assert out.sites is None and out.root is None and out.links is None
    # the finger stays out of the output and its measured value is used in the model
    assert "panda_finger_joint1" not in out.joints.position_names


def test_setpoint_none_holds_last_target_and_reset_pose():
    robot, sim, controller = kinematic_setup()
    frame = robot.tool_frame
    est = sim.get_robot_state()
    start, orientation = sim.get_site_pose(frame)
    assert controller.reset(est, None, 0.0)
    # no target ever given: hold the pose from reset
    out = controller.forward(est, None, 0.0)
    assert np.allclose(out.joints.velocities, 0.0, atol=1e-9)
    goal = start + [0.05, 0.0, 0.0]
    controller.forward(est, site_target(frame, goal, orientation), 0.0)
    target = controller.get_frame_task().transform_target_to_world
    controller.forward(est, None, DT)
    assert np.allclose(controller.get_frame_task().transform_target_to_world.np, target.np)
    assert np.allclose(target.translation, goal)


def test_position_only_keeps_orientation_and_orientation_only_is_ignored():
    robot, sim, controller = kinematic_setup()
    frame = robot.tool_frame
    est = sim.get_robot_state()
    start, orientation = sim.get_site_pose(frame)
    assert controller.reset(est, None, 0.0)
    turned = rotate_z(orientation, 0.4)
    controller.forward(est, site_target(frame, start, turned), 0.0)
    rotation = controller.get_frame_task().transform_target_to_world.rotation.copy()
    controller.forward(est, site_target(frame, start + [0, 0.05, 0]), DT)
    target = controller.get_frame_task().transform_target_to_world
    assert np.allclose(target.rotation, rotation)
    assert np.allclose(target.translation, start + [0, 0.05, 0])
    orientation_only = RobotState(
        sites=SpatialState.from_name([frame], orientations=([frame], orientation.reshape(1, 4)))
    )
    controller.forward(est, orientation_only, 2 * DT)
    assert np.allclose(controller.get_frame_task().transform_target_to_world.rotation, rotation)


def test_partial_joint_setpoint_is_ignored_and_complete_one_sets_posture():
    robot, sim, controller = kinematic_setup()
    est = sim.get_robot_state()
    assert controller.reset(est, None, 0.0)
    posture = controller.get_posture_task()
    before = posture.target_q.copy()
    names = robot.controlled_joint_names
    partial = RobotState(
        joints=JointState.from_name(sim.joint_names, positions=(names[:3], np.full(3, 0.3)))
    )
    controller.forward(est, partial, 0.0)
    assert np.array_equal(posture.target_q, before)
    values = np.linspace(-0.2, 0.2, len(names))
    values[3] = -1.5  # joint 4 must stay negative
    complete = RobotState(joints=JointState.from_name(sim.joint_names, positions=(names, values)))
    controller.forward(est, complete, DT)
    idx = [robot.model.joints[robot.model.getJointId(n)].idx_q for n in names]
    assert np.allclose(posture.target_q[idx], values)


def test_forward_before_reset_returns_none_and_missing_joints_brake():
    robot, sim, controller = kinematic_setup()
    est = sim.get_robot_state()
    assert controller.forward(est, None, 0.0) is None
    assert "reset" in controller.last_error
    assert controller.status is ControllerStatus.NOT_READY
    arm_only = RobotState(
        joints=JointState.from_name(sim.joint_names, positions=(sim.joint_names[:3], np.zeros(3)))
    )
    assert controller.reset(arm_only, None, 0.0) is False
    assert controller.last_error
    assert controller.status is ControllerStatus.NOT_READY
    assert controller.reset(est, None, 0.0)
    assert controller.status is ControllerStatus.OK
    # a missing estimate is a braking step from the last command (at rest: it holds)
    out = controller.forward(arm_only, None, 0.0)
    assert out is not None and controller.status is ControllerStatus.BRAKING
    assert "controlled joints" in controller.last_error
    arm = robot.controlled_joint_names
    np.testing.assert_array_equal(out.joints.get_positions(arm), est.joints.get_positions(arm))
    assert controller.forward(est, None, 0.0) is not None
    assert controller.last_error is None
    assert controller.status is ControllerStatus.OK


def test_constructor_rejects_bad_arguments():
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot)
    joints, sites = sim.joint_names, sim.site_names
    with pytest.raises(ValueError, match="tool_frame"):
        PinkIKController(robot, joints, sites, tool_frame="nope", dt=DT)
    with pytest.raises(ValueError, match="robot_site_space"):
        PinkIKController(robot, joints, ["other"], dt=DT)
    with pytest.raises(ValueError, match="robot_joint_space"):
        PinkIKController(robot, joints[:3], sites, dt=DT)
    with pytest.raises(ValueError, match="dt"):
        PinkIKController(robot, joints, sites, dt=0.0)
    with pytest.raises(ValueError, match="position_cost"):
        PinkIKController(robot, joints, sites, position_cost=-1.0, dt=DT)
    with pytest.raises(ValueError, match="orientation_cost"):
        PinkIKController(robot, joints, sites, orientation_cost=[1.0, 2.0], dt=DT)
    with pytest.raises(ValueError, match="solver"):
        PinkIKController(robot, joints, sites, solver="no_such_solver", dt=DT)
    controller = PinkIKController(robot, joints, sites, position_cost=[1.0, 2.0, 3.0], dt=DT)
    assert controller.tool_frame == "panda_hand_tcp"
    assert np.allclose(controller.get_frame_task().cost[:3], [1.0, 2.0, 3.0])


EXACT = [s for s in ("daqp", "quadprog", "clarabel") if s in qpsolvers.available_solvers]
FIRST_ORDER = [s for s in ("osqp", "proxqp") if s in qpsolvers.available_solvers]


def test_solvers_agree_on_the_same_tick():
    """Near a joint limit, every backend gives the same velocity and stays within limits."""
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot)
    names = robot.controlled_joint_names
    q = sim.get_joint_positions(names)
    q[3] = robot.model.upperPositionLimit[3] - 0.01  # joint 4 close to its upper limit
    sim.set_joint_positions(names, q)
    frame = robot.tool_frame
    start, orientation = sim.get_site_pose(frame)
    target = site_target(frame, start + [0.3, 0.2, 0.2], rotate_z(orientation, 1.0))
    est = sim.get_robot_state()
    velocities = {}
    for solver in EXACT + FIRST_ORDER:
        # a first tick from rest: acceleration/jerk limits would make every velocity tiny
        controller = PinkIKController(
            robot, sim.joint_names, sim.site_names, solver=solver, dt=DT, motion_limits=False
        )
        assert controller.reset(est, None, 0.0)
        out = controller.forward(est, target, 0.0)
        assert out is not None, f"{solver}: {controller.last_error}"
        velocities[solver] = out.joints.velocities
        assert_within_limits(robot, names, out.joints.positions)
    reference = velocities["daqp"]
    assert np.max(np.abs(reference)) > 0.5  # limits bind: a meaningful comparison
    for solver in EXACT:
        assert np.allclose(velocities[solver], reference, atol=1e-6), solver
    for solver in FIRST_ORDER:
        assert np.allclose(velocities[solver], reference, atol=1e-3), solver


def test_pink_reference_path_gives_the_same_command():
    robot, sim, fast = kinematic_setup()
    _, _, ref = kinematic_setup(qp_path="pink")
    frame = robot.tool_frame
    start, orientation = sim.get_site_pose(frame)
    est = sim.get_robot_state()
    target = site_target(frame, start + [0.1, -0.1, 0.05], rotate_z(orientation, -0.5))
    assert fast.reset(est, None, 0.0) and ref.reset(est, None, 0.0)
    a = fast.forward(est, target, 0.0)
    b = ref.forward(est, target, 0.0)
    assert np.allclose(a.joints.velocities, b.joints.velocities, atol=1e-9)


@pytest.mark.parametrize("integrate_from", ["measured", "command"])
@pytest.mark.parametrize("motion_limits", [None, False])
def test_fast_path_follows_the_pink_path_tick_by_tick(motion_limits, integrate_from):
    """Same commands, tick after tick, from the fast QP layer (one-pass assembly, clip into
    the QP box) and from pink's build_ik (clip into the velocity limits and the range), with
    and without the default motion limits, toward a target that moves and one that holds."""
    options = {"motion_limits": motion_limits, "integrate_from": integrate_from}
    robot, sim, fast = kinematic_setup(**options)
    _, _, ref = kinematic_setup(qp_path="pink", **options)
    frame = robot.tool_frame
    start, orientation = sim.get_site_pose(frame)
    names = list(sim.joint_names)
    q = sim.get_joint_positions(names)
    est = sim.get_robot_state()
    assert fast.reset(est, None, 0.0) and ref.reset(est, None, 0.0)
    positions = {"fast": dict(zip(names, q)), "ref": dict(zip(names, q))}
    largest = 0.0
    for k in range(250):
        offset = np.array([0.0, 0.1 * np.sin(0.02 * min(k, 150)), 0.05])
        target = site_target(frame, start + offset, rotate_z(orientation, 0.3))
        outputs = {}
        for label, controller in (("fast", fast), ("ref", ref)):
            measured = positions[label]
            out = controller.forward(joint_estimate(names, measured), target, k * DT)
            assert out is not None, controller.last_error
            measured.update(zip(out.joints.position_names, out.joints.positions))
            outputs[label] = out.joints
        assert_within_limits(robot, robot.controlled_joint_names, outputs["fast"].positions)
        largest = max(
            largest, float(np.abs(outputs["fast"].positions - outputs["ref"].positions).max())
        )
        assert np.allclose(outputs["fast"].velocities, outputs["ref"].velocities, atol=1e-8)
    assert largest < 1e-9
    moved = max(abs(positions["fast"][n] - q0) for n, q0 in zip(names, q))
    assert moved > 0.05  # [rad] the comparison covers real motion


def test_relative_frame_task_with_pre_step_callback_runs_as_in_the_seed():
    """The Isaac PINK docstring example, with the import path adapted."""
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot)

    relative_task = RelativeFrameTask(
        "panda_hand", "panda_link0", position_cost=1.0, orientation_cost=0.5
    )
    calls = []

    def update_relative_target(configuration, setpoint_state):
        relative_task.set_target_from_configuration(configuration)
        calls.append(setpoint_state)

    controller = PinkIKController(
        pink_robot=robot,
        robot_joint_space=sim.joint_names,
        robot_site_space=["panda_hand"],
        tool_frame="panda_hand",
        extra_tasks=[relative_task],
        pre_step_callback=update_relative_target,
        dt=1.0 / 60.0,
    )
    est = sim.get_robot_state()
    assert controller.reset(est, None, 0.0)
    out = controller.forward(est, None, 0.0)
    assert out is not None
    assert len(calls) == 1 and calls[0] is None
    # a callback that raises does not escape forward
    controller.pre_step_callback = lambda c, s: 1 / 0
    assert controller.forward(est, None, 0.0) is not None
    assert controller.status is ControllerStatus.BRAKING
    assert "ZeroDivisionError" in controller.last_error


def test_damping_task_in_extra_tasks():
    robot, sim, controller = kinematic_setup(extra_tasks=[DampingTask(cost=1e-2)], gain=0.8)
    est = sim.get_robot_state()
    assert controller.reset(est, None, 0.0)
    assert controller.forward(est, None, 0.0) is not None


def test_position_barrier_keeps_tool_above_plane():
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot)
    frame = robot.tool_frame
    start, orientation = sim.get_site_pose(frame)
    floor = start[2] - 0.1
    barrier = PositionBarrier(frame, indices=[2], p_min=np.array([floor]), gain=5.0)
    controller = PinkIKController(
        robot,
        sim.joint_names,
        sim.site_names,
        extra_barriers=[barrier],
        dt=DT,
        integrate_from="command",
    )
    lowest = []
    target = site_target(frame, start - [0.0, 0.0, 0.3], orientation)
    run_loop(
        sim, controller, target, 2.0, check=lambda s, d: lowest.append(s.get_site_pose(frame)[0][2])
    )
    assert min(lowest) > floor - 1e-3
    assert sim.get_site_pose(frame)[0][2] == pytest.approx(floor, abs=5e-3)


def test_self_collision_barrier_keeps_pairs_apart():
    robot, sim, controller = kinematic_setup(collision=True)
    d_min = 0.01
    barrier = SelfCollisionBarrier(
        n_collision_pairs=len(robot.collision_model.collisionPairs),
        gain=5.0,  # a barrier the joints can honour under their acceleration limits
        safe_displacement_gain=1.0,
        d_min=d_min,
    )
    controller = PinkIKController(
        robot, sim.joint_names, sim.site_names, extra_barriers=[barrier], dt=DT
    )
    frame = robot.tool_frame
    # a target at the robot's own base: reaching it folds the arm into itself
    target = site_target(frame, [0.05, 0.0, 0.15])
    est = sim.get_robot_state()
    assert controller.reset(est, None, 0.0)
    positions, _ = kinematic_loop(
        controller, sim.joint_names, sim.get_joint_positions(), target, 1500
    )
    model, data = robot.model, robot.model.createData()
    geom_data = robot.collision_model.createData()
    q = robot.q0.copy()
    for n in robot.controlled_joint_names:
        q[model.joints[model.getJointId(n)].idx_q] = positions[n]
    pin.computeDistances(model, data, robot.collision_model, geom_data, q)
    closest = min(r.min_distance for r in geom_data.distanceResults)
    assert closest > d_min - 2e-3
    # it did move toward the target
    pin.framesForwardKinematics(model, data, q)
    start, _ = sim.get_site_pose(frame)
    moved = np.linalg.norm(data.oMf[model.getFrameId(frame)].translation - [0.05, 0.0, 0.15])
    assert moved < np.linalg.norm(start - [0.05, 0.0, 0.15]) - 0.1


def test_start_outside_joint_limits_moves_back_inside():
    robot, sim, controller = kinematic_setup()
    names = list(sim.joint_names)
    q = sim.get_joint_positions()
    upper = robot.model.upperPositionLimit[3]
    q[3] = upper + 0.05  # joint 4 outside its range
    est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
    assert controller.reset(est, None, 0.0)
    positions, outputs = kinematic_loop(controller, names, q, None, 500)  # 1 s
    trace = np.concatenate([[q[3]], [o.joints.positions[3] for o in outputs]])
    outside = trace[:-1] > upper
    # while outside the range, every command moves toward it
    assert np.all(np.diff(trace)[outside] < 0.0)
    assert positions["panda_joint4"] <= upper + 1e-9


def _tool_tracking(robot, joint_space, start, offset):
    """Kinematic loop from the joint positions ``start`` to the tool position + ``offset``."""
    # these small arms have fewer than 6 joints: track the tool position only
    controller = PinkIKController(
        robot, joint_space, [robot.tool_frame], dt=DT, orientation_cost=0.0, posture_cost=1e-6
    )
    names = list(joint_space)
    q = np.array([start.get(n, 0.0) for n in names])
    est = RobotState(joints=JointState.from_name(names, positions=(names, q)))
    assert controller.reset(est, None, 0.0)
    tool = controller.configuration.get_transform_frame_to_world(robot.tool_frame).translation
    goal = tool + np.asarray(offset)
    positions, outputs = kinematic_loop(
        controller, joint_space, q, site_target(robot.tool_frame, goal), 800
    )
    return controller, positions, goal, outputs


def test_continuous_joint_robot_tracks_and_unwraps():
    robot = load_pink_robot(URDF_DIR / "continuous_arm.urdf")
    robot.tool_frame = "tool"
    joint_space = robot.joint_names
    start = {"joint1": 2.5, "joint2": 0.4, "joint3": 0.8}
    controller, positions, goal, outputs = _tool_tracking(
        robot, joint_space, start, [0.03, -0.02, -0.05]
    )
    model, data = robot.model, robot.model.createData()
    q = controller._joints.controlled.to_configuration(
        np.array([positions[n] for n in robot.controlled_joint_names]), robot.q0
    )
    pin.framesForwardKinematics(model, data, q)
    assert np.linalg.norm(data.oMf[model.getFrameId("tool")].translation - goal) < 1e-4
    # the continuous joint's command continues the measured angle (no wrapping to (-pi, pi])
    name = next(
        n for n in robot.controlled_joint_names if model.joints[model.getJointId(n)].nq == 2
    )
    names = list(joint_space)
    big = {n: positions[n] for n in names}
    big[name] += 4 * np.pi
    est = RobotState(
        joints=JointState.from_name(names, positions=(names, np.array([big[n] for n in names])))
    )
    out = controller.forward(est, None, 0.0)
    k = out.joints.position_names.index(name)
    assert out.joints.positions[k] == pytest.approx(big[name], abs=0.05)


def test_mimic_joint_robot_tracks_targets():
    robot = load_pink_robot(
        URDF_DIR / "mimic_gripper.urdf",
        controlled_joint_names=None,
    )
    robot.tool_frame = "tool"
    fingers = [n for n in robot.controlled_joint_names if "finger" in n]
    arm = [n for n in robot.controlled_joint_names if n not in fingers]
    robot.controlled_joint_names = arm
    joint_space = [robot.model.names[i] for i in range(1, robot.model.njoints)]
    start = {n: 0.4 for n in arm}
    controller, positions, goal, outputs = _tool_tracking(
        robot, joint_space, start, [-0.02, 0.03, 0.0]
    )
    assert outputs[-1].joints.position_names == arm
    controlled = controller._joints.controlled
    q = controlled.to_configuration(np.array([positions[n] for n in arm]), robot.q0)
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    assert np.linalg.norm(data.oMf[robot.model.getFrameId("tool")].translation - goal) < 1e-4


class JointSumLimit(Limit):
    """Inequality rows over the displacement (pink's convention, as a collision constraint
    would come in): ``|dq_0 + dq_1| <= dt * bound``."""

    def __init__(self, nv, bound):
        self.nv, self.bound = nv, bound

    def compute_qp_inequalities(self, configuration, dt):
        row = np.zeros(self.nv)
        row[:2] = 1.0
        return np.vstack([row, -row]), np.full(2, dt * self.bound)


@pytest.mark.parametrize("solver", ["box", "daqp"])
def test_extra_rows_hold_inside_the_motion_shapers_box(solver):
    """A pink Limit with inequality rows: the tick is solved inside the shaper's velocity box
    (TickMode.BOXED) by DAQP (the "box" solver hands rows to it), every command holds the rows,
    and the fast path gives pink's path's commands tick by tick (to DAQP's tolerance)."""
    robot = load_pink_supported_robot("franka")
    names = list(robot.joint_names)
    frame = robot.tool_frame
    controllers = [
        PinkIKController(
            robot,
            names,
            [frame],
            dt=DT,
            solver=solver,
            qp_path=path,
            extra_limits=[JointSumLimit(robot.model.nv, 0.2)],
        )
        for path in ("pinkctl", "pink")
    ]
    q = {n: robot.home_positions()[n] for n in names}
    for controller in controllers:
        assert controller.mode is TickMode.BOXED
        assert controller.reset(joint_estimate(names, q), None, 0.0)
    start = controllers[0].configuration.get_transform_frame_to_world(frame)
    quat = pin.Quaternion(start.rotation)
    target = site_target(frame, start.translation + [0.1, 0.15, -0.1], [quat.w, *quat.vec()])
    largest = 0.0
    for k in range(300):
        outputs = [c.forward(joint_estimate(names, q), target, k * DT) for c in controllers]
        for c in controllers:
            assert c.status is ControllerStatus.OK, c.last_error
        v = outputs[0].joints.velocities
        assert abs(v[0] + v[1]) <= 0.2 + 1e-7  # the rows hold, to the solver's tolerance
        largest = max(largest, float(np.abs(v - outputs[1].joints.velocities).max()))
        q.update(zip(outputs[0].joints.position_names, outputs[0].joints.positions))
    assert controllers[0].qp_step.last_solver == "daqp"
    # both DAQP, meeting the rows to its tolerance (bounds posed as rows on pink's path)
    assert largest <= 1e-7


def test_default_solver_and_mode_are_named():
    """The default tick: solver "box" (pinkctl's box QP, where the native kernel is built),
    TickMode.APPROACH; without motion limits PLAIN; ``solver="daqp"`` runs DAQP."""
    from pinkctl._native import native_available  # noqa: PLC0415

    robot, sim, controller = kinematic_setup()
    assert controller.solver == "box" and controller.mode is TickMode.APPROACH
    est = sim.get_robot_state()
    start, orientation = sim.get_site_pose(robot.tool_frame)
    assert controller.reset(est, None, 0.0)
    controller.forward(est, site_target(robot.tool_frame, start + [0.05, 0, 0], orientation), 0.0)
    assert controller.qp_step.last_solver == ("box" if native_available()[0] else "daqp")
    controller.solver = "daqp"
    controller.forward(est, site_target(robot.tool_frame, start + [0.05, 0, 0], orientation), DT)
    assert controller.qp_step.last_solver == "daqp" and controller.solver == "daqp"
    _, _, plain = kinematic_setup(motion_limits=False)
    assert plain.mode is TickMode.PLAIN
