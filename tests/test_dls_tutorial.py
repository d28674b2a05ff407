"""The DLS tutorial's rows (docs/ik.md, "The DLS tutorial"): forward kinematics, the
Jacobian, the damped least-squares step and its damping convention, clipping, singularities,
and an IK that leaves the simulation alone. Its frame rows (base-frame observations, robot
placement) are in tests/test_envs_seed.py."""

from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from pinkctl import MujocoSimulation, load_pink_supported_robot, local_ik
from pinkctl.ik.methods import DampedLeastSquares, make_method

TUTORIAL_DAMPING = 0.01  # the tutorial's `damping`, added to J J^T's diagonal


@pytest.fixture(scope="module")
def franka_sim() -> MujocoSimulation:
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot)
    names = robot.controlled_joint_names
    sim.set_joint_positions(names, sim.get_joint_positions(names) + 0.2)  # away from home
    sim.forward()
    return sim


def _tutorial_jacobian(sim: MujocoSimulation, site: str) -> np.ndarray:
    """``J = vstack(jacp, jacr)`` of ``mj_jacSite``, columns of the robot's controlled joints."""
    model, data = sim.model, sim.data
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    mujoco.mj_jacSite(model, data, jacp, jacr, model.site(site).id)
    assert sim.robot is not None
    columns = [model.joint(n).dofadr[0] for n in sim.robot.controlled_joint_names]
    return np.vstack([jacp, jacr])[:, columns]


def _tutorial_step(J: np.ndarray, weighted_err: np.ndarray, damping: float) -> np.ndarray:
    """The tutorial's lines: ``A = J J^T + damping I; x = solve(A, err); qdot = J^T x``."""
    A = J @ J.T + damping * np.eye(J.shape[0])
    return J.T @ np.linalg.solve(A, weighted_err)


def test_forward_kinematics_site_xpos(franka_sim: MujocoSimulation) -> None:
    """``mj_kinematics; mj_comPos; data.site(name).xpos`` (world frame): the same point as
    ``MujocoSimulation.get_site_pose`` and Pinocchio's forward kinematics."""
    sim = franka_sim
    robot = sim.robot
    assert robot is not None and robot.tool_frame is not None
    mujoco.mj_kinematics(sim.model, sim.data)
    mujoco.mj_comPos(sim.model, sim.data)
    xpos = sim.data.site(robot.tool_frame).xpos
    np.testing.assert_array_equal(sim.get_site_pose(robot.tool_frame)[0], xpos)
    q = robot.q0.copy()
    for name in robot.controlled_joint_names:
        q[robot.model.joints[robot.model.getJointId(name)].idx_q] = sim.get_joint_positions([name])[
            0
        ]
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    np.testing.assert_allclose(
        data.oMf[robot.model.getFrameId(robot.tool_frame)].translation, xpos, atol=1e-9
    )


def test_jacobian_mj_jac_site(franka_sim: MujocoSimulation) -> None:
    """``mj_jacSite``'s (jacp, jacr) are Pinocchio's frame Jacobian in world-aligned axes,
    the one pinkctl's IK steps with."""
    sim = franka_sim
    robot = sim.robot
    assert robot is not None and robot.tool_frame is not None
    J = _tutorial_jacobian(sim, robot.tool_frame)
    q = robot.q0.copy()
    columns = []
    for name in robot.controlled_joint_names:
        joint = robot.model.joints[robot.model.getJointId(name)]
        q[joint.idx_q] = sim.get_joint_positions([name])[0]
        columns.append(joint.idx_v)
    frame = robot.model.getFrameId(robot.tool_frame)
    reference = pin.computeFrameJacobian(
        robot.model, robot.model.createData(), q, frame, pin.LOCAL_WORLD_ALIGNED
    )[:, columns]
    np.testing.assert_allclose(J, reference, atol=1e-9)


def test_dls_damping_convention(franka_sim: MujocoSimulation) -> None:
    """The tutorial's ``damping`` is added to ``J J^T`` as it is; pinkctl's ``method="dls"``
    squares its ``damping`` (``λ = δ²``): the tutorial's ``damping=0.01`` is pinkctl's
    ``damping=0.1``, ``δ = sqrt(damping)``. pinkctl's error is ``current - target``, the
    tutorial's ``target - current``: same step."""
    sim = franka_sim
    robot = sim.robot
    assert robot is not None and robot.tool_frame is not None
    J = _tutorial_jacobian(sim, robot.tool_frame)
    err_pos = np.array([0.05, -0.03, 0.02])  # target - current [m]
    pos_gain = 1.0
    weighted_err = np.concatenate((pos_gain * err_pos, np.zeros(3)))
    tutorial = _tutorial_step(J, weighted_err, TUTORIAL_DAMPING)
    method = make_method("dls", damping=np.sqrt(TUTORIAL_DAMPING))
    assert isinstance(method, DampedLeastSquares) and method.damping == pytest.approx(0.1)
    e = -weighted_err
    pinkctl = method.step(J.copy(), e, float(e @ e), robot.q0)
    np.testing.assert_allclose(pinkctl, tutorial, rtol=1e-10, atol=1e-14)
    unconverted = make_method("dls", damping=TUTORIAL_DAMPING).step(J.copy(), e, 0.0, robot.q0)
    assert np.max(np.abs(unconverted - tutorial)) > 1e-3  # the numbers do not carry over as-is


def test_weighted_err_zero_rotation_rows_are_a_held_orientation_target() -> None:
    """The tutorial's error has zero rotation rows (it holds the orientation step by step);
    pinkctl reaches the position with the start orientation as the target (or
    ``position_only`` to leave it free)."""
    robot = load_pink_supported_robot("franka")
    assert robot.tool_frame is not None
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    start = data.oMf[robot.model.getFrameId(robot.tool_frame)].copy()
    goal = start.translation + np.array([0.05, -0.08, 0.06])
    options = {"method": "dls", "method_options": {"damping": 0.1}}
    held = local_ik(robot, pin.SE3(start.rotation, goal), **options)
    assert held.success and held.position_error < 1e-4 and held.orientation_error < 1e-4
    free = local_ik(robot, goal, position_only=True, **options)
    assert free.success and free.position_error < 1e-4


def test_qdot_clip(franka_sim: MujocoSimulation) -> None:
    """The tutorial clips each joint's qdot to [-2, 2] (the direction changes when one joint
    saturates); pinkctl's ``max_step`` scales the whole step down (the direction is kept)."""
    sim = franka_sim
    robot = sim.robot
    assert robot is not None
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    assert robot.tool_frame is not None
    start = data.oMf[robot.model.getFrameId(robot.tool_frame)].translation
    target = start + np.array([0.08, 0.06, -0.05])
    one_step = {"position_only": True, "method": "dls", "max_iterations": 2}
    small = local_ik(robot, target, max_step=0.02, **one_step).q_full - robot.q0
    full = local_ik(robot, target, **one_step).q_full - robot.q0
    assert np.max(np.abs(full)) > 0.05  # the unlimited step is larger than max_step
    assert np.max(np.abs(small)) == pytest.approx(0.02)
    np.testing.assert_allclose(small / 0.02, full / np.max(np.abs(full)), atol=1e-9)


def test_damping_keeps_the_step_stable_at_singularities() -> None:
    """At a singular pose (rank-deficient J) the damping keeps the step finite and small,
    where the undamped pseudo-inverse's blows up."""
    J = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1e-9], [0.0, 0.0, 0.0]])
    e = np.array([0.0, 0.01, 0.0])
    damped = make_method("dls", damping=np.sqrt(TUTORIAL_DAMPING)).step(J, e, 1e-4, np.zeros(3))
    assert np.all(np.isfinite(damped)) and np.max(np.abs(damped)) < 1e-6
    undamped = make_method("pinv_undamped").step(J, e, 1e-4, np.zeros(3))
    assert np.max(np.abs(undamped)) > 1e6


def test_save_qpos_iterate_restore_the_ik_leaves_the_simulation_alone(
    franka_sim: MujocoSimulation,
) -> None:
    """The tutorial saves and restores ``qpos`` around its solve; pinkctl's IK works on the
    Pinocchio model and never touches the simulation (nor ``robot.data``)."""
    sim = franka_sim
    robot = sim.robot
    assert robot is not None
    before = sim.data.qpos.copy()
    data_before = robot.data.oMf[1].copy()
    result = local_ik(robot, np.array([0.4, 0.2, 0.4]), position_only=True, method="dls")
    assert result.success
    np.testing.assert_array_equal(sim.data.qpos, before)
    assert robot.data.oMf[1].isApprox(data_before, 0.0)


def test_qpos_plus_qdot_dt_is_pin_integrate_clamped_to_the_joint_limits() -> None:
    """The tutorial adds ``qdot * dt`` to ``qpos`` unchecked; pinkctl integrates the step on
    the model (``pin.integrate``) and clamps it into the joint limits: a step that would carry
    ``panda_joint4`` past its upper limit (-0.0698 rad) ends on it."""
    robot = load_pink_supported_robot("franka")
    model = robot.model
    seed = robot.q0.copy()
    seed[3] = -0.1  # 0.03 rad below the upper limit
    beyond = seed.copy()
    beyond[3] = 0.3  # the tool pose of a configuration past the limit
    data = model.createData()
    pin.framesForwardKinematics(model, data, beyond)
    assert robot.tool_frame is not None
    goal = data.oMf[model.getFrameId(robot.tool_frame)].copy()
    result = local_ik(robot, goal, seed=seed, method="dls", max_iterations=20)
    q = result.q_full
    assert q[3] == model.upperPositionLimit[3]  # clamped onto the limit
    assert np.all(q >= model.lowerPositionLimit) and np.all(q <= model.upperPositionLimit)
    step = pin.difference(model, seed, q)
    assert np.linalg.norm(step) > 0.03 and not result.success  # moved, unreachable past it
