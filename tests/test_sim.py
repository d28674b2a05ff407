"""MuJoCo model compiled from the bundled URDFs: same kinematics as Pinocchio, stable servos."""

from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from pinkctl import load_pink_supported_robot, supported_robots
from pinkctl.core.state import JointState, RobotState
from pinkctl.sim import MujocoSimulation

ROBOTS = ["franka", "ur10", "so101"]


@pytest.fixture(scope="module", params=ROBOTS)
def robot_and_sim(request):
    robot = load_pink_supported_robot(request.param)
    return robot, MujocoSimulation.from_robot(robot)


def _random_q(robot, rng):
    model = robot.model
    lo = np.where(np.isfinite(model.lowerPositionLimit), model.lowerPositionLimit, -np.pi)
    hi = np.where(np.isfinite(model.upperPositionLimit), model.upperPositionLimit, np.pi)
    return lo + rng.random(model.nq) * (hi - lo)


def test_bundled_robots_are_listed():
    assert set(ROBOTS) <= set(supported_robots())


def test_forward_kinematics_equal_pinocchio(robot_and_sim):
    """Every link and tool site: Pinocchio and MuJoCo agree to 1e-9 over 200 configurations."""
    robot, sim = robot_and_sim
    model, data = robot.model, robot.model.createData()
    rng = np.random.default_rng(0)
    names = [model.names[i] for i in range(1, model.njoints) if model.joints[i].nq == 1]
    bodies = [
        f.name
        for f in model.frames
        if f.type == pin.FrameType.BODY
        and mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_BODY, f.name) >= 0
    ]
    assert robot.tool_frame in bodies
    assert len(bodies) >= len(names)
    worst = 0.0
    for _ in range(200):
        q = _random_q(robot, rng)
        pin.framesForwardKinematics(model, data, q)
        values = [q[model.joints[model.getJointId(n)].idx_q] for n in names]
        # mimic followers are not Pinocchio coordinates: MuJoCo gets them from the model
        mimic = {
            model.names[i]: model.joints[i]
            for i in range(1, model.njoints)
            if model.joints[i].nq == 0
        }
        sim.set_joint_positions(names, values)
        for follower in mimic:
            pin_value = None
            for k in range(sim.model.neq):
                if sim.model.joint(int(sim.model.eq_obj1id[k])).name == follower:
                    master = sim.model.joint(int(sim.model.eq_obj2id[k])).name
                    c = sim.model.eq_data[k]
                    pin_value = c[0] + c[1] * sim.get_joint_positions([master])[0]
            assert pin_value is not None
            sim.set_joint_positions([follower], [pin_value])
        for name in bodies:
            oMf = data.oMf[model.getFrameId(name, pin.FrameType.BODY)]
            pos, quat = sim.get_body_pose(name)
            rot = np.empty(9)
            mujoco.mju_quat2Mat(rot, quat)
            worst = max(
                worst,
                float(np.max(np.abs(pos - oMf.translation))),
                float(np.max(np.abs(rot.reshape(3, 3) - oMf.rotation))),
            )
        site_pos, site_quat = sim.get_site_pose(robot.tool_frame)
        tool = data.oMf[model.getFrameId(robot.tool_frame)]
        worst = max(worst, float(np.max(np.abs(site_pos - tool.translation))))
    assert worst < 1e-9


def test_holding_home_is_stable(robot_and_sim):
    """With the servos at home, the arm stays within 1 mm of home for 5 s under gravity."""
    robot, sim = robot_and_sim
    sim.reset()
    start, _ = sim.get_site_pose(robot.tool_frame)
    q_home = sim.get_joint_positions(robot.controlled_joint_names)
    worst = 0.0
    for _ in range(50):
        sim.step(50)
        pos, _ = sim.get_site_pose(robot.tool_frame)
        worst = max(worst, float(np.linalg.norm(pos - start)))
    assert sim.time == pytest.approx(5.0)
    assert worst < 1e-3
    assert np.max(np.abs(sim.get_joint_positions(robot.controlled_joint_names) - q_home)) < 1e-3


def test_state_round_trip_and_apply(robot_and_sim):
    robot, sim = robot_and_sim
    sim.reset()
    state = sim.get_robot_state()
    assert state.joints.robot_joint_space == sim.joint_names
    assert np.allclose(state.joints.positions, sim.get_joint_positions())
    pos, quat = state.sites.get_pose(robot.tool_frame)
    assert np.allclose(pos, sim.get_site_pose(robot.tool_frame)[0])
    assert np.isclose(np.linalg.norm(quat), 1.0)
    # a joint command moves the servo target; None leaves it
    joint = robot.controlled_joint_names[0]
    target = sim.get_joint_positions([joint])[0] + 0.05
    command = RobotState(
        joints=JointState.from_name(sim.joint_names, positions=([joint], np.array([target])))
    )
    assert sim.apply(command)
    assert not sim.apply(None)
    sim.step(1000)
    assert sim.get_joint_positions([joint])[0] == pytest.approx(target, abs=2e-3)
    sim.reset()


def test_velocity_feed_forward_shifts_servo_input():
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot)
    joint = robot.controlled_joint_names[0]
    q = sim.get_joint_positions([joint])
    sim.set_position_targets([joint], q, velocities=[0.5])
    act = sim._actuator_of[joint]
    kp = sim.model.actuator_gainprm[act, 0]
    kv = -sim.model.actuator_biasprm[act, 2]
    damping = sim.model.dof_damping[sim.model.joint(joint).dofadr[0]]  # the joint's own
    assert damping > 0.0
    assert sim.data.ctrl[act] == pytest.approx(q[0] + (kv + damping) / kp * 0.5)


def test_bad_input_is_rejected():
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot)
    before = sim.data.qpos.copy()
    with pytest.raises(ValueError, match="timestep"):
        MujocoSimulation.from_robot(robot, timestep=0.0)
    with pytest.raises(ValueError, match="site frame"):
        MujocoSimulation.from_robot(robot, site_frames=["no_such_frame"])
    with pytest.raises(ValueError, match="unknown joints"):
        sim.set_joint_positions(["nope"], [0.0])
    with pytest.raises(ValueError, match="finite"):
        sim.set_joint_positions([robot.controlled_joint_names[0]], [np.nan])
    with pytest.raises(ValueError, match="unknown site"):
        sim.get_site_pose("nope")
    with pytest.raises(ValueError, match="non-negative integer"):
        sim.step(-1)
    assert np.array_equal(sim.data.qpos, before)


def test_offscreen_render_shows_the_robot():
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot)
    image = sim.render(160, 120)
    assert image.shape == (120, 160, 3) and image.dtype == np.uint8
    # the picture is not blank: floor, robot and sky differ
    assert image.std() > 10
    sim.close()
