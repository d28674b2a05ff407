"""MuJoCo-level IK (pinkctl.mujoco_ik) and the Pinocchio <-> MuJoCo configuration pair.

Small MJCF models written here: a chain with a ball joint, a free-floating body with an arm,
a scalar hinge arm. The lerobot seed's helpers are checked against pinkctl's own ``local_ik``
on the SO-101.
"""

from __future__ import annotations

import inspect

import mujoco
import numpy as np
import pinocchio as pin
import pytest

import pinkctl
from pinkctl import InputError, from_mujoco_qpos, load_pink_supported_robot, to_mujoco_qpos
from pinkctl.mujoco_ik import (
    DOWN,
    JointSolution,
    chain_joints,
    compute_ik_levenberg_marquardt,
    compute_ik_pseudoinverse,
    solve_ik,
    solve_joints,
)

BALL_CHAIN = """
<mujoco model="ball_chain">
  <compiler angle="radian" autolimits="true"/>
  <worldbody>
    <body name="base" pos="0 0 0.1">
      <joint name="yaw" type="hinge" axis="0 0 1" range="-2 2"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.02"/>
      <body name="upper" pos="0 0 0.3">
        <joint name="shoulder" type="ball" range="0 1.0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
        <body name="lower" pos="0.3 0 0" quat="0.9238795 0 0.3826834 0">
          <joint name="elbow" type="hinge" axis="0 1 0" range="-2.5 2.5"/>
          <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.02"/>
          <site name="tip" pos="0.25 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

FLOATING_ARM = """
<mujoco model="floating_arm">
  <compiler angle="radian" autolimits="true"/>
  <worldbody>
    <body name="torso" pos="0.1 0.2 0.5" quat="0.9659258 0 0 0.2588190">
      <freejoint name="root"/>
      <geom type="box" size="0.1 0.1 0.1"/>
      <body name="link1" pos="0.1 0 0.1">
        <joint name="j1" type="hinge" axis="0 0 1" range="-3 3"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
        <body name="link2" pos="0.3 0 0">
          <joint name="j2" type="hinge" axis="0 1 0" range="-2 2"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
          <site name="hand" pos="0.2 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

HINGE_ARM = """
<mujoco model="hinge_arm">
  <compiler angle="radian" autolimits="true"/>
  <worldbody>
    <body name="l0">
      <joint name="a1" type="hinge" axis="0 0 1" range="-3 3"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.2" size="0.02"/>
      <body name="l1" pos="0 0 0.2">
        <joint name="a2" type="hinge" axis="0 1 0" range="-2 2"/>
        <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.02"/>
        <body name="l2" pos="0.25 0 0">
          <joint name="a3" type="hinge" axis="0 1 0" range="-2.5 2.5"/>
          <joint name="a4" type="slide" axis="1 0 0" range="0 0.1"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
          <site name="end" pos="0.2 0 0"/>
          <body name="left_finger" pos="0.2 0.01 0">
            <joint name="f1" type="slide" axis="0 1 0" range="0 0.04"/>
            <geom type="box" size="0.01 0.005 0.01"/>
          </body>
          <body name="right_finger" pos="0.2 -0.01 0">
            <joint name="f2" type="slide" axis="0 -1 0" range="0 0.04"/>
            <geom type="box" size="0.01 0.005 0.01"/>
            <site name="right_tip" pos="0.02 0 0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint joint1="f2" joint2="f1"/>
  </equality>
</mujoco>
"""

SO101_ARM = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]


def _mujoco(xml: str) -> tuple[mujoco.MjModel, mujoco.MjData]:
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def _pinocchio(xml: str, tmp_path) -> pin.Model:
    path = tmp_path / "model.xml"
    path.write_text(xml)
    return pin.buildModelFromMJCF(str(path))


def _site_pose(model, qpos, site):
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    sid = model.site(site).id
    quaternion = np.empty(4)
    mujoco.mju_mat2Quat(quaternion, data.site_xmat[sid])
    return data.site_xpos[sid].copy(), quaternion


def _random_qpos(model, rng, spread):
    """A configuration moved from qpos0 by a random velocity, inside the joint ranges."""
    from pinkctl.mujoco_ik import project_to_limits

    qpos = model.qpos0.copy()
    mujoco.mj_integratePos(model, qpos, rng.uniform(-spread, spread, model.nv), 1.0)
    project_to_limits(model, range(model.njnt), qpos)
    return qpos


def _ball_angle(model, qpos, joint):
    a = model.joint(joint).qposadr[0]
    return 2.0 * np.arccos(min(1.0, abs(qpos[a])))


# --------------------------------------------------------------- configuration conversions
@pytest.mark.parametrize("xml, site", [(BALL_CHAIN, "tip"), (FLOATING_ARM, "hand")])
def test_to_mujoco_qpos_puts_the_site_where_pinocchio_puts_the_frame(xml, site, tmp_path):
    pm, (mm, _) = _pinocchio(xml, tmp_path), _mujoco(xml)
    data = pm.createData()
    pin.seed(0)
    for _ in range(5):
        q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
        pin.framesForwardKinematics(pm, data, q)
        frame = data.oMf[pm.getFrameId(site)]
        position, quaternion = _site_pose(mm, to_mujoco_qpos(pm, mm, q), site)
        assert np.linalg.norm(position - frame.translation) < 1e-12
        rotation = np.empty(9)
        mujoco.mju_quat2Mat(rotation, quaternion)
        assert np.abs(rotation.reshape(3, 3) - frame.rotation).max() < 1e-12


def test_ball_joint_round_trip_and_quaternion_order(tmp_path):
    pm, (mm, _) = _pinocchio(BALL_CHAIN, tmp_path), _mujoco(BALL_CHAIN)
    pin.seed(1)
    q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
    qpos = to_mujoco_qpos(pm, mm, q)
    i, a = pm.joints[pm.getJointId("shoulder")].idx_q, mm.joint("shoulder").qposadr[0]
    x, y, z, w = q[i : i + 4]
    assert qpos[a : a + 4] == pytest.approx([w, x, y, z], abs=1e-15)
    assert qpos[mm.joint("elbow").qposadr[0]] == q[pm.joints[pm.getJointId("elbow")].idx_q]
    back = from_mujoco_qpos(pm, mm, qpos)
    assert np.abs(pin.difference(pm, q, back)).max() < 1e-12
    # the neutral configurations correspond
    assert to_mujoco_qpos(pm, mm, pin.neutral(pm)) == pytest.approx(mm.qpos0)


def test_free_joint_round_trip_is_the_body_world_pose(tmp_path):
    pm, (mm, md) = _pinocchio(FLOATING_ARM, tmp_path), _mujoco(FLOATING_ARM)
    pin.seed(1)
    q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
    qpos = to_mujoco_qpos(pm, mm, q)
    data = pm.createData()
    pin.framesForwardKinematics(pm, data, q)
    torso = data.oMf[pm.getFrameId("torso")]
    x, y, z, w = pin.SE3ToXYZQUAT(torso)[3:]
    assert qpos[:3] == pytest.approx(torso.translation, abs=1e-12)
    assert qpos[3:7] == pytest.approx(np.sign(w * qpos[3]) * np.array([w, x, y, z]), abs=1e-12)
    back = from_mujoco_qpos(pm, mm, qpos)
    assert np.abs(pin.difference(pm, q, back)).max() < 1e-12
    # MuJoCo's own start pose reads back as the Pinocchio configuration that places it
    assert to_mujoco_qpos(pm, mm, from_mujoco_qpos(pm, mm, md.qpos)) == pytest.approx(mm.qpos0)


def test_copying_q_into_qpos_misplaces_a_ball_joint_arm_and_the_conversion_does_not(tmp_path):
    """Issue 28 bug 4: Pinocchio's (x, y, z, w) copied into MuJoCo's (w, x, y, z)."""
    pm, (mm, _) = _pinocchio(BALL_CHAIN, tmp_path), _mujoco(BALL_CHAIN)
    data = pm.createData()
    q = pin.neutral(pm)
    i = pm.joints[pm.getJointId("shoulder")].idx_q
    q[i : i + 4] = pin.Quaternion(pin.utils.rpyToMatrix(0.2, 0.6, 0.3)).coeffs()
    pin.framesForwardKinematics(pm, data, q)
    goal = data.oMf[pm.getFrameId("tip")].translation
    naive = _site_pose(mm, q, "tip")[0]
    converted = _site_pose(mm, to_mujoco_qpos(pm, mm, q), "tip")[0]
    assert np.linalg.norm(naive - goal) > 0.1
    assert np.linalg.norm(converted - goal) < 1e-12


@pytest.mark.parametrize("name", ["franka", "kinova"])
def test_conversions_on_catalog_robots_mimic_and_continuous_joints(name):
    robot = load_pink_supported_robot(name)
    sim = pinkctl.MujocoSimulation.from_robot(robot)
    data = robot.model.createData()
    for seed in range(3):
        pin.seed(seed)
        q = pin.randomConfiguration(robot.model)
        qpos = to_mujoco_qpos(robot, sim, q)
        pin.framesForwardKinematics(robot.model, data, q)
        for site in sim.site_names:
            frame = data.oMf[robot.model.getFrameId(site)].translation
            assert np.linalg.norm(_site_pose(sim.model, qpos, site)[0] - frame) < 1e-12
        assert (
            np.abs(pin.difference(robot.model, q, from_mujoco_qpos(robot, sim, qpos))).max() < 1e-12
        )
    if name == "franka":  # the mimic finger gets its own MuJoCo value
        m = sim.model
        assert (
            qpos[m.joint("panda_finger_joint2").qposadr[0]]
            == qpos[m.joint("panda_finger_joint1").qposadr[0]]
        )


def test_conversion_keeps_mujoco_only_joints_and_maps_renamed_ones(tmp_path):
    scene = FLOATING_ARM.replace(
        "</worldbody>",
        '<body name="cube" pos="1 0 0.05"><freejoint name="cube"/>'
        '<geom type="box" size="0.02 0.02 0.02"/></body></worldbody>',
    )
    pm, (mm, _) = _pinocchio(FLOATING_ARM, tmp_path), _mujoco(scene)
    pin.seed(1)
    q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
    base = mm.qpos0.copy()
    base[9:12] = (0.5, 0.4, 0.3)
    qpos = to_mujoco_qpos(pm, mm, q, qpos=base)
    assert qpos[9:16] == pytest.approx(base[9:16])  # the cube is MuJoCo's only
    assert base[9:12] == pytest.approx((0.5, 0.4, 0.3))  # the base is not modified
    # a renamed joint, and one left out
    renamed = scene.replace('name="j1"', 'name="arm_1"')
    mr = mujoco.MjModel.from_xml_string(renamed)
    with pytest.raises(InputError, match=r"no joint named \['j1'\]"):
        to_mujoco_qpos(pm, mr, q)
    assert to_mujoco_qpos(pm, mr, q, qpos=base, joint_map={"j1": "arm_1"}) == pytest.approx(qpos)
    skipped = to_mujoco_qpos(pm, mr, q, joint_map={"j1": None})
    assert skipped[mr.joint("arm_1").qposadr[0]] == mr.qpos0[mr.joint("arm_1").qposadr[0]]
    start = pin.neutral(pm)
    back = from_mujoco_qpos(pm, mr, qpos, q=start, joint_map={"j1": None})
    assert back[pm.joints[pm.getJointId("j1")].idx_q] == start[pm.joints[pm.getJointId("j1")].idx_q]


def test_conversion_rejects_bad_input(tmp_path):
    pm, (mm, _) = _pinocchio(BALL_CHAIN, tmp_path), _mujoco(BALL_CHAIN)
    q = pin.neutral(pm)
    with pytest.raises(InputError, match="q must have 6 values"):
        to_mujoco_qpos(pm, mm, q[:5])
    with pytest.raises(InputError, match="qpos must be finite"):
        from_mujoco_qpos(pm, mm, np.full(mm.nq, np.nan))
    bad = q.copy()
    bad[1:5] = 0.0
    with pytest.raises(InputError, match="zero quaternion"):
        to_mujoco_qpos(pm, mm, bad)
    with pytest.raises(InputError, match="pin_model"):
        to_mujoco_qpos("robot", mm, q)
    with pytest.raises(InputError, match="mj_model"):
        to_mujoco_qpos(pm, None, q)
    with pytest.raises(InputError, match="lacks: \\['nope'\\]"):
        to_mujoco_qpos(pm, mm, q, joint_map={"nope": "yaw"})
    hinge_for_ball = BALL_CHAIN.replace('type="ball" range="0 1.0"', 'type="hinge"')
    with pytest.raises(InputError, match="JointModelSpherical in Pinocchio.*HINGE"):
        to_mujoco_qpos(pm, mujoco.MjModel.from_xml_string(hinge_for_ball), q)


# ------------------------------------------------------------------------- solve_joints
def test_solve_joints_has_the_seed_defaults():
    defaults = {k: p.default for k, p in inspect.signature(solve_joints).parameters.items()}
    assert defaults["max_iterations"] == 50
    assert defaults["damping"] == 0.01
    assert defaults["position_weight"] == 1.0
    assert defaults["rotation_weight"] == 0.3
    assert defaults["tolerance"] == 1e-3
    assert defaults["quaternion_order"] == "wxyz"
    assert "epsilon" not in defaults  # deprecated and ignored by the seed: not taken here


@pytest.mark.parametrize(
    "xml, site, joints",
    [
        (BALL_CHAIN, "tip", ["yaw", "shoulder", "elbow"]),
        (FLOATING_ARM, "hand", ["root", "j1", "j2"]),
        (HINGE_ARM, "end", None),
    ],
)
def test_solve_joints_reaches_poses_with_ball_free_and_hinge_joints(xml, site, joints):
    model, data = _mujoco(xml)
    rng = np.random.default_rng(0)
    reached = 0
    for _ in range(20):
        goal_position, goal_quaternion = _site_pose(model, _random_qpos(model, rng, 0.8), site)
        quaternion = None if joints is None else goal_quaternion  # the hinge arm: position
        result = solve_joints(model, data, site, joints, goal_position, quaternion)
        assert isinstance(result, JointSolution)
        assert result.iterations <= 50
        position, orientation = _site_pose(model, result.qpos, site)
        # the reported errors are the configuration's
        assert np.linalg.norm(position - goal_position) == pytest.approx(result.position_error)
        if quaternion is not None:
            angle = 2 * np.arccos(min(1.0, abs(float(orientation @ goal_quaternion))))
            assert angle == pytest.approx(result.rotation_error, abs=1e-7)
        if result.converged:
            reached += 1
            assert result.error < 1e-3 and result.position_error < 1e-3
        for j in result.joint_ids:  # quaternions stay unit
            kind, a = model.jnt_type[j], model.jnt_qposadr[j]
            if kind == mujoco.mjtJoint.mjJNT_BALL:
                assert np.linalg.norm(result.qpos[a : a + 4]) == pytest.approx(1.0, abs=1e-12)
            if kind == mujoco.mjtJoint.mjJNT_FREE:
                assert np.linalg.norm(result.qpos[a + 3 : a + 7]) == pytest.approx(1.0, abs=1e-12)
    # a local solve from qpos0 reaches every one of these targets, joints on limits included
    assert reached == 20


def test_solve_joints_respects_ball_and_hinge_ranges():
    model, data = _mujoco(BALL_CHAIN)
    start = model.qpos0.copy()
    # straight above the shoulder: 1.57 rad of ball rotation, the range allows 1.0
    goal = data.xpos[model.body("upper").id] + [0.0, 0.0, 0.5]
    result = solve_joints(model, data, "tip", ["yaw", "shoulder", "elbow"], goal, qpos=start)
    assert not result.converged
    assert _ball_angle(model, result.qpos, "shoulder") <= 1.0 + 1e-12
    start_error = np.linalg.norm(_site_pose(model, start, "tip")[0] - goal)
    assert result.position_error < start_error - 0.1  # the best it found, not the start
    for name in ("yaw", "elbow"):
        low, high = model.joint(name).range
        assert low <= result.qpos[model.joint(name).qposadr[0]] <= high
    # the same target with the range removed is reached
    free_ball = BALL_CHAIN.replace('type="ball" range="0 1.0"', 'type="ball"')
    model2, data2 = _mujoco(free_ball)
    result2 = solve_joints(model2, data2, "tip", ["yaw", "shoulder", "elbow"], goal)
    assert result2.converged and _ball_angle(model2, result2.qpos, "shoulder") > 1.0


def test_unreachable_target_returns_the_best_configuration_found():
    model, data = _mujoco(HINGE_ARM)
    goal = [2.0, 0.5, 0.4]
    result = solve_joints(model, data, "end", None, goal, max_iterations=200)
    assert not result.converged
    assert np.all(np.isfinite(result.qpos))
    # stretched toward the goal: distance from the shoulder minus the arm's reach
    shoulder = data.xpos[model.body("l1").id]
    reach = 0.25 + 0.2 + 0.1
    assert result.position_error == pytest.approx(np.linalg.norm(goal - shoulder) - reach, abs=1e-3)


def test_solve_joints_has_no_collision_avoidance():
    """Like the seed's, the solve ignores geometry: a box where the solution's forearm is
    changes nothing, and the answer goes through it."""
    model, data = _mujoco(HINGE_ARM)
    rng = np.random.default_rng(3)
    goal = _site_pose(model, _random_qpos(model, rng, 0.8), "end")[0]
    free = solve_joints(model, data, "end", None, goal)
    assert free.converged
    solved = mujoco.MjData(model)
    solved.qpos[:] = free.qpos
    mujoco.mj_kinematics(model, solved)
    forearm = solved.xpos[model.body("l2").id] + 0.1 * solved.xmat[model.body("l2").id][::3]
    where = " ".join(f"{v:.6f}" for v in forearm)
    box = f'<geom name="obstacle" type="box" size="0.03 0.03 0.03" pos="{where}"/>'
    blocked, blocked_data = _mujoco(HINGE_ARM.replace("<worldbody>", "<worldbody>" + box, 1))
    result = solve_joints(blocked, blocked_data, "end", None, goal)
    np.testing.assert_array_equal(result.qpos, free.qpos)
    blocked_data.qpos[:] = result.qpos
    mujoco.mj_forward(blocked, blocked_data)
    obstacle = blocked.geom("obstacle").id
    assert any(obstacle in (c.geom1, c.geom2) for c in blocked_data.contact[: blocked_data.ncon])


def test_solve_joints_restores_live_qpos_even_on_failure(monkeypatch):
    model, data = _mujoco(BALL_CHAIN)
    data.qpos[model.joint("elbow").qposadr[0]] = 0.4
    mujoco.mj_forward(model, data)
    qpos, site, cdof = data.qpos.copy(), data.site_xpos.copy(), data.cdof.copy()
    goal = site[0] + [0.05, 0.05, -0.05]
    result = solve_joints(model, data, "tip", ["yaw", "shoulder", "elbow"], goal)
    assert result.converged and not np.array_equal(result.qpos, qpos)
    assert np.array_equal(data.qpos, qpos) and np.array_equal(data.site_xpos, site)
    assert np.array_equal(data.cdof, cdof)

    def broken(*args):
        raise RuntimeError("jacobian failed")

    monkeypatch.setattr(mujoco, "mj_jacSite", broken)
    with pytest.raises(RuntimeError, match="jacobian failed"):
        solve_joints(model, data, "tip", ["yaw", "shoulder", "elbow"], goal)
    assert np.array_equal(data.qpos, qpos) and np.array_equal(data.site_xpos, site)


def test_max_step_bounds_every_velocity_coordinate_of_a_step():
    model, data = _mujoco(BALL_CHAIN)
    joints = ["yaw", "shoulder", "elbow"]
    goal = data.site_xpos[0] + [-0.2, 0.3, -0.1]
    moved = {}
    for bound in (None, 0.05):
        result = solve_joints(model, data, "tip", joints, goal, max_iterations=1, max_step=bound)
        velocity = np.empty(model.nv)
        mujoco.mj_differentiatePos(model, velocity, 1.0, model.qpos0, result.qpos)
        moved[bound] = np.abs(velocity).max()
    assert moved[None] > 0.1
    assert moved[0.05] == pytest.approx(0.05)  # the largest coordinate hits the bound


def test_default_joints_walk_from_the_site_to_the_root():
    model, _ = _mujoco(HINGE_ARM)
    names = [model.joint(j).name for j in chain_joints(model, model.site("right_tip").id)]
    assert names == ["a1", "a2", "a3", "a4"]  # root first; f2 follows f1 (an equality)
    ball, _ = _mujoco(BALL_CHAIN)
    assert [ball.joint(j).name for j in chain_joints(ball, 0)] == ["yaw", "elbow"]  # scalar
    world_site = _mujoco('<mujoco><worldbody><site name="s"/></worldbody></mujoco>')
    with pytest.raises(InputError, match="no hinge or slide joint"):
        solve_joints(*world_site, "s", None, [0, 0, 0])


def test_joints_and_site_by_id_and_quaternion_orders_agree():
    model, data = _mujoco(BALL_CHAIN)
    rng = np.random.default_rng(3)
    position, wxyz = _site_pose(model, _random_qpos(model, rng, 0.5), "tip")
    by_name = solve_joints(model, data, "tip", ["yaw", "shoulder", "elbow"], position, wxyz)
    by_id = solve_joints(model, data, 0, [0, 1, 2], position, 3.0 * wxyz)  # normalised
    xyzw = solve_joints(
        model, data, "tip", [0, 1, 2], position, wxyz[[1, 2, 3, 0]], quaternion_order="xyzw"
    )
    assert by_name.converged
    assert np.abs(by_name.qpos - by_id.qpos).max() < 1e-12
    assert np.abs(by_name.qpos - xyzw.qpos).max() < 1e-12


def test_solve_joints_rejects_bad_input_and_leaves_data_alone():
    model, data = _mujoco(BALL_CHAIN)
    qpos = data.qpos.copy()
    joints, goal = ["yaw", "shoulder", "elbow"], [0.3, 0.0, 0.3]
    cases = [
        ({"site": "nope"}, "site: no site named 'nope'"),
        ({"site": 7}, r"site: site id 7 is not in \[0, 1\)"),
        ({"joints": ["yaw", "knee"]}, r"joints\[1\]: no joint named 'knee'"),
        ({"joints": ["yaw", "yaw"]}, "names a joint twice"),
        ({"joints": "yaw"}, "joints must be a sequence"),
        ({"joints": []}, "must not be empty"),
        ({"position": [0.0, np.nan, 0.0]}, "position must be finite"),
        ({"position": [0.0, 0.0]}, "position must have 3 values"),
        ({"quaternion": [0, 0, 0, 0]}, "quaternion must not be zero"),
        ({"quaternion": [1, 0, np.inf, 0]}, "quaternion must be finite"),
        ({"qpos": np.zeros(5)}, "qpos must have 6 values"),
        ({"qpos": np.zeros(6)}, "zero quaternion for joint 'shoulder'"),
        ({"max_iterations": 0}, "max_iterations must be an integer >= 1"),
        ({"max_iterations": 2.5}, "max_iterations must be an integer"),
        ({"damping": 0.0}, "damping must be in"),
        ({"tolerance": -1.0}, "tolerance must be in"),
        ({"max_step": 0.0}, "max_step must be in"),
        ({"rotation_weight": -0.1}, "rotation_weight must be in"),
        ({"position_weight": 0.0}, "leave nothing to solve for"),
        ({"quaternion_order": "zyxw"}, "quaternion_order must be one of"),
    ]
    for change, message in cases:
        arguments = {"site": "tip", "joints": joints, "position": goal, "quaternion": None}
        arguments.update(change)
        with pytest.raises(InputError, match=message):
            solve_joints(model, data, **arguments)
        assert np.array_equal(data.qpos, qpos)
    with pytest.raises(InputError, match="data was not made for model"):
        solve_joints(model, mujoco.MjData(_mujoco(FLOATING_ARM)[0]), "tip", joints, goal)


# ---------------------------------------------------------- the lerobot seed's helpers
@pytest.fixture(scope="module")
def so101():
    robot = load_pink_supported_robot("so101")
    sim = pinkctl.MujocoSimulation.from_robot(robot)
    dofs = np.array([sim.model.joint(n).dofadr[0] for n in SO101_ARM])
    return robot, sim, dofs


def _so101_targets(robot, count, spread):
    """Tool positions of random arm configurations around home (reachable by construction)."""
    rng = np.random.default_rng(0)
    data, frame = robot.model.createData(), robot.model.getFrameId("gripper_frame_link")
    targets = []
    for _ in range(count):
        q = robot.q0.copy()
        q[:5] += rng.uniform(-spread, spread, 5)
        pin.framesForwardKinematics(robot.model, data, q)
        targets.append(data.oMf[frame].copy())
    return targets


def _tool_after(sim, dofs, q):
    qpos = sim.data.qpos.copy()
    qpos[dofs] = q
    return _site_pose(sim.model, qpos, "gripper_frame_link")[0]


def test_lerobot_helpers_have_the_seed_signatures():
    def defaults(function):
        return {
            k: p.default
            for k, p in inspect.signature(function).parameters.items()
            if p.default is not inspect.Parameter.empty
        }

    head = ["model", "data", "site_id", "dof_ids", "target_pos"]
    assert list(inspect.signature(solve_ik).parameters)[:5] == head
    assert list(inspect.signature(compute_ik_pseudoinverse).parameters)[:6] == head + ["current_q"]
    assert list(inspect.signature(compute_ik_levenberg_marquardt).parameters)[:6] == head + [
        "current_q"
    ]
    solve = defaults(solve_ik)
    assert (solve["ik_method"], solve["ik_damping"], solve["ik_iterations"]) == (
        "levenberg_marquardt",
        0.1,
        20,
    )
    assert solve["seed_q"] is None and solve["point_offset"] is None
    assert solve["approach_axis"] is None and np.array_equal(solve["approach_dir"], DOWN)
    lm = defaults(compute_ik_levenberg_marquardt)
    assert (lm["damping"], lm["max_iterations"], lm["tolerance"]) == (0.1, 20, 1e-4)
    pinv = defaults(compute_ik_pseudoinverse)
    assert (pinv["max_iterations"], pinv["tolerance"], pinv["step_size"]) == (20, 1e-4, 1.0)
    assert np.array_equal(DOWN, [0.0, 0.0, -1.0])


def test_lerobot_helpers_agree_with_local_ik_on_so101(so101):
    robot, sim, dofs = so101
    site = sim.model.site("gripper_frame_link").id
    data = robot.model.createData()
    frame = robot.model.getFrameId("gripper_frame_link")
    for pose in _so101_targets(robot, 10, 0.4):
        target = pose.translation
        ours = pinkctl.local_ik(  # the kinematics compared: no collision check
            robot,
            target,
            frame="gripper_frame_link",
            position_only=True,
            joint_names=SO101_ARM,
            world=pinkctl.World(),
            self_collision=False,
        )
        assert ours.success
        pin.framesForwardKinematics(robot.model, data, ours.q_full)
        reference = data.oMf[frame].translation
        lm = solve_ik(sim.model, sim.data, site, dofs, target, ik_damping=0.01, ik_iterations=50)
        pinv = solve_ik(sim.model, sim.data, site, dofs, target, ik_method="pseudoinverse")
        for q in (lm, pinv):
            reached = _tool_after(sim, dofs, q)
            assert np.linalg.norm(reached - target) < 1e-4  # the seed's tolerance
            assert np.linalg.norm(reached - reference) < 1e-4 + 1e-5
            # and Pinocchio agrees on where that configuration puts the tool
            qpos = sim.data.qpos.copy()
            qpos[dofs] = q
            pin.framesForwardKinematics(robot.model, data, from_mujoco_qpos(robot, sim.model, qpos))
            assert np.linalg.norm(data.oMf[frame].translation - reached) < 1e-12
        # solve_joints with the full pose on the same target
        quaternion = pin.Quaternion(pose.rotation)
        result = solve_joints(
            sim.model,
            sim.data,
            site,
            None,
            target,
            [quaternion.w, quaternion.x, quaternion.y, quaternion.z],
            max_iterations=100,
        )
        assert result.converged and result.position_error < 1e-3


def test_lerobot_seed_defaults_move_most_of_the_way_and_respect_ranges(so101):
    robot, sim, dofs = so101
    site = sim.model.site("gripper_frame_link").id
    start_tool = sim.data.site_xpos[site].copy()
    qpos = sim.data.qpos.copy()
    for pose in _so101_targets(robot, 5, 0.4):
        target = pose.translation
        q = solve_ik(sim.model, sim.data, site, dofs, target)  # damping 0.1, 20 iterations
        assert np.array_equal(sim.data.qpos, qpos)  # data left as it was
        remaining = np.linalg.norm(_tool_after(sim, dofs, q) - target)
        assert remaining < 0.1 * np.linalg.norm(start_tool - target)
    # far beyond reach: Levenberg-Marquardt clips to the joint ranges
    far = solve_ik(sim.model, sim.data, site, dofs, [2.0, 2.0, 2.0], ik_iterations=50)
    ranges = sim.model.jnt_range[sim.model.dof_jntid[dofs]]
    assert np.all(far >= ranges[:, 0]) and np.all(far <= ranges[:, 1])
    # seed_q selects the start: zero iterations return it as it is
    seed = np.full(5, 0.1)
    assert np.array_equal(
        solve_ik(sim.model, sim.data, site, dofs, [0.2, 0, 0.1], ik_iterations=0, seed_q=seed), seed
    )


def test_lerobot_top_down_grasp_point(so101):
    """``point_offset`` + ``approach_axis``: the grasp point reaches the target with the
    site's z axis pointing down."""
    _, sim, dofs = so101
    model, data = sim.model, sim.data
    site = model.site("gripper_frame_link").id
    offset = np.array([0.0, 0.0, -0.02])
    target = data.site_xpos[site] + [0.0, 0.05, -0.05]
    q = compute_ik_levenberg_marquardt(
        model,
        data,
        site,
        dofs,
        target,
        data.qpos[dofs],
        damping=0.01,
        max_iterations=100,
        point_offset=offset,
        approach_axis=2,
    )
    qpos = data.qpos.copy()
    qpos[dofs] = q
    position, quaternion = _site_pose(model, qpos, "gripper_frame_link")
    rotation = np.empty(9)
    mujoco.mju_quat2Mat(rotation, quaternion)
    rotation = rotation.reshape(3, 3)
    assert np.linalg.norm(position + rotation @ offset - target) < 1e-3
    assert rotation[:, 2] @ DOWN > np.cos(np.radians(2.0))


def test_lerobot_helpers_reject_bad_input(so101):
    _, sim, dofs = so101
    model, data = sim.model, sim.data
    site = model.site("gripper_frame_link").id
    target = [0.2, 0.0, 0.1]
    with pytest.raises(ValueError, match="ik_method must be one of"):
        solve_ik(model, data, site, dofs, target, ik_method="newton")
    with pytest.raises(ValueError, match="require ik_method='levenberg_marquardt'"):
        solve_ik(model, data, site, dofs, target, ik_method="pseudoinverse", approach_axis=2)
    with pytest.raises(InputError, match="current_q must have 5 values"):
        compute_ik_pseudoinverse(model, data, site, dofs, target, np.zeros(4))
    with pytest.raises(InputError, match=r"dof_ids must be in \[0, 6\)"):
        solve_ik(model, data, site, [0, 9], target)
    with pytest.raises(InputError, match="repeats"):
        solve_ik(model, data, site, [0, 0], target)
    with pytest.raises(InputError, match="site_id"):
        solve_ik(model, data, 5, dofs, target)
    with pytest.raises(InputError, match="approach_axis must be 0, 1, 2"):
        solve_ik(model, data, site, dofs, target, approach_axis=3)
    with pytest.raises(InputError, match="damping"):
        solve_ik(model, data, site, dofs, target, ik_damping=0.0)
    with pytest.raises(InputError, match="target_pos must be finite"):
        solve_ik(model, data, site, dofs, [np.nan, 0, 0])
    ball, ball_data = _mujoco(BALL_CHAIN)
    with pytest.raises(InputError, match="ball or free joints: use solve_joints"):
        solve_ik(ball, ball_data, 0, [0, 1], target)


def test_useIkController_built_in_solver_is_solve_joints_as_ik_solve_fn():
    """The seed's built-in DLS solver (50 iterations, damping 0.01, weights 1.0 / 0.3,
    tolerance 1e-3) plugged into an IkTarget as its ``ik_solve_fn``."""
    from pinkctl.view import InteractiveScene

    sim = pinkctl.MujocoSimulation.from_robot(load_pink_supported_robot("franka"))
    scene = InteractiveScene(sim)
    target = scene.add_target()
    addresses = [sim.model.joint(n).qposadr[0] for n in target.joint_names]

    def dls(position, quaternion, current_q):
        qpos = sim.data.qpos.copy()
        qpos[addresses] = current_q
        result = solve_joints(
            sim.model, sim.data, target.site, target.joint_names, position, quaternion, qpos
        )
        return result.qpos[addresses]

    target.ik_solve_fn = dls
    start = target.target_pose()
    target.move_target(start.position + [0.0, 0.08, -0.05], duration=0.3)
    scene.run(0.8)
    assert target.last_error is None and target.commands_written > 0
    position_error, rotation_error = target.tracking_error()
    # the solver stops at its tolerance (a weighted error of 1e-3) and the servos follow
    assert position_error < 1e-3 and rotation_error < 3e-3  # measured: 0.46 mm, 0.0011 rad
