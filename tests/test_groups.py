"""IK groups (pinkctl.groups): constraint masks, the exact Jacobian, every group flag and
result code, joint settings, and strict priorities between groups, on the Franka."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pinkctl.errors import InputError
from pinkctl.groups import (
    IK_METHODS,
    MAX_DAMPING,
    MAX_ITERATIONS,
    Column,
    Constraint,
    GroupFlags,
    IKElement,
    IKGroup,
    JointSettings,
    KinematicScene,
    NonFiniteDependency,
    ResultCode,
    Row,
    solve,
)
from pinkctl.groups.joint_settings import DEFAULT_MAX_STEP_ANGULAR
from pinkctl.groups.step_size import combine, fit_max_steps, parts_of, shrink_to_fit

TOOL = "panda_hand_tcp"
C = Constraint
ENABLED = GroupFlags.ENABLED
#: Every valid constraint mask (GAMMA needs ALPHA_BETA): 8 position subsets x 3 - 1 = 23.
MASKS = [
    C(position | orientation)
    for position in range(8)
    for orientation in (0, int(C.ALPHA_BETA), int(C.ORIENTATION))
    if position | orientation
]


@pytest.fixture
def robot(franka_robot):
    return franka_robot


@pytest.fixture
def scene(franka_scene):
    return franka_scene


def _add_goal(scene: KinematicScene, offset: pin.SE3, name: str = "goal") -> pin.SE3:
    """A dummy at the home tool pose times ``offset``; returns its world pose."""
    pose = scene.world_pose(TOOL, scene.neutral()) * offset
    scene.add_dummy(name, pose=pose)
    return pose


def _offset(rotation: list[float], translation: list[float]) -> pin.SE3:
    return pin.SE3(pin.exp3(np.array(rotation)), np.array(translation))


# ---------------------------------------------------------------------- constraint masks


def test_every_constraint_mask_is_accepted_and_gamma_needs_alpha_beta():
    assert len(MASKS) == 23
    for mask in MASKS:
        assert IKElement(TOOL, "goal", constraints=mask).constraints == mask
    for bad in (0, C.GAMMA, C.X | C.GAMMA, 64, True, "x"):
        with pytest.raises(InputError, match="constraints"):
            IKElement(TOOL, "goal", constraints=bad)  # type: ignore[arg-type]


def test_xy_mask_leaves_z_free(scene):
    goal = _add_goal(scene, _offset([0.0, 0.0, 0.0], [0.05, -0.04, 0.02]))
    start = scene.neutral()
    start[:7] += 0.05
    planar = IKGroup(scene, [IKElement(TOOL, "goal", constraints=C.X | C.Y)])
    q_low, code = planar.solve(start)
    assert code == ResultCode.OK
    scene.set_pose("goal", pin.SE3(goal.rotation, goal.translation + [0.0, 0.0, 0.1]))
    q_high, code = planar.solve(start)
    assert code == ResultCode.OK
    np.testing.assert_array_equal(q_high, q_low)  # z is not in the error: same iterates
    tip = scene.world_pose(TOOL, q_high).translation
    np.testing.assert_allclose(tip[:2], goal.translation[:2], atol=1e-4)
    assert abs(tip[2] - (goal.translation[2] + 0.1)) > 0.05  # the tip did not follow in z
    full, _ = IKGroup(scene, [IKElement(TOOL, "goal", constraints=C.POSITION)]).solve(start)
    assert abs(scene.world_pose(TOOL, full).translation[2] - goal.translation[2] - 0.1) < 1e-4


def test_alpha_beta_mask_leaves_rotation_about_the_tip_z_axis_free(scene):
    q0 = scene.neutral()
    _add_goal(scene, pin.SE3.Identity())  # the goal is the tool pose at q0
    spin = _offset([0.0, 0.0, 0.8], [0.0, 0.0, 0.0])  # about the goal's own z axis
    scene.set_pose("goal", scene.world_pose("goal") * spin)
    tilt_only = IKGroup(scene, [IKElement(TOOL, "goal", constraints=C.ALPHA_BETA)])
    q, code = tilt_only.solve(q0)
    assert code == ResultCode.OK and tilt_only.last_report.iterations == 0
    np.testing.assert_array_equal(q, q0)
    error = tilt_only.error(q0)
    assert [row.axis for row in error.rows] == ["alpha", "beta"]
    np.testing.assert_allclose(error.e, 0.0, atol=1e-12)
    oriented = IKGroup(scene, [IKElement(TOOL, "goal", constraints=C.ORIENTATION)])
    q, code = oriented.solve(q0)
    assert not code & ResultCode.FAILED
    turned = scene.world_pose(TOOL, q0).rotation.T @ scene.world_pose(TOOL, q).rotation
    np.testing.assert_allclose(pin.log3(turned), [0.0, 0.0, 0.8], atol=1e-3)


def test_alpha_beta_aligns_the_z_axes_from_a_tilted_start(scene):
    _add_goal(scene, _offset([0.3, -0.2, 0.5], [0.0, 0.0, 0.0]))
    group = IKGroup(scene, [IKElement(TOOL, "goal", constraints=C.ALPHA_BETA)])
    q, code = group.solve(scene.neutral())
    assert not code & ResultCode.FAILED
    tip_z = scene.world_pose(TOOL, q).rotation[:, 2]
    goal = scene.world_pose("goal").rotation
    assert np.degrees(np.arccos(min(1.0, float(tip_z @ goal[:, 2])))) < 0.1
    about_z = pin.log3(goal.T @ scene.world_pose(TOOL, q).rotation)[2]
    assert abs(about_z) > 0.1  # the rotation about z is left where the iteration put it


# ---------------------------------------------------------------------- the Jacobian


def _finite_differences(group: IKGroup, q: np.ndarray, h: float = 1e-6) -> np.ndarray:
    model = group.scene.model
    columns = group.layout().v_indices
    J = np.zeros((len(group.error(q).e), len(columns)))
    for k, v in enumerate(columns):
        dv = np.zeros(model.nv)
        dv[v] = h
        plus = group.error(pin.integrate(model, q, dv)).e
        minus = group.error(pin.integrate(model, q, -dv)).e
        J[:, k] = (plus - minus) / (2.0 * h)
    return J


@pytest.fixture
def frames_scene(scene):
    """Targets and constraint bases fixed in the world and moving with chain joints."""
    rng = np.random.default_rng(11)

    def pose() -> pin.SE3:
        return pin.SE3(pin.exp3(rng.uniform(-0.6, 0.6, 3)), rng.uniform(-0.1, 0.1, 3))

    scene.add_dummy("goal", pose=scene.world_pose(TOOL, scene.neutral()) * pose())
    scene.add_dummy("moving_goal", parent="panda_link3", pose=pose())
    scene.add_dummy("constraint_frame", parent="panda_link4", pose=pose())
    scene.add_dummy("tip", parent="panda_hand", pose=pose())
    return scene


@pytest.mark.parametrize("mask", MASKS, ids=lambda m: str(m.value))
@pytest.mark.parametrize("setting", ["world", "link_base"])
def test_jacobian_matches_finite_differences(frames_scene, mask, setting):
    if setting == "world":
        element = IKElement(TOOL, "goal", constraints=mask)
    else:
        element = IKElement(
            "tip",
            "moving_goal",
            base="panda_link2",
            constraint_base="constraint_frame",
            constraints=mask,
        )
    group = IKGroup(frames_scene, [element])
    q = frames_scene.neutral()
    q[:7] += np.random.default_rng(int(mask)).uniform(-0.3, 0.3, 7)
    jacobian = group.jacobian(q)
    joints = [c.joint for c in jacobian.columns]
    assert joints == [f"panda_joint{i}" for i in range(1 if setting == "world" else 3, 8)]
    assert [row.axis for row in jacobian.rows] == [
        axis for axis in ("x", "y", "z") if mask & C[axis.upper()]
    ] + (["alpha", "beta"] if mask & C.ALPHA_BETA else []) + (["gamma"] if mask & C.GAMMA else [])
    np.testing.assert_allclose(jacobian.J, _finite_differences(group, q), atol=1e-6)
    np.testing.assert_array_equal(jacobian.e, group.error(q).e)


def test_rows_and_columns_name_elements_axes_and_joints(scene):
    _add_goal(scene, pin.SE3.Identity())
    scene.add_dummy("elbow_goal", parent="panda_link4")
    group = IKGroup(
        scene,
        [
            IKElement(TOOL, "goal", constraints=C.Z | C.GAMMA | C.ALPHA_BETA),
            IKElement("panda_link4", "elbow_goal", constraints=C.X, enabled=False),
            IKElement("panda_link4", "elbow_goal", constraints=C.Y),
        ],
    )
    jacobian = group.jacobian(scene.neutral())
    assert jacobian.rows == (
        Row(0, "z"),
        Row(0, "alpha"),
        Row(0, "beta"),
        Row(0, "gamma"),
        Row(2, "y"),
    )
    assert jacobian.columns[0] == Column("panda_joint1", 0) and len(jacobian.columns) == 7
    assert group.columns == jacobian.columns


# ---------------------------------------------------------------------- flags and codes


def test_reachable_target_is_ok_with_every_method(scene):
    _add_goal(scene, _offset([0.1, -0.1, 0.2], [0.04, 0.05, -0.03]))
    for method in IK_METHODS:
        # the Jacobian transpose zigzags: 162 steps to 1 mm here, where the others take < 10
        precision = (1e-3, 1e-2) if method == "transpose" else (1e-4, 1e-3)
        element = IKElement(TOOL, "goal", precision=precision)
        group = IKGroup(scene, [element], method=method, max_iterations=300)
        q, code = group.solve(scene.neutral())
        assert not code & ResultCode.FAILED, method
        linear, angular = group.last_report.precision
        assert linear <= precision[0] and angular <= precision[1], method


def test_disabled_groups_and_elements_are_not_performed(scene):
    _add_goal(scene, _offset([0.0, 0.0, 0.0], [0.03, 0.0, 0.0]))
    q0 = scene.neutral()
    disabled = IKGroup(scene, [IKElement(TOOL, "goal")], flags=GroupFlags(0))
    q, code = disabled.solve(q0)
    assert code == ResultCode.NOT_PERFORMED
    np.testing.assert_array_equal(q, q0)
    no_element = IKGroup(scene, [IKElement(TOOL, "goal", enabled=False)])
    assert no_element.solve(q0).code == ResultCode.NOT_PERFORMED
    frozen = IKGroup(scene, [IKElement(TOOL, "goal")])
    for i in range(1, 8):
        frozen.set_joint(f"panda_joint{i}", mode="passive")
    assert frozen.solve(q0).code == ResultCode.NOT_PERFORMED
    active = IKGroup(scene, [IKElement(TOOL, "goal")])
    q, code = solve([disabled, active], q0)
    assert code == ResultCode.OK
    assert disabled.last_report.code & ResultCode.NOT_PERFORMED


def test_out_of_reach_target_and_the_restore_flags(scene):
    _add_goal(scene, _offset([0.0, 0.0, 0.0], [0.0, 0.0, -2.0]))  # 2 m along the tool z
    q0 = scene.neutral()
    plain = IKGroup(scene, [IKElement(TOOL, "goal")], max_iterations=5)
    q, code = plain.solve(q0)
    assert code & ResultCode.NOT_WITHIN_TOLERANCE
    assert not np.array_equal(q, q0)
    flags = ENABLED | GroupFlags.RESTORE_ON_BAD_LIN_TOL
    keep = IKGroup(scene, [IKElement(TOOL, "goal")], max_iterations=5, flags=flags)
    q, code = keep.solve(q0)
    assert code & ResultCode.NOT_WITHIN_TOLERANCE
    np.testing.assert_array_equal(q, q0)
    assert keep.last_report.precision[0] > 1.9  # measured at the returned configuration
    keep.flags = ENABLED | GroupFlags.RESTORE_ON_BAD_ANG_TOL  # the orientation was reached
    q, code = keep.solve(q0)
    assert code & ResultCode.NOT_WITHIN_TOLERANCE and not np.array_equal(q, q0)


def test_restore_flags_check_their_own_precision(scene):
    # one step cannot turn the tool 1 rad; the position needs no change at all
    _add_goal(scene, _offset([0.0, 0.0, 1.0], [0.0, 0.0, 0.0]))
    q0 = scene.neutral()

    def run(flag: GroupFlags) -> tuple[np.ndarray, ResultCode]:
        element = IKElement(TOOL, "goal", precision=(0.05, 1e-3))
        return IKGroup(scene, [element], max_iterations=1, flags=ENABLED | flag).solve(q0)

    q, code = run(GroupFlags.RESTORE_ON_BAD_LIN_TOL)
    assert code & ResultCode.NOT_WITHIN_TOLERANCE and not np.array_equal(q, q0)
    q, code = run(GroupFlags.RESTORE_ON_BAD_ANG_TOL)
    assert code & ResultCode.NOT_WITHIN_TOLERANCE
    np.testing.assert_array_equal(q, q0)


def test_a_step_above_max_step_is_halved_until_it_fits(scene):
    _add_goal(scene, _offset([0.0, 0.0, 0.0], [0.0, 0.3, 0.0]))
    q0 = scene.neutral()
    jacobian = IKGroup(scene, [IKElement(TOOL, "goal")]).jacobian(q0)
    full = -np.linalg.solve(jacobian.J @ jacobian.J.T + 1e-10 * np.eye(6), jacobian.e)
    full = jacobian.J.T @ full  # the pinv method's step
    halvings = int(np.ceil(np.log2(np.max(np.abs(full)) / DEFAULT_MAX_STEP_ANGULAR)))
    assert halvings >= 1
    one = IKGroup(scene, [IKElement(TOOL, "goal")], max_iterations=1)
    q, code = one.solve(q0)
    assert code & ResultCode.STEPS_TOO_BIG
    np.testing.assert_allclose(q[:7] - q0[:7], full / 2**halvings, atol=1e-12)
    assert np.max(np.abs(q - q0)) <= DEFAULT_MAX_STEP_ANGULAR
    ignore = IKGroup(
        scene,
        [IKElement(TOOL, "goal")],
        max_iterations=1,
        flags=ENABLED | GroupFlags.IGNORE_MAX_STEPS,
    )
    q, code = ignore.solve(q0)
    assert not code & ResultCode.STEPS_TOO_BIG
    np.testing.assert_allclose(q[:7] - q0[:7], full, atol=1e-12)
    one.set_joint("panda_joint1", max_step=0.01)
    q, _ = one.solve(q0)
    assert abs(q[0] - q0[0]) <= 0.01


@pytest.fixture
def narrow_scene(scene):
    """Joint 1 limited to ±0.2 rad and a goal 0.6 rad around the base."""
    tool = scene.world_pose(TOOL, scene.neutral())
    scene.add_dummy("turned", pose=_offset([0.0, 0.0, 0.6], [0.0, 0.0, 0.0]) * tool)
    scene.set_joint_interval("panda_joint1", lower=-0.2, range=0.4)
    return scene


@pytest.mark.parametrize("method", ["pinv", "qp"])
def test_limit_hit_and_stop_on_limit_hit(narrow_scene, method):
    q0 = narrow_scene.neutral()
    group = IKGroup(narrow_scene, [IKElement(TOOL, "turned")], method=method)
    q, code = group.solve(q0)
    assert code & ResultCode.LIMIT_HIT and not code & ResultCode.NOT_WITHIN_TOLERANCE
    assert list(group.last_report.limit_hits) == ["panda_joint1"]
    assert q[0] <= 0.2
    group.flags = ENABLED | GroupFlags.STOP_ON_LIMIT_HIT
    q, code = group.solve(q0)
    assert code & ResultCode.LIMIT_HIT and code & ResultCode.NOT_WITHIN_TOLERANCE
    assert q[0] == 0.2  # stopped exactly on the limit
    assert group.last_report.iterations < 5
    overshoot = group.last_report.limit_hits["panda_joint1"]
    if method == "qp":  # the bounded step lands on the limit
        assert abs(overshoot) < 1e-12
    else:  # the step would have crossed it by that much
        assert overshoot > 0.01


@pytest.mark.parametrize("method", ["dls", "qp"])
def test_avoid_limits_keeps_the_margin(narrow_scene, method):
    group = IKGroup(
        narrow_scene,
        [IKElement(TOOL, "turned")],
        method=method,
        flags=ENABLED | GroupFlags.AVOID_LIMITS,
    )
    group.set_joint("panda_joint1", limit_margin=0.05)
    q, code = group.solve(narrow_scene.neutral())
    assert not code & ResultCode.LIMIT_HIT and not code & ResultCode.NOT_WITHIN_TOLERANCE
    assert q[0] <= 0.15 + 1e-12  # the other joints made up for it


def test_undamped_pseudo_inverse_cannot_invert_a_rank_deficient_jacobian(scene):
    _add_goal(scene, _offset([0.0, 0.0, 0.0], [0.05, 0.0, 0.0]))
    twice = [IKElement(TOOL, "goal"), IKElement(TOOL, "goal")]  # 12 rows of rank 6
    q0 = scene.neutral()
    group = IKGroup(scene, twice, method="pinv_undamped")
    q, code = group.solve(q0)
    assert code & ResultCode.CANNOT_INVERT and code & ResultCode.NOT_WITHIN_TOLERANCE
    np.testing.assert_array_equal(q, q0)
    group.method = "dls"
    assert group.solve(q0).code == ResultCode.OK


def test_jacobian_callback_sees_metadata_and_may_change_the_step(scene):
    _add_goal(scene, _offset([0.0, 0.0, 0.0], [0.05, 0.0, 0.0]))
    seen = []

    def inspect(jacobian):
        seen.append((jacobian.J.shape, jacobian.rows[0], jacobian.columns[-1]))
        return None

    group = IKGroup(scene, [IKElement(TOOL, "goal", weights=(2.0, 1.0, 1.0))])
    group.jacobian_callback = inspect
    assert group.solve(scene.neutral()).code == ResultCode.OK
    assert seen[0] == ((6, 7), Row(0, "x"), Column("panda_joint7", 0))

    def poison(jacobian):
        jacobian.e[0] = np.nan

    group.jacobian_callback = poison
    assert group.solve(scene.neutral()).code & ResultCode.CANNOT_INVERT

    def joint_one_only(jacobian):
        step = np.zeros(len(jacobian.columns))
        step[0] = 0.01
        return step

    group.jacobian_callback = joint_one_only
    group.max_iterations = 3
    q, _ = group.solve(scene.neutral())
    np.testing.assert_allclose(q[:7] - scene.neutral()[:7], [0.03, 0, 0, 0, 0, 0, 0])
    other = IKGroup(scene, [IKElement(TOOL, "goal")])
    with pytest.raises(InputError, match="alone"):
        solve([other, group], scene.neutral())
    group.jacobian_callback = lambda jacobian: np.zeros(2)
    with pytest.raises(InputError, match="shape"):
        group.solve(scene.neutral())


# ---------------------------------------------------------------------- joint settings


def test_joint_modes_and_weights(scene):
    _add_goal(scene, _offset([0.0, 0.0, 0.0], [0.05, 0.05, 0.0]))
    q0 = scene.neutral()
    position = IKElement(TOOL, "goal", constraints=C.POSITION)
    even, _ = IKGroup(scene, [position]).solve(q0)
    held = IKGroup(scene, [position])
    held.set_joint("panda_joint1", mode="passive")
    assert held.joint("panda_joint1") == JointSettings(mode="passive")
    assert [c.joint for c in held.columns][0] == "panda_joint2"
    q, code = held.solve(q0)
    assert code == ResultCode.OK and q[0] == q0[0]
    light = IKGroup(
        scene, [position], max_iterations=1, flags=ENABLED | GroupFlags.IGNORE_MAX_STEPS
    )
    step_even = light.solve(q0).q - q0
    light.set_joint("panda_joint1", weight=0.1)
    step_light = light.solve(q0).q - q0
    assert abs(step_light[0]) < 0.2 * abs(step_even[0])
    light.set_joint("panda_joint1", weight=0.0)
    assert light.solve(q0).q[0] == q0[0]
    assert not np.array_equal(even, q0)
    for bad in ({"mode": "free"}, {"weight": -1.0}, {"limit_margin": -0.1}, {"max_step": 0.0}):
        with pytest.raises(InputError):
            held.set_joint("panda_joint2", **bad)
    with pytest.raises(InputError, match="speed"):
        held.set_joint("panda_joint2", speed=1.0)
    with pytest.raises(InputError, match="joint"):
        held.set_joint("no_such_joint", weight=1.0)
    assert held.joint_settings == {"panda_joint1": JointSettings(mode="passive")}


def test_dependent_joints_follow_their_master(scene):
    _add_goal(scene, _offset([0.2, 0.0, 0.0], [0.03, 0.02, 0.0]))
    scene.set_joint_dependency("panda_joint7", "panda_joint5", offset=0.3, mult=-0.5)
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    assert "panda_joint7" not in [c.joint for c in group.columns]
    q0 = scene.neutral()
    np.testing.assert_allclose(group.jacobian(q0).J, _finite_differences(group, q0), atol=1e-6)
    q, _ = group.solve(q0)
    assert q[6] == pytest.approx(0.3 - 0.5 * q[4], abs=1e-15)
    scene.set_joint_dependency("panda_joint7", "panda_joint5", callback=lambda m: np.sin(m) + 1.0)
    np.testing.assert_allclose(group.jacobian(q0).J, _finite_differences(group, q0), atol=1e-6)
    q, _ = group.solve(q0)
    assert q[6] == pytest.approx(np.sin(q[4]) + 1.0, abs=1e-15)
    group.set_joint("panda_joint5", mode="passive")  # the master held: so is its follower
    assert "panda_joint5" not in [c.joint for c in group.columns]


# ---------------------------------------------------------------------- priorities


@pytest.mark.parametrize("priority", ["cascade", "nullspace"])
def test_first_group_keeps_its_precision_against_a_conflicting_second(scene, priority):
    _add_goal(scene, _offset([0.1, -0.2, 0.1], [0.05, 0.08, -0.05]))
    elbow = scene.world_pose("panda_link4", scene.neutral())
    scene.add_dummy("elbow_goal", pose=pin.SE3(np.eye(3), elbow.translation + [0.0, 0.3, 0.2]))
    pose = IKGroup(scene, [IKElement(TOOL, "goal")], max_iterations=50)
    reach = IKElement("panda_link4", "elbow_goal", constraints=C.POSITION)
    elbow_group = IKGroup(scene, [reach])
    q, code = solve([pose, elbow_group], scene.neutral(), priority=priority)
    assert code & ResultCode.NOT_WITHIN_TOLERANCE  # the elbow goal is out of reach
    linear, angular = pose.last_report.precision
    assert linear <= 1e-4 and angular <= 1e-3
    assert elbow_group.last_report.precision[0] > 0.2
    both = IKGroup(scene, [IKElement(TOOL, "goal"), reach], max_iterations=50)
    q, _ = both.solve(scene.neutral())
    assert np.linalg.norm(pose.error(q).e[:3]) > 0.01  # weighted: the pose is given away


def _fit(cumulative: list[np.ndarray], limit: np.ndarray) -> tuple[np.ndarray, bool]:
    parts = parts_of(cumulative)
    scales, scaled = fit_max_steps(parts, limit)
    total, shrunk = shrink_to_fit(combine(parts, scales), limit)
    return total, scaled or shrunk


def test_max_steps_halve_the_lower_groups_contribution_first():
    limit = np.array([1.0, 1.0])
    upper, both = np.array([0.5, 0.0]), np.array([0.5, 3.0])
    dq, scaled = _fit([upper, both], limit)  # the lower part halved twice, the upper one kept
    np.testing.assert_array_equal(dq, [0.5, 0.75])
    assert scaled
    # the upper step alone does not fit: the lower part is dropped, the rest halved
    dq, scaled = _fit([np.array([3.0, 0.0]), np.array([3.0, 0.5])], limit)
    np.testing.assert_array_equal(dq, [0.75, 0.0])
    dq, scaled = _fit([np.array([0.2, 0.0]), np.array([0.2, 0.3])], limit)
    np.testing.assert_array_equal(dq, [0.2, 0.3])
    assert not scaled


def test_solve_rejects_bad_arguments(scene, robot):
    _add_goal(scene, pin.SE3.Identity())
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    stranger = IKGroup(KinematicScene(robot), [])
    for call, message in [
        (lambda: solve([], scene.neutral()), "non-empty"),
        (lambda: solve([group, stranger], scene.neutral()), "same scene"),
        (lambda: solve([group], scene.neutral(), priority="weighted"), "priority"),
        (lambda: group.solve(np.zeros(3)), "shape"),
        (lambda: group.solve(np.full(scene.model.nq, np.nan)), "NaN"),
        (lambda: IKGroup(scene, [IKElement(TOOL, "nowhere")]), "target 'nowhere'"),
        (lambda: IKGroup(scene, method="newton"), "method"),
        (lambda: IKGroup(scene, max_iterations=0), "max_iterations"),
        (lambda: IKGroup(scene, flags=1024), "flags"),
        (lambda: IKGroup(scene, damping=-1.0), "damping"),
        (lambda: IKGroup(scene, jacobian_callback=3), "callable"),  # type: ignore[arg-type]
        (lambda: IKGroup(robot), "KinematicScene"),  # type: ignore[arg-type]
        (lambda: group.remove_element(5), "key must be an integer"),
        (lambda: IKElement(TOOL, "goal", precision=(1.0,)), "precision"),
        (lambda: IKElement(TOOL, "goal", weights=(1.0, -1.0, 1.0)), "weights"),
        (lambda: IKElement(TOOL, "goal", enabled=1), "enabled"),  # type: ignore[arg-type]
        (lambda: IKElement("", "goal"), "tip"),
    ]:
        with pytest.raises(InputError, match=message):
            call()
    assert group.remove_element(0).target == "goal" and group.elements == ()


# ---------------------------------------------------------------------- bad callbacks and values


def _nan_law_scene(scene, callback):
    _add_goal(scene, _offset([0.3, 0.0, 0.0], [0.03, 0.02, 0.0]))
    scene.set_joint_dependency("panda_joint7", "panda_joint5", callback=callback)
    return IKGroup(scene, [IKElement(TOOL, "goal")])


def test_a_dependency_callback_returning_nan_fails_the_solve_and_leaves_q_unchanged(scene):
    group = _nan_law_scene(scene, lambda master: np.nan)
    q0 = scene.neutral()
    q, code = group.solve(q0)
    np.testing.assert_array_equal(q, q0)  # never a configuration with NaN
    assert code & ResultCode.CANNOT_INVERT and code & ResultCode.FAILED
    report = group.last_report
    assert report.iterations == 0 and np.isfinite(report.precision).all()
    assert "'panda_joint7'" in report.reason and "<lambda>" in report.reason
    assert "nan" in report.reason
    with pytest.raises(NonFiniteDependency, match="panda_joint7"):  # an InputError
        group.jacobian(q0)
    with pytest.raises(InputError, match="panda_joint7"):
        group.error(q0)


def test_a_dependency_law_leaving_its_domain_mid_solve_stops_at_the_last_finite_q(scene):
    def law(master: float) -> float:  # defined for master < 0.05 only (the solve needs 0.18)
        return 0.1 + master if master < 0.05 else np.nan

    group = _nan_law_scene(scene, law)
    q, code = group.solve(scene.neutral())
    assert np.isfinite(q).all() and q[4] < 0.05 and q[6] == law(q[4])
    assert code & ResultCode.CANNOT_INVERT
    assert "panda_joint5 = " in group.last_report.reason


def test_a_linear_law_that_overflows_is_non_finite_too(scene):
    _add_goal(scene, _offset([0.3, 0.0, 0.0], [0.03, 0.02, 0.0]))
    scene.set_joint_dependency("panda_joint7", "panda_joint1", offset=1e308, mult=1e308)
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    q0 = scene.neutral()
    q0[0] = 2.0  # 1e308 + 2e308 overflows
    q, code = group.solve(q0)
    np.testing.assert_array_equal(q, q0)
    assert code & ResultCode.CANNOT_INVERT and "dependency law" in group.last_report.reason


@pytest.mark.parametrize(
    ("callback", "message", "cause"),
    [
        (lambda master: 1.0 / 0.0, "raised ZeroDivisionError: float division by zero", True),
        (lambda master: "0.1", "returned '0.1', not a real number", False),
        (lambda master: None, "returned None, not a real number", False),
        (lambda master: 0.5 + 1j, r"returned \(0.5\+1j\), not a real number", False),
    ],
)
def test_a_dependency_callback_that_raises_or_returns_no_number_is_named(
    scene, callback, message, cause
):
    group = _nan_law_scene(scene, callback)
    q0 = scene.neutral()
    with pytest.raises(InputError, match=rf"callback <lambda> of joint 'panda_joint7'.*{message}"):
        group.solve(q0)
    with pytest.raises(InputError) as error:
        group.jacobian(q0)
    assert isinstance(error.value.__cause__, ZeroDivisionError) is cause


def test_a_jacobian_callback_that_raises_or_returns_strings_is_named(scene):
    _add_goal(scene, _offset([0.0, 0.0, 0.0], [0.05, 0.0, 0.0]))

    def broken(jacobian):
        raise KeyError("row")

    group = IKGroup(scene, [IKElement(TOOL, "goal")], jacobian_callback=broken)
    with pytest.raises(InputError, match="jacobian_callback .*broken raised KeyError") as error:
        group.solve(scene.neutral())
    assert isinstance(error.value.__cause__, KeyError)
    group.jacobian_callback = lambda jacobian: ["0.01"] * len(jacobian.columns)
    with pytest.raises(InputError, match="step must be an array of shape"):
        group.solve(scene.neutral())


def test_max_iterations_is_an_integer_up_to_its_documented_bound(scene):
    group = IKGroup(scene)
    for bad in (10**15, MAX_ITERATIONS + 1, 1e3, 0, True):
        with pytest.raises(InputError, match=r"max_iterations must be an integer"):
            group.max_iterations = bad
    assert group.max_iterations == 20  # a rejected value changes nothing
    group.max_iterations = np.int64(MAX_ITERATIONS)
    assert group.max_iterations == MAX_ITERATIONS and type(group.max_iterations) is int
    with pytest.raises(InputError, match=r"\[1, 10000\]"):
        IKGroup(scene, max_iterations=10**15)


def test_configurations_and_poses_are_real_numbers_of_the_exact_shape(scene):
    _add_goal(scene, pin.SE3.Identity())
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    nq = scene.model.nq
    for q in (["0.1"] * nq, np.full(nq, 0.1 + 1j), np.zeros((1, nq)), np.zeros(nq, dtype=bool)):
        with pytest.raises(InputError, match=rf"q must be an array of shape \({nq},\)"):
            group.solve(q)
    pose = [["1", "0", "0", "0.4"], ["0", "1", "0", "0"], ["0", "0", "1", "0.5"], [0, 0, 0, 1]]
    with pytest.raises(InputError, match="pose"):
        scene.add_dummy("stringly", pose=pose)
    assert "stringly" not in scene.dummies


def test_a_max_step_far_below_the_step_still_bounds_it(scene):
    _add_goal(scene, _offset([0.0, 0.0, 0.0], [0.05, 0.05, 0.0]))
    group = IKGroup(scene, [IKElement(TOOL, "goal", constraints=C.POSITION)], max_iterations=1)
    group.set_joint("panda_joint1", max_step=1e-30)  # 2^-60 of a 0.1 rad step is 9e-20
    q0 = scene.neutral()
    q, code = group.solve(q0)
    assert abs(q[0] - q0[0]) <= 1e-30
    assert code & ResultCode.STEPS_TOO_BIG


@pytest.mark.parametrize("method", ["qp", "dls"])
def test_damping_has_a_documented_upper_bound(scene, method):
    _add_goal(scene, _offset([0.3, 0.0, 0.0], [0.03, 0.02, 0.0]))
    group = IKGroup(scene, [IKElement(TOOL, "goal")], method=method, damping=MAX_DAMPING)
    q, code = group.solve(scene.neutral())  # legal, however useless: a result code, no crash
    assert np.isfinite(q).all() and code & ResultCode.FAILED
    with pytest.raises(InputError, match=r"damping must be in \[0, 1000\]"):
        group.damping = 1e200  # its square overflowed into an OverflowError in the qp step
    assert group.damping == MAX_DAMPING


def test_an_interval_whose_upper_limit_overflows_is_refused(scene):
    with pytest.raises(InputError, match="overflows"):
        scene.set_joint_interval("panda_joint1", lower=1e308, range=1e308)
    assert scene.limits("panda_joint1") == pytest.approx((-2.8973, 2.8973), abs=1e-3)
