"""pinkctl.view without a browser: IkTarget (the seed's IK hook API), the scene, recordings,
the native viewer's loop and the ``pinkctl view`` command's failure modes."""

from __future__ import annotations

import re
import textwrap
import time

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from pinkctl import (
    FigureEightTrajectory,
    MujocoSimulation,
    load_pink_supported_robot,
)
from pinkctl.app.cli import main
from pinkctl.view import (
    IkTarget,
    InteractiveScene,
    MinimumJerkMove,
    RecordedSession,
    SampledPoseTrajectory,
    make_scene,
    minimum_jerk,
    select_joints,
)
from pinkctl.view.app import build_scene, load_robot
from pinkctl.view.native import NativeViewerError, follow_markers, run_native

FRANKA_ARM = [f"panda_joint{i}" for i in range(1, 8)]


@pytest.fixture(scope="module")
def franka():
    return load_pink_supported_robot("franka")


@pytest.fixture
def scene(franka):
    return make_scene(MujocoSimulation.from_robot(franka), marker="pinkctl_target")


def _sim_state(sim):
    d = sim.data
    return [d.time, d.qpos.copy(), d.qvel.copy(), d.ctrl.copy(), d.act.copy(), d.mocap_pos.copy()]


# ---------------------------------------------------------------------------------- motion
def test_minimum_jerk_profile():
    assert minimum_jerk(0.0) == (0.0, 0.0)
    assert minimum_jerk(1.0) == (1.0, 0.0)
    s, ds = minimum_jerk(0.5)
    assert s == pytest.approx(0.5) and ds == pytest.approx(1.875)
    taus = np.linspace(0.0, 1.0, 1001)
    values = np.array([minimum_jerk(t)[0] for t in taus])
    assert np.all(np.diff(values) >= 0.0)  # monotonic: no overshoot
    numeric = np.gradient(values, taus)
    assert np.allclose(numeric[1:-1], [minimum_jerk(t)[1] for t in taus[1:-1]], atol=1e-4)


def test_minimum_jerk_move_orientation_and_velocity():
    quarter = np.array([np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)])  # 90 deg about z
    move = MinimumJerkMove(
        start_position=np.zeros(3),
        start_quaternion=np.array([1.0, 0.0, 0.0, 0.0]),
        goal_position=np.array([0.2, 0.0, 0.0]),
        goal_quaternion=quarter,
        start_time=1.0,
        duration=0.5,
    )
    p, q, v, w = move.sample(1.25)
    assert np.allclose(p, [0.1, 0.0, 0.0])
    assert np.allclose(q, [np.cos(np.pi / 8), 0.0, 0.0, np.sin(np.pi / 8)])
    assert np.allclose(v, [1.875 * 0.2 / 0.5, 0.0, 0.0])
    assert np.allclose(w, [0.0, 0.0, 1.875 * (np.pi / 2) / 0.5])
    for t in (0.0, 1.0, 1.5, 9.0):
        _, _, v, w = move.sample(t)
        assert np.allclose(v, 0.0) and np.allclose(w, 0.0)
    with pytest.raises(ValueError):
        MinimumJerkMove(
            start_position=np.zeros(3),
            start_quaternion=quarter,
            goal_position=np.zeros(3),
            goal_quaternion=quarter,
            start_time=0.0,
            duration=0.0,
        )


def test_moveTarget_duration_reaches_pose_with_zero_velocity_at_both_ends(scene):
    target = scene.target()
    start = target.target_pose()
    goal = start.position + np.array([0.05, 0.1, -0.08])
    tilt = np.array([np.cos(0.1), np.sin(0.1), 0.0, 0.0])  # 0.2 rad about world x
    w1, x1, _, _ = tilt
    w2, x2, y2, z2 = start.quaternion
    goal_q = np.array([w1 * w2 - x1 * x2, w1 * x2 + x1 * w2, w1 * y2 - x1 * z2, w1 * z2 + x1 * y2])
    t0 = scene.time
    target.move_target(goal, goal_q, duration=0.5)
    assert target.animating
    dt = scene.control_period
    positions, times = [], []
    for _ in range(round(0.5 / dt) + 1):
        scene.step()
        pose = target.target_pose()
        positions.append(pose.position)
        times.append(scene.time - dt)  # the tick's time: the pose was set at the tick start
    positions = np.array(positions)
    times = np.array(times) - t0
    # first tick at t0: still at the start, at rest
    assert np.allclose(positions[0], start.position, atol=1e-12)
    # at t0 + duration: exactly the goal, at rest, animation over
    end = target.target_pose()
    assert times[-1] == pytest.approx(0.5, abs=1e-9)
    assert np.allclose(end.position, goal, atol=1e-12)
    assert abs(abs(float(np.dot(end.quaternion, goal_q / np.linalg.norm(goal_q)))) - 1) < 1e-12
    assert np.allclose(end.linear_velocity, 0.0) and np.allclose(end.angular_velocity, 0.0)
    assert not target.animating
    # zero velocity at both ends of the sampled path, the minimum-jerk peak in the middle
    speed = np.linalg.norm(np.diff(positions, axis=0), axis=1) / dt
    assert speed[0] < 1e-3 and speed[-1] < 1e-3
    distance = np.linalg.norm(goal - start.position)
    assert speed.max() == pytest.approx(1.875 * distance / 0.5, rel=0.01)
    # the arm follows: within 1 mm of the goal 0.3 s later
    scene.run(0.3)
    assert target.tracking_error()[0] < 1e-3


def test_moveTarget_instant_and_bad_input_leaves_target_unchanged(scene):
    target = scene.target()
    before = target.target_pose()
    for bad in ([np.nan, 0, 0], [0, 0], "xyz"):
        with pytest.raises(ValueError):
            target.move_target(bad)
    with pytest.raises(ValueError):
        target.move_target(before.position, [0, 0, 0, 0])
    with pytest.raises(ValueError):
        target.move_target(before.position, duration=-1.0)
    assert np.array_equal(target.target_pose().position, before.position)
    target.move_target(before.position + [0.0, 0.0, 0.05])  # keeps the orientation
    after = target.target_pose()
    assert np.allclose(after.position, before.position + [0.0, 0.0, 0.05])
    assert np.allclose(after.quaternion, before.quaternion)


def test_target_pose_reports_roll_pitch_yaw(scene):
    target = scene.target()
    roll, pitch, yaw = 0.3, -0.2, 1.1
    rotation = pin.rpy.rpyToMatrix(roll, pitch, yaw)
    quaternion = pin.Quaternion(rotation)
    wxyz = [quaternion.w, quaternion.x, quaternion.y, quaternion.z]
    target.move_target([0.4, 0.1, 0.5], wxyz)
    pose = target.target_pose()
    assert np.allclose(pose.rpy, [roll, pitch, yaw])
    assert np.allclose(pose.position, [0.4, 0.1, 0.5])


# ---------------------------------------------------------------------------------- solve_ik
def test_solveIK_does_not_touch_the_simulation(scene, franka):
    target = scene.target()
    scene.run(0.05)
    sim = scene.sim
    before = _sim_state(sim)
    home = target.target_pose()
    goal = home.position + np.array([0.05, -0.1, -0.1])
    q = target.solve_ik(goal, home.quaternion)
    q_position_only = target.solve_ik(goal, current_q=np.array(franka.q0[:7]))
    after = _sim_state(sim)
    for a, b in zip(before, after, strict=True):
        assert np.array_equal(a, b)
    for solution, check_orientation in ((q, True), (q_position_only, False)):
        assert solution is not None and solution.shape == (7,)
        full = franka.q0.copy()
        full[:7] = solution
        data = franka.model.createData()
        pin.framesForwardKinematics(franka.model, data, full)
        pose = data.oMf[franka.model.getFrameId(target.site)]
        assert np.linalg.norm(pose.translation - goal) < 1e-4
        if check_orientation:
            w, x, y, z = home.quaternion
            wanted = pin.Quaternion(w, x, y, z).toRotationMatrix()
            assert np.linalg.norm(pin.log3(pose.rotation @ wanted.T)) < 1e-4
    assert target.solve_ik([5.0, 0.0, 0.0]) is None  # out of reach
    with pytest.raises(ValueError):
        target.solve_ik(goal, current_q=[0.0, 0.0])


# ---------------------------------------------------------------------------------- ik_solve_fn
def test_ikSolveFn_is_called_and_applied(franka):
    calls = []
    answer = np.array([0.1, -0.5, 0.0, -2.0, 0.0, 1.6, 0.7])

    def solver(position, quaternion, current_q):
        calls.append((position, quaternion, current_q))
        return answer

    sim = MujocoSimulation.from_robot(franka)
    scene = InteractiveScene(sim)
    target = scene.add_target(ik_solve_fn=solver)
    pose = target.target_pose()
    measured = sim.data.qpos[:7].copy()
    scene.step()
    assert len(calls) == 1
    position, quaternion, current_q = calls[0]
    assert np.array_equal(position, pose.position)
    assert np.array_equal(quaternion, pose.quaternion)
    assert np.allclose(current_q, measured)
    assert np.array_equal(sim.data.ctrl[:7], answer)  # written to the arm's servos
    assert target.commands_written == 1 and target.last_error is None
    scene.run(1.0)
    assert np.abs(sim.data.qpos[:7] - answer).max() < 1e-2  # the servos went there
    # solve_ik goes through the hook too (position only: quaternion None), state untouched
    before = _sim_state(sim)
    assert np.array_equal(target.solve_ik([0.3, 0.0, 0.5]), answer)
    assert calls[-1][1] is None
    assert all(np.array_equal(a, b) for a, b in zip(before, _sim_state(sim), strict=True))


def test_ikSolveFn_none_keeps_last_command_and_sets_last_error(franka):
    replies = iter([np.full(7, 0.1), None, RuntimeError("diverged"), [1.0, 2.0], np.full(7, 0.2)])

    def solver(position, quaternion, current_q):
        reply = next(replies)
        if isinstance(reply, Exception):
            raise reply
        return reply

    sim = MujocoSimulation.from_robot(franka)
    scene = InteractiveScene(sim)
    target = scene.add_target(ik_solve_fn=solver)
    scene.step()
    first = sim.data.ctrl[:7].copy()
    assert np.allclose(first[:4], np.clip(0.1, *sim.model.jnt_range[:4].T))
    for expected in ("returned None", "raised RuntimeError: diverged", "expected 7"):
        scene.step()  # never raises
        assert np.array_equal(sim.data.ctrl[:7], first)  # the last command stays
        assert expected in target.last_error
        assert target.status == "error"
        assert target.commands_written == 1
    scene.step()
    assert target.last_error is None and target.status == "ok"
    assert target.commands_written == 2


def test_switching_back_from_a_hook_restarts_the_qp_step(scene):
    target = scene.target()
    hold = scene.sim.data.qpos[:7].copy()
    target.ik_solve_fn = lambda p, q, current: hold
    scene.run(0.1)
    target.ik_solve_fn = None
    target.move_target(target.target_pose().position + [0.0, 0.05, 0.0])
    scene.run(0.6)
    assert target.controller is not None and target.status == "ok"
    assert target.tracking_error()[0] < 1e-3
    with pytest.raises(ValueError):
        target.ik_solve_fn = "not callable"


# ---------------------------------------------------------------------------------- enable
def test_setIkEnabled_false_writes_nothing_and_user_commands_pass_untouched(scene):
    target = scene.target()
    sim = scene.sim
    scene.run(0.1)
    target.set_ik_enabled(False)
    assert target.status == "disabled"
    written = target.commands_written
    user = sim.data.qpos[:7] + 0.05
    sim.data.ctrl[:7] = user
    target.move_target(target.target_pose().position + [0.0, 0.1, 0.0])
    scene.run(0.5)
    assert target.commands_written == written
    assert np.array_equal(sim.data.ctrl[:7], user)
    assert np.abs(sim.data.qpos[:7] - user).max() < 2e-3  # the servos obey the user
    # on again: the command starts at the measured joints (no jump), then tracks the target
    target.set_ik_enabled(True)
    measured = sim.data.qpos[:7].copy()
    scene.step()
    assert target.commands_written == written + 1
    assert np.abs(target.last_command - measured).max() < 1e-3
    scene.run(1.0)
    assert target.tracking_error()[0] < 1e-3
    with pytest.raises(ValueError):
        target.set_ik_enabled("yes")


def test_syncTargetToSite_after_moving_joints_by_hand(scene):
    target = scene.target()
    scene.run(0.05)
    moved = {name: value + 0.2 for name, value in scene.sim.robot.home_positions().items()}
    moved = {k: v for k, v in moved.items() if k in FRANKA_ARM}
    scene.sim.reset(q=moved)
    target.sync_target_to_site()
    assert target.tracking_error()[0] == pytest.approx(0.0, abs=1e-12)
    # the controller restarted from the new joints: the tool stays (no jump back to the
    # old command); only the posture task moves the redundant joint, slowly
    errors = []
    for _ in range(15):
        scene.run(0.02)
        errors.append(target.tracking_error()[0])
    assert max(errors) < 1e-3


def test_go_home_and_trajectory_overridden_by_the_gizmo(scene):
    target = scene.target()
    home_position, _ = target.home_pose
    target.move_target(home_position + [0.0, -0.12, -0.05])
    scene.run(0.8)
    scene.go_home(duration=0.5)
    scene.run(1.0)
    assert np.linalg.norm(target.target_pose().position - home_position) < 1e-12
    assert target.tracking_error()[0] < 1e-3
    pose = target.target_pose()
    figure8 = FigureEightTrajectory(
        target.site, pose.position, half_width=0.1, period=2.0, plane="yz",
        orientation=pose.quaternion, cycles=5, ramp_time=0.5,
    )  # fmt: skip
    target.follow_trajectory(figure8)
    scene.run(1.0)
    assert target.following
    assert np.linalg.norm(target.target_pose().position - pose.position) > 0.01
    assert np.linalg.norm(target.target_pose().linear_velocity) > 0.01
    target.move_target(pose.position)  # a gizmo drag overrides the trajectory
    assert not target.following
    scene.run(0.5)
    assert np.array_equal(target.target_pose().position, pose.position)
    with pytest.raises(ValueError):
        target.follow_trajectory("figure8")


# ---------------------------------------------------------------------------------- joints
def test_useIkController_siteName_joints_and_actuators_on_franka(franka):
    sim = MujocoSimulation.from_robot(franka)
    target = IkTarget(sim)
    assert target.site == "panda_hand_tcp"
    assert target.joint_names == FRANKA_ARM  # the fingers are not on the chain
    assert target.actuator_names == FRANKA_ARM
    by_regex = select_joints(sim.model, "panda_hand_tcp", joints=r"panda_joint[1-4]$")
    assert list(by_regex.joint_names) == FRANKA_ARM[:4]
    by_names = select_joints(sim.model, "panda_hand_tcp", joints=FRANKA_ARM[::-1])
    assert list(by_names.joint_names) == FRANKA_ARM[::-1]
    by_actuators = select_joints(sim.model, "panda_hand_tcp", actuators=re.compile("^panda_j"))
    assert list(by_actuators.joint_names) == FRANKA_ARM
    with pytest.raises(ValueError, match="matches none"):
        select_joints(sim.model, "panda_hand_tcp", joints="^nothing")
    with pytest.raises(ValueError, match="unknown"):
        select_joints(sim.model, "panda_hand_tcp", joints=["panda_joint9"])
    with pytest.raises(ValueError, match="not both"):
        select_joints(sim.model, "panda_hand_tcp", joints=FRANKA_ARM, actuators=FRANKA_ARM)
    with pytest.raises(ValueError, match="site"):
        IkTarget(sim, site="panda_link3")


def _dual_arm_urdf(path):
    """A base with two 4-joint arms (yaw, pitch, pitch, pitch), 0.6 m apart."""
    links = [
        '<link name="base"><inertial><mass value="5"/>'
        '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
    ]
    joints = []
    for side, y in (("left", 0.3), ("right", -0.3)):
        parent = "base"
        for k, (axis, xyz) in enumerate(
            [("0 0 1", f"0 {y} 0.1"), ("0 1 0", "0 0 0.1"), ("0 1 0", "0 0 0.3"),
             ("0 1 0", "0 0 0.3")]
        ):  # fmt: skip
            link = f"{side}_link{k + 1}"
            links.append(
                f'<link name="{link}"><inertial><origin xyz="0 0 0.1"/><mass value="1"/>'
                '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
                f'<visual><origin xyz="0 0 0.1"/><geometry><cylinder radius="0.03" length="0.2"/>'
                "</geometry></visual></link>"
            )
            joints.append(
                f'<joint name="{side}_joint{k + 1}" type="revolute"><parent link="{parent}"/>'
                f'<child link="{link}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>'
                '<limit lower="-2.8" upper="2.8" effort="50" velocity="2"/></joint>'
            )
            parent = link
        links.append(f'<link name="{side}_tool"/>')
        joints.append(
            f'<joint name="{side}_tool_joint" type="fixed"><parent link="{parent}"/>'
            f'<child link="{side}_tool"/><origin xyz="0 0 0.25"/></joint>'
        )
    path.write_text(
        '<?xml version="1.0"?>\n<robot name="dual_arm">\n'
        + textwrap.indent("\n".join(links + joints), "  ")
        + "\n</robot>\n"
    )
    return path


def test_dual_arm_targets_pick_their_own_arm_and_move_independently(tmp_path):
    sites = ["left_tool", "right_tool"]
    # two tips: where the loader cannot infer the arm alone, the sites' chains are the joints
    robot = load_robot(str(_dual_arm_urdf(tmp_path / "dual_arm.urdf")), sites)
    assert sorted(robot.controlled_joint_names) == sorted(
        f"{side}_joint{k}" for side in ("left", "right") for k in range(1, 5)
    )
    robot.q0[:] = [0.0, 0.3, 0.6, 0.4] * 2  # bent elbows, away from the straight singularity
    scene = build_scene(robot, sites)
    left, right = scene.targets
    assert left.joint_names == [f"left_joint{k}" for k in range(1, 5)]
    assert right.joint_names == [f"right_joint{k}" for k in range(1, 5)]
    # 4-joint chains track the position only (orientation cost 0)
    left.move_target(left.target_pose().position + [0.05, 0.05, -0.05])
    right_start = right.target_pose().position
    right.move_target(right_start + [-0.05, 0.0, 0.08], duration=0.3)
    scene.run(1.5)
    assert left.tracking_error()[0] < 1e-3
    assert right.tracking_error()[0] < 1e-3
    assert np.linalg.norm(right.target_pose().position - right_start - [-0.05, 0, 0.08]) < 1e-12
    # each target has its own mocap marker that shows it
    for index, target in enumerate(scene.targets):
        name = "pinkctl_target" if index == 0 else f"pinkctl_target_{index}"
        body = mujoco.mj_name2id(scene.sim.model, mujoco.mjtObj.mjOBJ_BODY, name)
        mocap = scene.sim.model.body_mocapid[body]
        assert np.allclose(scene.sim.data.mocap_pos[mocap], target.target_pose().position)
    # two targets may not drive the same joints
    other = InteractiveScene(scene.sim)
    other.add_target(site="left_tool", joints=r"joint1$")  # left_joint1 and right_joint1
    with pytest.raises(ValueError, match="both drive"):
        other.add_target(site="right_tool", joints=r"^right_joint")
    with pytest.raises(ValueError, match="already has a target"):
        other.add_target(site="left_tool", joints=["left_joint2"])


# ---------------------------------------------------------------------------------- recording
def test_sampled_pose_trajectory_interpolates_with_velocities():
    quarter = [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]
    trajectory = SampledPoseTrajectory(
        "tool",
        times=[2.0, 3.0, 5.0],
        positions=[[0, 0, 0], [1, 0, 0], [1, 2, 0]],
        quaternions=[[1, 0, 0, 0], quarter, quarter],
    )
    assert trajectory.duration == 3.0
    p, q, v, w = trajectory.sample(0.5)
    assert np.allclose(p, [0.5, 0, 0]) and np.allclose(v, [1, 0, 0])
    assert np.allclose(q, [np.cos(np.pi / 8), 0, 0, np.sin(np.pi / 8)])
    assert np.allclose(w, [0, 0, np.pi / 2])
    state = trajectory.get_target_state(2.0)
    assert np.allclose(state.sites.get_position("tool"), [1, 1, 0])
    assert trajectory.get_target_state(3.5) is None
    with pytest.raises(ValueError):
        SampledPoseTrajectory("tool", times=[0, 0], positions=np.zeros((2, 3)),
                              quaternions=[[1, 0, 0, 0]] * 2)  # fmt: skip


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_recorded_session_saves_and_replays_reproducibly(franka, tmp_path, suffix):
    scene = make_scene(MujocoSimulation.from_robot(franka))
    target = scene.target()
    start = target.target_pose().position
    scene.recorder.start()
    # a "drag": the target jumps along a path, as gizmo updates do
    for k in range(30):
        target.move_target(start + [0.0, 0.003 * k, -0.002 * k])
        scene.run(0.02)
    scene.run(0.3)
    scene.recorder.stop()
    recorded = scene.recorder.session()
    assert recorded.sites == [target.site] and scene.recorder.samples >= 40
    path = recorded.save(tmp_path / f"session{suffix}")
    loaded = RecordedSession.load(path)
    assert np.allclose(loaded.times, recorded.times)
    original = recorded.trajectory()
    replayed = loaded.trajectory(target.site)
    assert np.allclose(replayed.positions, original.positions)
    assert np.allclose(replayed.quaternions, original.quaternions)

    def replay():
        fresh = make_scene(MujocoSimulation.from_robot(franka))
        assert loaded.replay(fresh.targets) == 1
        poses = []
        for _ in range(round((loaded.duration + 0.3) / 0.02)):
            fresh.run(0.02)
            poses.append(fresh.sim.get_site_pose(target.site)[0])
        return fresh, np.array(poses)

    first_scene, first = replay()
    _, second = replay()
    assert np.array_equal(first, second)  # deterministic
    final = recorded.trajectory().positions[-1]
    assert np.allclose(final, start + [0.0, 0.087, -0.058])
    assert np.linalg.norm(first[-1] - final) < 1e-3  # the replay ends where the drag did
    assert not first_scene.target().following


def test_session_files_are_checked(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="bad.json"):
        RecordedSession.load(bad)
    with pytest.raises(FileNotFoundError):
        RecordedSession.load(tmp_path / "missing.npz")
    session = RecordedSession([0.0], {"tool": ([[0, 0, 0]], [[1, 0, 0, 0]])})
    with pytest.raises(ValueError, match="npz or .json"):
        session.save(tmp_path / "session.txt")


# ---------------------------------------------------------------------------------- native
class _FakeViewer:
    """Stands in for mujoco.viewer's passive handle: a user drags the marker on sync()."""

    def __init__(self, data, mocap, offset, frames):
        self.data, self.mocap, self.offset = data, mocap, offset
        self.frames = frames
        self.synced = 0
        self.closed = False

    def is_running(self):
        return self.synced < self.frames

    def sync(self):
        self.synced += 1
        if self.synced == 2:  # the user drags the marker once
            self.data.mocap_pos[self.mocap] += self.offset

    def close(self):
        self.closed = True


def test_native_loop_follows_the_dragged_marker(franka):
    scene = build_scene(franka)
    target = scene.target()
    start = target.target_pose().position
    offset = np.array([0.0, 0.05, -0.03])
    viewers = []

    def launch(model, data):
        viewers.append(_FakeViewer(data, 0, offset, frames=60))
        return viewers[0]

    run_native(scene, launch=launch)
    assert viewers[0].closed and not scene.running
    assert np.allclose(target.target_pose().position, start + offset)
    assert target.tracking_error()[0] < 2e-3
    # follow_markers leaves an undragged marker alone
    with scene.lock:
        assert follow_markers(scene, [0]) == 0

    def broken(model, data):
        raise RuntimeError("GLFW: no display\nmore")

    with pytest.raises(NativeViewerError, match="did not open: GLFW: no display$"):
        run_native(scene, launch=broken)


def test_view_native_without_display_exits_2_with_one_line(monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["view", "franka", "--native"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "display" in lines[0] and "Traceback" not in captured.err


def test_view_unknown_robot_exits_2_with_one_line(capsys):
    assert main(["view", "no_such_robot", "--port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no_such_robot" in err[0] and "franka" in err[0]


def test_view_command_serves_records_and_replays(tmp_path, capsys):
    session = tmp_path / "session.json"
    assert (
        main(["view", "franka", "--port", "0", "--duration", "0.5", "--record", str(session)]) == 0
    )
    out = capsys.readouterr().out
    assert "http://localhost:" in out and f"session written to {session}" in out
    recorded = RecordedSession.load(session)
    assert recorded.sites == ["panda_hand_tcp"] and recorded.duration > 0.2
    assert (
        main(["view", "franka", "--port", "0", "--duration", "0.3", "--replay", str(session)]) == 0
    )
    assert main(["view", "franka", "--replay", str(tmp_path / "missing.json")]) == 2
    assert "session file not found" in capsys.readouterr().err


def test_body_meshes_cover_the_robot(franka):
    from pinkctl.view.meshes import body_meshes

    sim = MujocoSimulation.from_robot(franka)
    meshes = body_meshes(sim.model)
    names = {m.body_name for m in meshes}
    assert {f"panda_link{k}" for k in range(8)} | {"panda_hand"} <= names
    assert "pinkctl_target" not in names  # the marker is the gizmo's job
    for mesh in meshes:
        assert mesh.vertices.shape[1] == 3 and np.isfinite(mesh.vertices).all()
        assert mesh.faces.max() < len(mesh.vertices)
    # the visual cylinder of panda_link0 (radius 0.072, length 0.138, centred at z = 0.069)
    link0 = np.vstack([m.vertices for m in meshes if m.body_name == "panda_link0"])
    assert link0[:, 2].min() == pytest.approx(0.0, abs=1e-6)
    assert np.abs(link0[:, 1]).max() == pytest.approx(0.09, abs=1e-6)  # the base box


def test_real_time_loop_never_runs_ahead_of_the_clock_and_reports_a_failure(scene, monkeypatch):
    t0, wall0 = scene.time, time.perf_counter()
    scene.start()
    assert scene.running
    time.sleep(0.3)
    scene.stop()
    elapsed = time.perf_counter() - wall0
    assert not scene.running and scene.loop_error is None
    assert 0.0 < scene.time - t0 <= elapsed + scene.control_period
    with pytest.raises(ValueError):
        scene.start(speed=0.0)

    def broken(n=1):
        raise RuntimeError("physics exploded")

    monkeypatch.setattr(scene.sim, "step", broken)
    scene.start()
    deadline = time.monotonic() + 5.0
    while scene.running and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not scene.running
    assert scene.loop_error == "RuntimeError: physics exploded"


@pytest.mark.parametrize("name", ["ur10", "so101"])
def test_web_page_builds_for_every_bundled_robot(name):
    from pinkctl.view.web import WebViewer

    viewer = WebViewer(build_scene(load_pink_supported_robot(name)), port=0).start()
    try:
        (panel,) = viewer.panels.values()
        target = panel.target
        costs = np.broadcast_to(target.controller.get_frame_task().cost, (6,))
        assert panel.orientation_cost.value == pytest.approx(costs[3])  # so101: 0, position only
        assert len(viewer.bodies) > len(target.joint_names)  # the base and every moving link
        panel.trajectory.value = "circle"  # what the menu does
        assert target.following and panel.path is not None
        time.sleep(0.3)
        assert viewer.scene.time > 0.0
    finally:
        viewer.stop()
    with pytest.raises(ValueError, match="port"):
        WebViewer(viewer.scene, port=70000)


# ------------------------------------------------------------------- three.js conventions
def _threejs_scene(franka):
    return make_scene(MujocoSimulation.from_robot(franka), conventions="threejs")


def test_THREE_quaternion_order_xyzw_in_and_out(franka, scene):
    """``moveTarget``'s THREE.Quaternion is (x, y, z, w); pinkctl's (w, x, y, z)."""
    js = _threejs_scene(franka).target()
    ours = scene.target()
    start = ours.target_pose()
    goal = start.position + [0.02, -0.03, 0.01]
    wxyz = pin.Quaternion(pin.utils.rpyToMatrix(2.9, 0.2, -0.4)).coeffs()[[3, 0, 1, 2]]
    ours.move_target(goal, wxyz)
    js.move_target(goal, wxyz[[1, 2, 3, 0]])  # the same orientation, three.js's order
    assert np.allclose(js.target_pose().quaternion, ours.target_pose().quaternion, atol=1e-15)
    stats = js.gizmo_stats()
    x, y, z, w = stats.quaternion
    assert w >= 0.0 and np.allclose([w, x, y, z], ours.target_pose().quaternion, atol=1e-15)
    assert np.allclose(stats.pos, goal)
    # pinkctl's gizmo_stats: (w, x, y, z) and roll/pitch/yaw, as target_pose
    assert np.allclose(ours.gizmo_stats().quaternion, ours.target_pose().quaternion)
    assert np.allclose(ours.gizmo_stats().rot, ours.target_pose().rpy)
    with pytest.raises(ValueError, match=r"4 values \(x, y, z, w\)"):
        js.move_target(goal, [0.0, 0.0, 1.0])


def test_getGizmoStats_euler_xyz_in_and_out_with_threejs(franka, scene):
    """THREE.Euler's default order XYZ: R = Rx(x) Ry(y) Rz(z) (checked against scipy's
    intrinsic "XYZ"), read back as three.js's setFromRotationMatrix does."""
    from scipy.spatial.transform import Rotation

    js = _threejs_scene(franka).target()
    position = js.target_pose().position
    for angles in ([0.3, -0.5, 1.2], [-2.0, 1.1, -3.0], [0.0, 0.0, 0.0]):
        js.move_target(position, euler=angles)
        x, y, z, w = Rotation.from_euler("XYZ", angles).as_quat()
        assert abs(abs(np.dot(js.target_pose().quaternion, [w, x, y, z])) - 1.0) < 1e-12
        assert np.allclose(js.gizmo_stats().rot, angles, atol=1e-12)  # y in [-pi/2, pi/2]
    js.move_target(position, euler=[0.4, np.pi / 2, 0.3])  # gimbal lock: three.js sets z = 0
    rot = js.gizmo_stats().rot
    assert rot[1] == pytest.approx(np.pi / 2) and rot[2] == 0.0
    assert rot[0] == pytest.approx(0.4 + 0.3)  # at y = pi/2 the rotation fixes only x + z
    # pinkctl's Euler angles are roll, pitch, yaw: R = Rz(yaw) Ry(pitch) Rx(roll)
    ours = scene.target()
    ours.move_target(position, euler=[0.3, -0.5, 1.2])
    expected = pin.Quaternion(pin.utils.rpyToMatrix(0.3, -0.5, 1.2)).coeffs()[[3, 0, 1, 2]]
    assert abs(abs(float(expected @ ours.target_pose().quaternion)) - 1.0) < 1e-12
    assert np.allclose(ours.gizmo_stats().rot, [0.3, -0.5, 1.2])
    with pytest.raises(ValueError, match="not both"):
        ours.move_target(position, [1, 0, 0, 0], euler=[0, 0, 0])


def test_moveTarget_duration_in_milliseconds_with_threejs(franka, scene):
    """``moveTarget(pos, 500)``: 500 ms of simulation time, the same animation as pinkctl's
    ``duration=0.5`` seconds."""
    js = _threejs_scene(franka).target()
    ours = scene.target()
    goal = ours.target_pose().position + [0.05, 0.05, -0.05]
    js.move_target(goal, duration=500)
    ours.move_target(goal, duration=0.5)
    for t in (0.1, 0.25, 0.499):
        js.advance(t)
        ours.advance(t)
        assert js.animating
        assert np.allclose(js.target_pose().position, ours.target_pose().position, atol=1e-15)
    js.advance(0.5)
    assert not js.animating and np.allclose(js.target_pose().position, goal)
    with pytest.raises(ValueError, match="duration"):
        js.move_target(goal, duration=-1)


def test_solveIK_and_ikSolveFn_take_xyzw_with_threejs(franka, scene):
    js_scene = _threejs_scene(franka)
    js, ours = js_scene.target(), scene.target()
    pose = ours.target_pose()
    goal = pose.position + [0.03, 0.0, -0.02]
    q_ours = ours.solve_ik(goal, pose.quaternion)
    q_js = js.solve_ik(goal, pose.quaternion[[1, 2, 3, 0]])
    assert q_ours is not None and np.allclose(q_js, q_ours, atol=1e-12)
    assert np.allclose(js.solve_ik(goal, euler=js.gizmo_stats().rot), q_ours, atol=1e-9)
    seen = []

    def hook(position, quaternion, current_q):
        seen.append(quaternion)
        return current_q

    js.ik_solve_fn = hook
    js_scene.step()
    assert np.allclose(seen[-1], js.gizmo_stats().quaternion)  # (x, y, z, w)
    assert np.allclose(seen[-1][[3, 0, 1, 2]], js.target_pose().quaternion)


def test_threejs_targets_still_go_home_in_seconds(franka):
    """The scene's and the page's own moves (go home, gizmo, marker) are in pinkctl's units
    whatever the target's conventions."""
    scene = _threejs_scene(franka)
    target = scene.target()
    home = target.target_pose().position
    target.move_target(home + [0.0, 0.1, 0.0])
    scene.go_home(duration=0.2)
    target.advance(scene.time + 0.1)
    assert target.animating  # 0.2 s, not 0.2 ms
    target.advance(scene.time + 0.2)
    assert not target.animating and np.allclose(target.target_pose().position, home)
    with pytest.raises(ValueError, match="conventions must be one of"):
        IkTarget(scene.sim, conventions="unity")


def test_web_page_reads_and_shows_poses_in_threejs_conventions(franka):
    from pinkctl.view.web import WebViewer

    viewer = WebViewer(_threejs_scene(franka), port=0, conventions="threejs")
    assert viewer.conventions.name == "threejs"
    viewer.start()
    try:
        (panel,) = viewer.panels.values()
        target = panel.target
        with viewer.scene.lock:
            start = target.target_pose()
        goal = start.position + [0.0, 0.05, 0.0]
        x, y, z, w = start.quaternion[[1, 2, 3, 0]]
        panel.move_to.value = f"{goal[0]} {goal[1]} {goal[2]} {x} {y} {z} {w}"
        panel.move_duration.value = 500.0  # ms
        with viewer.scene.lock:
            assert panel.move_from_text()
            assert target.animating
            target.advance(viewer.scene.time + 0.5)
            assert np.allclose(target.target_pose().position, goal)
            assert np.allclose(target.target_pose().quaternion, start.quaternion)
        assert "over 500 ms" in panel.move_result.value
        panel.move_to.value = "0.1 0.2"
        assert not panel.move_from_text() and "3, 6 or 7 numbers" in panel.move_result.value
        deadline = time.monotonic() + 5.0
        while "q (x y z w)" not in panel.pose.value and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "q (x y z w)" in panel.pose.value and "XYZ" in panel.pose.value
    finally:
        viewer.stop()
    with pytest.raises(ValueError, match="conventions"):
        WebViewer(viewer.scene, conventions="unity")


def test_useIkController_null_is_a_scene_without_a_target(franka):
    """``useIkController(null)``: no IkTarget, so nothing writes the servo commands."""
    sim = MujocoSimulation.from_robot(franka)
    scene = InteractiveScene(sim)
    sim.data.ctrl[:] = 0.1
    scene.run(0.05)
    assert scene.targets == [] and np.all(sim.data.ctrl == 0.1)


def test_useBeforePhysicsStep_IkTarget_writes_data_ctrl_before_each_physics_step(
    scene, monkeypatch
):
    """The seed's hook writes ``data.ctrl`` in ``useBeforePhysicsStep``: here each control
    tick's command is in ``data.ctrl`` when that tick's physics steps run, one per tick."""
    target, sim = scene.target(), scene.sim
    written, seen = [], []
    write, physics = target._write, sim.step

    def record_write(*args, **kwargs):
        write(*args, **kwargs)
        written.append(sim.data.ctrl.copy())

    def record_physics(*args, **kwargs):
        seen.append((len(written), sim.data.ctrl.copy()))
        return physics(*args, **kwargs)

    monkeypatch.setattr(target, "_write", record_write)
    monkeypatch.setattr(sim, "step", record_physics)
    target.move_target(target.target_pose().position + [0.0, 0.05, 0.0])
    scene.step(3)
    assert [count for count, _ in seen] == [1, 2, 3]  # one command, then the physics
    for count, ctrl in seen:
        np.testing.assert_array_equal(ctrl, written[count - 1])
    assert not np.array_equal(written[0], written[2])  # a new command every tick
