"""The seeds' MuJoCo-level IK options, one test each, named after the seed's option or
function (docs/mujoco_ik.md's mapping tables): ``GenericIK.solveJoints`` (the React hook) and
the lerobot SO-101 ``ik_control`` helpers. Each checks what the option does, not only its
default: the first step of a solve is written out here by hand from MuJoCo's own calls
(``mj_jacSite``, ``jnt_dofadr``, ``mj_integratePos``, ``mj_jac``) and compared.
"""

from __future__ import annotations

import inspect

import mujoco
import numpy as np
import pytest
from test_mujoco_ik import BALL_CHAIN, FLOATING_ARM, HINGE_ARM, _mujoco, _site_pose, so101

from pinkctl.mujoco_ik import (
    compute_ik_levenberg_marquardt,
    compute_ik_pseudoinverse,
    solve_ik,
    solve_joints,
)

__all__ = ["so101"]  # the SO-101 fixture, shared with tests/test_mujoco_ik.py

DEFAULTS = {k: p.default for k, p in inspect.signature(solve_joints).parameters.items()}
ARM = ["a1", "a2", "a3", "a4"]  # HINGE_ARM's hinges and its slide


def _first_step(model, joints, goal, *, damping=0.01, position_weight=1.0):
    """The seed's DLS step on a position target, from ``qpos0``: ``dv = Jᵀ (J Jᵀ + λ I)⁻¹ e``
    on the Jacobian's ``jnt_dofadr`` columns, applied with ``mj_integratePos``."""
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    site = model.site("end").id
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    mujoco.mj_jacSite(model, data, jacp, jacr, site)
    columns = [model.jnt_dofadr[model.joint(name).id] for name in joints]
    jacobian = position_weight * jacp[:, columns]
    error = position_weight * (np.asarray(goal) - data.site_xpos[site])
    gram = jacobian @ jacobian.T + damping * np.eye(3)
    velocity = np.zeros(model.nv)
    velocity[columns] = jacobian.T @ np.linalg.solve(gram, error)
    qpos = model.qpos0.copy()
    mujoco.mj_integratePos(model, qpos, velocity, 1.0)
    return qpos


def _near_goal(model):
    """A position 2-3 cm from the site at ``qpos0``: one step improves on it."""
    return _site_pose(model, model.qpos0, "end")[0] + [0.01, 0.02, -0.015]


def test_mj_jacSite_columns_at_jnt_dofadr_make_the_first_step():
    model, data = _mujoco(HINGE_ARM)
    goal = _near_goal(model)
    result = solve_joints(model, data, "end", ARM, goal, max_iterations=1)
    assert result.iterations == 1
    np.testing.assert_allclose(result.qpos, _first_step(model, ARM, goal), atol=1e-12)


def test_damping_0_01_is_added_to_J_Jt_not_squared():
    assert DEFAULTS["damping"] == 0.01
    model, data = _mujoco(HINGE_ARM)
    goal = _near_goal(model)
    for damping in (0.01, 0.3):
        result = solve_joints(model, data, "end", ARM, goal, max_iterations=1, damping=damping)
        expected = _first_step(model, ARM, goal, damping=damping)
        np.testing.assert_allclose(result.qpos, expected, atol=1e-12)
    squared = _first_step(model, ARM, goal, damping=0.3**2)
    assert np.abs(result.qpos - squared).max() > 1e-4  # λ, not λ², is added


def test_maxIterations_50_bounds_the_steps():
    assert DEFAULTS["max_iterations"] == 50
    model, data = _mujoco(HINGE_ARM)
    goal = _site_pose(model, model.qpos0, "end")[0] + [-0.2, 0.2, -0.1]
    slow = {"max_step": 1e-3}  # every step improves, none reaches the goal
    assert solve_joints(model, data, "end", None, goal, **slow).iterations == 50
    assert solve_joints(model, data, "end", None, goal, max_iterations=7, **slow).iterations == 7
    assert solve_joints(model, data, "end", None, goal).iterations < 50  # converged before


def test_position_weight_1_and_rotation_weight_0_3_weigh_the_error():
    assert (DEFAULTS["position_weight"], DEFAULTS["rotation_weight"]) == (1.0, 0.3)
    model, data = _mujoco(BALL_CHAIN)
    joints = ["yaw", "shoulder", "elbow"]
    position = data.site_xpos[0] + [0.6, -0.3, 0.2]  # out of reach: the errors stay
    quaternion = np.array([0.0, 1.0, 0.0, 0.0])
    for wp, wr in ((1.0, 0.3), (0.5, 2.0)):
        result = solve_joints(
            model, data, "tip", joints, position, quaternion, position_weight=wp, rotation_weight=wr
        )
        assert result.rotation_error > 0.01 and result.position_error > 0.01
        weighted = np.hypot(wp * result.position_error, wr * result.rotation_error)
        assert result.error == pytest.approx(weighted, rel=1e-12)
    heavy = solve_joints(model, data, "tip", joints, position, quaternion, rotation_weight=5.0)
    light = solve_joints(model, data, "tip", joints, position, quaternion, rotation_weight=0.0)
    assert heavy.rotation_error < light.rotation_error  # the weight trades one for the other


def test_tolerance_1e_3_on_the_weighted_error_norm():
    assert DEFAULTS["tolerance"] == 1e-3
    model, data = _mujoco(HINGE_ARM)
    goal = _site_pose(model, model.qpos0, "end")[0] + [-0.05, 0.1, -0.08]
    fine = solve_joints(model, data, "end", None, goal)
    coarse = solve_joints(model, data, "end", None, goal, tolerance=0.05)
    assert fine.converged and fine.error < 1e-3
    assert coarse.converged and 1e-3 < coarse.error < 0.05  # stopped as soon as within it
    assert coarse.iterations < fine.iterations
    half = solve_joints(model, data, "end", None, goal, position_weight=0.5, max_iterations=3)
    assert half.error == pytest.approx(0.5 * half.position_error, rel=1e-12)  # weighted norm
    assert half.converged == (half.error < 1e-3)


def test_maxStepRad_bounds_every_velocity_coordinate_of_a_step():
    model, data = _mujoco(HINGE_ARM)
    goal = _site_pose(model, model.qpos0, "end")[0] + [-0.2, 0.2, -0.1]
    for bound in (0.02, 0.005):  # radians for the hinges, metres for the slide
        result = solve_joints(model, data, "end", ARM, goal, max_iterations=1, max_step=bound)
        velocity = np.empty(model.nv)
        mujoco.mj_differentiatePos(model, velocity, 1.0, model.qpos0, result.qpos)
        assert np.abs(velocity).max() == pytest.approx(bound)
    assert DEFAULTS["max_step"] is None


def test_epsilon_is_not_taken():
    """The seed documents ``epsilon`` as deprecated and ignored; pinkctl does not take it, so a
    call passing it fails loudly instead of silently doing nothing."""
    model, data = _mujoco(HINGE_ARM)
    assert "epsilon" not in DEFAULTS
    with pytest.raises(TypeError, match="epsilon"):
        solve_joints(model, data, "end", None, _near_goal(model), epsilon=1e-3)  # type: ignore[call-arg]


def test_mj_integratePos_keeps_quaternions_unit_on_the_manifold():
    model, data = _mujoco(FLOATING_ARM)
    rng = np.random.default_rng(2)
    for _ in range(5):
        velocity = rng.uniform(-0.6, 0.6, model.nv)
        goal_qpos = model.qpos0.copy()
        mujoco.mj_integratePos(model, goal_qpos, velocity, 1.0)
        position, quaternion = _site_pose(model, goal_qpos, "hand")
        result = solve_joints(model, data, "hand", ["root", "j1", "j2"], position, quaternion)
        free = model.joint("root").qposadr[0]
        assert np.linalg.norm(result.qpos[free + 3 : free + 7]) == pytest.approx(1.0, abs=1e-12)
        assert result.converged


def test_jointIds_take_hinge_and_slide_joints_by_id_or_name():
    model, data = _mujoco(HINGE_ARM)
    goal = _site_pose(model, model.qpos0, "end")[0] + [0.03, 0.05, -0.02]
    ids = [model.joint(name).id for name in ARM]
    by_id = solve_joints(model, data, "end", ids, goal)
    by_name = solve_joints(model, data, "end", ARM, goal)
    np.testing.assert_array_equal(by_id.qpos, by_name.qpos)
    assert by_id.joint_ids == tuple(ids) and by_id.converged
    slide = model.joint("a4").qposadr[0]
    assert 0.0 <= by_id.qpos[slide] <= 0.1  # the slide moved within its range


def test_qpos_of_model_nq_values_with_wxyz_quaternions():
    model, data = _mujoco(BALL_CHAIN)
    joints = ["yaw", "shoulder", "elbow"]
    start = model.qpos0.copy()
    ball = model.joint("shoulder").qposadr[0]
    start[ball : ball + 4] = [np.cos(0.2), np.sin(0.2), 0.0, 0.0]  # w first: 0.4 rad about x
    position = _site_pose(model, start, "tip")[0]
    result = solve_joints(model, data, "tip", joints, position, qpos=start)
    assert result.qpos.shape == (model.nq,)
    assert result.converged and result.iterations == 0  # already there: w first was read
    with pytest.raises(ValueError, match="qpos"):
        solve_joints(model, data, "tip", joints, position, qpos=start[:-1])


# ------------------------------------------------------------ lerobot's ik_control helpers
def _lerobot_step(model, site, dofs, target, q, *, damping=None):
    """One update from ``q`` by hand: ``(JᵀJ + λI)⁻¹ Jᵀ e`` (λ given) or ``J⁺ e``, with the
    Jacobian of the site's origin from ``mj_jac`` on the DOF columns."""
    data = mujoco.MjData(model)
    data.qpos[model.jnt_qposadr[model.dof_jntid[dofs]]] = q
    mujoco.mj_kinematics(model, data)
    mujoco.mj_comPos(model, data)
    jacp = np.zeros((3, model.nv))
    point = data.site_xpos[site].copy()
    mujoco.mj_jac(model, data, jacp, None, point, int(model.site_bodyid[site]))
    jacobian, error = jacp[:, dofs], np.asarray(target) - point
    if damping is None:
        return q + np.linalg.pinv(jacobian) @ error
    normal = jacobian.T @ jacobian + damping * np.eye(len(dofs))
    return q + np.linalg.solve(normal, jacobian.T @ error)


def test_solve_ik_defaults_levenberg_marquardt_damping_0_1_and_20_iterations(so101):
    _, sim, dofs = so101
    site = sim.model.site("gripper_frame_link").id
    target = sim.data.site_xpos[site] + [0.03, -0.04, 0.02]
    current = sim.data.qpos[sim.model.jnt_qposadr[sim.model.dof_jntid[dofs]]].copy()
    by_default = solve_ik(sim.model, sim.data, site, dofs, target)
    spelled = compute_ik_levenberg_marquardt(
        sim.model, sim.data, site, dofs, target, current, damping=0.1, max_iterations=20
    )
    np.testing.assert_array_equal(by_default, spelled)
    other = solve_ik(sim.model, sim.data, site, dofs, target, ik_damping=0.5, ik_iterations=3)
    assert not np.array_equal(other, by_default)


def test_seed_q_defaults_to_the_current_qpos(so101):
    _, sim, dofs = so101
    site = sim.model.site("gripper_frame_link").id
    target = sim.data.site_xpos[site] + [0.02, 0.02, -0.03]
    current = sim.data.qpos[sim.model.jnt_qposadr[sim.model.dof_jntid[dofs]]].copy()
    np.testing.assert_array_equal(
        solve_ik(sim.model, sim.data, site, dofs, target),
        solve_ik(sim.model, sim.data, site, dofs, target, seed_q=current),
    )
    seed = current + 0.2
    assert np.array_equal(
        solve_ik(sim.model, sim.data, site, dofs, target, ik_iterations=0, seed_q=seed), seed
    )


def test_ValueError_for_an_unknown_ik_method_or_an_approach_with_pseudoinverse(so101):
    _, sim, dofs = so101
    site, target = sim.model.site("gripper_frame_link").id, [0.2, 0.0, 0.1]
    with pytest.raises(ValueError, match="ik_method must be one of"):
        solve_ik(sim.model, sim.data, site, dofs, target, ik_method="newton")
    for option in ({"approach_axis": 2}, {"point_offset": [0.0, 0.0, 0.01]}):
        with pytest.raises(ValueError, match="require ik_method='levenberg_marquardt'"):
            solve_ik(sim.model, sim.data, site, dofs, target, ik_method="pseudoinverse", **option)


def test_compute_ik_levenberg_marquardt_step_is_damped_and_clipped_to_ranges(so101):
    _, sim, dofs = so101
    model, data = sim.model, sim.data
    site = model.site("gripper_frame_link").id
    current = data.qpos[model.jnt_qposadr[model.dof_jntid[dofs]]].copy()
    near = data.site_xpos[site] + [0.02, -0.01, 0.02]
    one = compute_ik_levenberg_marquardt(model, data, site, dofs, near, current, max_iterations=1)
    np.testing.assert_allclose(one, _lerobot_step(model, site, dofs, near, current, damping=0.1))
    far = compute_ik_levenberg_marquardt(model, data, site, dofs, [2.0, 2.0, 2.0], current)
    ranges = model.jnt_range[model.dof_jntid[dofs]]
    assert np.all(far >= ranges[:, 0]) and np.all(far <= ranges[:, 1])
    assert np.any((far == ranges[:, 0]) | (far == ranges[:, 1]))  # clipped, not rescaled


def test_compute_ik_pseudoinverse_step_is_J_pinv_e_without_limits(so101):
    _, sim, dofs = so101
    model, data = sim.model, sim.data
    site = model.site("gripper_frame_link").id
    current = data.qpos[model.jnt_qposadr[model.dof_jntid[dofs]]].copy()
    near = data.site_xpos[site] + [0.02, -0.01, 0.02]
    one = compute_ik_pseudoinverse(model, data, site, dofs, near, current, max_iterations=1)
    np.testing.assert_allclose(one, _lerobot_step(model, site, dofs, near, current))
    half = compute_ik_pseudoinverse(
        model, data, site, dofs, near, current, max_iterations=1, step_size=0.5
    )
    np.testing.assert_allclose(half - current, 0.5 * (one - current))
    far = compute_ik_pseudoinverse(model, data, site, dofs, [2.0, 2.0, 2.0], current)
    ranges = model.jnt_range[model.dof_jntid[dofs]]
    assert np.any((far < ranges[:, 0]) | (far > ranges[:, 1]))  # the seed's: no limits


def test_qpos_and_jnt_range_are_read_at_each_dof_s_joint():
    """DOF ids index ``qvel``; the start and the ranges are read at each DOF's joint (the
    seed indexes ``qpos`` and ``jnt_range`` with the DOF id, right only when they agree)."""
    model, data = _mujoco(FLOATING_ARM)  # the free joint shifts j1, j2: DOF 6, 7 / qpos 7, 8
    dofs = [model.joint("j1").dofadr[0], model.joint("j2").dofadr[0]]
    assert dofs == [6, 7]
    site = model.site("hand").id
    data.qpos[[7, 8]] = [0.3, -0.4]
    mujoco.mj_forward(model, data)
    goal = data.qpos.copy()
    goal[[7, 8]] = [0.5, -0.2]
    target = _site_pose(model, goal, "hand")[0]  # reachable by the two hinges
    q = solve_ik(model, data, site, dofs, target, ik_damping=0.01, ik_iterations=50)
    reached = data.qpos.copy()
    reached[[7, 8]] = q
    assert np.linalg.norm(_site_pose(model, reached, "hand")[0] - target) < 1e-4
    assert np.all(np.abs(q) <= [3.0, 2.0])  # j1's and j2's ranges, not DOF 6/7's rows
    with pytest.raises(ValueError, match="ball or free joints: use solve_joints"):
        solve_ik(model, data, site, [0, 6], target)


def test_compute_ik_functions_restore_data_qpos(so101):
    """The seed's ``compute_*`` leave their last iterate in ``data``; pinkctl's restore it."""
    _, sim, dofs = so101
    model, data = sim.model, sim.data
    site = model.site("gripper_frame_link").id
    qpos, xpos = data.qpos.copy(), data.site_xpos.copy()
    current = qpos[model.jnt_qposadr[model.dof_jntid[dofs]]]
    target = xpos[site] + [0.03, 0.0, -0.02]
    for compute in (compute_ik_levenberg_marquardt, compute_ik_pseudoinverse):
        q = compute(model, data, site, dofs, target, current)
        assert not np.allclose(q, current)
        assert np.array_equal(data.qpos, qpos) and np.array_equal(data.site_xpos, xpos)
