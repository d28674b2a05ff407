"""One test per option row of docs/groups.md's mapping table (the seed's constants, named
after them), and bad input at every boundary the seed's functions added to pinkctl.groups."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from pinkctl.errors import InputError
from pinkctl.groups import (
    IK_METHODS,
    JOINT_MODES,
    JOINT_TYPES,
    PARENT,
    WORLD,
    Constraint,
    GroupFlags,
    IKElement,
    IKEnvironment,
    IKEnvironments,
    IKGroup,
    ResultCode,
    chain_jacobian,
    find_config,
    solve,
)

TOOL = "panda_hand_tcp"
C = Constraint
TESTS = Path(__file__).resolve().parent
DOCS = TESTS.parent / "docs" / "groups.md"

#: Every function of the seed's index, and the deprecated ones its text describes.
SEED_FUNCTIONS = (
    "ikAddElement",
    "ikComputeGroupJacobian",
    "ikComputeJacobian",
    "ikCreateDummy",
    "ikCreateEnvironment",
    "ikCreateGroup",
    "ikCreateJoint",
    "ikDoesGroupExist",
    "ikDoesObjectExist",
    "ikDuplicateEnvironment",
    "ikEraseEnvironment",
    "ikEraseObject",
    "ikFindConfig",
    "ikGetConfigForTipPose",
    "ikGetElementBase",
    "ikGetElementConstraints",
    "ikGetElementFlags",
    "ikGetElementPrecision",
    "ikGetElementWeights",
    "ikGetGroupCalculation",
    "ikGetGroupFlags",
    "ikGetGroupHandle",
    "ikGetGroupJointLimitHits",
    "ikGetGroupJoints",
    "ikGetJointDependency",
    "ikGetJointInterval",
    "ikGetJointLimitMargin",
    "ikGetJointMatrix",
    "ikGetJointMaxStepSize",
    "ikGetJointMode",
    "ikGetJointPosition",
    "ikGetJointScrewLead",
    "ikGetJointTransformation",
    "ikGetJointType",
    "ikGetJointWeight",
    "ikGetLastError",
    "ikGetLinkedDummy",
    "ikGetObjectHandle",
    "ikGetObjectMatrix",
    "ikGetObjectParent",
    "ikGetObjectTransformation",
    "ikGetObjectType",
    "ikGetObjects",
    "ikGetTargetDummy",
    "ikHandleGroups",
    "ikLoad",
    "ikReleaseBuffer",
    "ikSave",
    "ikSetElementBase",
    "ikSetElementConstraints",
    "ikSetElementFlags",
    "ikSetElementPrecision",
    "ikSetElementWeights",
    "ikSetGroupCalculation",
    "ikSetGroupFlags",
    "ikSetJointDependency",
    "ikSetJointInterval",
    "ikSetJointLimitMargin",
    "ikSetJointMaxStepSize",
    "ikSetJointMode",
    "ikSetJointPosition",
    "ikSetJointScrewLead",
    "ikSetJointWeight",
    "ikSetLinkedDummy",
    "ikSetObjectMatrix",
    "ikSetObjectParent",
    "ikSetObjectTransformation",
    "ikSetSphericalJointMatrix",
    "ikSetSphericalJointQuaternion",
    "ikSetTargetDummy",
    "ikSwitchEnvironment",
)
#: The seed's constants, by prefix.
SEED_OPTIONS = (
    "ik_handle_world",
    "ik_handle_parent",
    "ik_handleflag_tipdummy",
    "ik_constraint_",
    "ik_method_",
    "ik_group_",
    "ik_calc_",
    "ik_jointmode_",
    "ik_jointtype_",
)
ENABLED = GroupFlags.ENABLED


@pytest.fixture
def scene(franka_scene):
    return franka_scene


def _se3(rotation=(0.0, 0.0, 0.0), translation=(0.0, 0.0, 0.0)) -> pin.SE3:
    return pin.SE3(pin.exp3(np.array(rotation, dtype=float)), np.array(translation, dtype=float))


def _goal(scene, offset, rotation=(0.0, 0.0, 0.0), name="goal") -> None:
    scene.add_dummy(name, pose=scene.world_pose(TOOL, scene.neutral()) * _se3(rotation, offset))


def _narrow(scene) -> None:
    """Joint 1 within ±0.2 rad and a goal 0.6 rad around the base."""
    tool = scene.world_pose(TOOL, scene.neutral())
    scene.add_dummy("goal", pose=_se3((0.0, 0.0, 0.6)) * tool)
    scene.set_joint_interval("panda_joint1", lower=-0.2, range=0.4)


# ---------------------------------------------------------------------- handles


def test_ik_handle_world_and_parent(scene):
    q = scene.neutral()
    q[:7] += 0.3
    scene.add_dummy("d", parent="panda_link5", pose=_se3((0.2, 0.0, 0.0), (0.0, 0.1, 0.0)))
    assert (WORLD, PARENT) == ("world", "parent")
    np.testing.assert_allclose(
        scene.pose("d", WORLD, q=q).homogeneous, scene.world_pose("d", q).homogeneous, atol=1e-15
    )
    np.testing.assert_allclose(
        scene.pose("d", PARENT, q=q).homogeneous, scene.placement("d").homogeneous, atol=1e-15
    )
    scene.set_pose("d", _se3(translation=(0.5, 0.0, 0.5)), WORLD, q=q)
    np.testing.assert_allclose(scene.world_pose("d", q).translation, [0.5, 0.0, 0.5], atol=1e-12)


def test_ik_handleflag_tipdummy(scene):
    _goal(scene, (0.02, 0.0, 0.0))
    scene.add_dummy("elbow_goal", parent="panda_link4")
    first = IKElement(TOOL, "goal")
    group = IKGroup(scene, [IKElement("panda_link4", "elbow_goal"), first, IKElement(TOOL)])
    assert group.element(TOOL) is first  # the first element on that tip
    assert group.element_index(TOOL) == 1 and group.element(-2) is first
    group.element(TOOL).precision = (1e-3, 1e-2)
    assert first.precision == (1e-3, 1e-2)
    assert group.remove_element(TOOL) is first and group.element(TOOL) is not first
    with pytest.raises(InputError, match="key: no element of the group has the tip 'panda_hand'"):
        group.element("panda_hand")


# ---------------------------------------------------------------------- constants


def test_ik_constraint():
    seed = {
        "ik_constraint_x": C.X,
        "ik_constraint_y": C.Y,
        "ik_constraint_z": C.Z,
        "ik_constraint_alpha_beta": C.ALPHA_BETA,
        "ik_constraint_gamma": C.GAMMA,
    }
    assert len({int(bit) for bit in seed.values()}) == 5
    assert C.POSITION == C.X | C.Y | C.Z and C.ORIENTATION == C.ALPHA_BETA | C.GAMMA
    assert C.POSE == C.POSITION | C.ORIENTATION
    with pytest.raises(InputError, match="GAMMA needs ALPHA_BETA"):
        IKElement(TOOL, "goal", constraints=C.GAMMA)  # the seed's rule


def test_ik_constraint_rows(scene):
    _goal(scene, (0.02, 0.01, 0.0), (0.1, 0.2, 0.3))
    labels = {C.X: ["x"], C.Y: ["y"], C.Z: ["z"], C.ALPHA_BETA: ["alpha", "beta"]}
    labels[C.ALPHA_BETA | C.GAMMA] = ["alpha", "beta", "gamma"]
    full = IKGroup(scene, [IKElement(TOOL, "goal")]).error(scene.neutral()).e
    index = {"x": 0, "y": 1, "z": 2, "alpha": 3, "beta": 4, "gamma": 5}
    for mask, axes in labels.items():
        error = IKGroup(scene, [IKElement(TOOL, "goal", constraints=mask)]).error(scene.neutral())
        assert [row.axis for row in error.rows] == axes
        np.testing.assert_array_equal(error.e, full[[index[a] for a in axes]])


@pytest.mark.parametrize(
    ("seed", "method"),
    [
        ("ik_method_pseudo_inverse", "pinv"),
        ("ik_method_undamped_pseudo_inverse", "pinv_undamped"),
        ("ik_method_damped_least_squares", "dls"),
        ("ik_method_jacobian_transpose", "transpose"),
    ],
)
def test_ik_method(scene, seed, method):
    assert method in IK_METHODS
    _goal(scene, (0.04, 0.05, -0.03), (0.1, -0.1, 0.2))
    loose = (1e-3, 1e-2) if method == "transpose" else (1e-4, 1e-3)  # the transpose zigzags
    element = IKElement(TOOL, "goal", precision=loose)
    group = IKGroup(scene, [element], method=method, damping=0.01, max_iterations=300)
    q, code = group.solve(scene.neutral())
    assert not code & ResultCode.FAILED, seed


def _flag_scene(scene, flag: str) -> tuple[IKGroup, np.ndarray]:
    """A group where ``flag`` matters, and the start configuration."""
    if flag in ("avoid_limits", "stop_on_limit_hit"):
        _narrow(scene)
        group = IKGroup(scene, [IKElement(TOOL, "goal")])
        group.set_joint("panda_joint1", limit_margin=0.05)
    elif flag == "restore_on_bad_ang_tol":
        _goal(scene, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0))  # one step cannot turn the tool 1 rad
        group = IKGroup(scene, [IKElement(TOOL, "goal", precision=(0.05, 1e-3))], max_iterations=1)
    else:
        _goal(scene, (0.0, 0.0, -2.0) if flag == "restore_on_bad_lin_tol" else (0.0, 0.3, 0.0))
        group = IKGroup(scene, [IKElement(TOOL, "goal")], max_iterations=1)
    return group, scene.neutral()


@pytest.mark.parametrize(
    ("seed", "flag"),
    [
        ("ik_group_enabled", "enabled"),
        ("ik_group_ignoremaxsteps", "ignore_max_steps"),
        ("ik_group_restoreonbadlintol", "restore_on_bad_lin_tol"),
        ("ik_group_restoreonbadangtol", "restore_on_bad_ang_tol"),
        ("ik_group_avoidlimits", "avoid_limits"),
        ("ik_group_stoponlimithit", "stop_on_limit_hit"),
    ],
)
def test_ik_group_flags(scene, seed, flag):
    member = GroupFlags[flag.upper()]
    group, q0 = _flag_scene(scene, flag)
    group.flags = ENABLED & ~member if flag == "enabled" else ENABLED
    without = group.solve(q0)
    group.flags = ENABLED | member
    with_flag = group.solve(q0)
    if flag == "enabled":
        assert without.code == ResultCode.NOT_PERFORMED and with_flag.code != without.code
    elif flag == "ignore_max_steps":
        assert (
            without.code & ResultCode.STEPS_TOO_BIG
            and not with_flag.code & ResultCode.STEPS_TOO_BIG
        )
    elif flag.startswith("restore"):
        assert not np.array_equal(without.q, q0)
        np.testing.assert_array_equal(with_flag.q, q0)
    elif flag == "avoid_limits":
        assert without.q[0] == pytest.approx(0.2) and with_flag.q[0] <= 0.15 + 1e-12
    else:  # the first joint to hit lands on its limit and the solve ends there
        assert not without.code & ResultCode.NOT_WITHIN_TOLERANCE
        assert with_flag.q[0] == 0.2 and with_flag.code & ResultCode.NOT_WITHIN_TOLERANCE


@pytest.mark.parametrize(
    ("seed", "bit"),
    [
        ("ik_calc_notperformed", ResultCode.NOT_PERFORMED),
        ("ik_calc_cannotinvert", ResultCode.CANNOT_INVERT),
        ("ik_calc_notwithintolerance", ResultCode.NOT_WITHIN_TOLERANCE),
        ("ik_calc_stepstoobig", ResultCode.STEPS_TOO_BIG),
        ("ik_calc_limithit", ResultCode.LIMIT_HIT),
    ],
)
def test_ik_calc(scene, seed, bit):
    if bit == ResultCode.LIMIT_HIT:
        _narrow(scene)
        group = IKGroup(scene, [IKElement(TOOL, "goal")])
    else:
        _goal(
            scene, (0.0, 0.0, -2.0) if bit == ResultCode.NOT_WITHIN_TOLERANCE else (0.0, 0.3, 0.0)
        )
        elements = [IKElement(TOOL, "goal")]
        if bit == ResultCode.CANNOT_INVERT:
            elements.append(IKElement(TOOL, "goal"))  # 12 rows of rank 6
        method = "pinv_undamped" if bit == ResultCode.CANNOT_INVERT else "pinv"
        flags = GroupFlags(0) if bit == ResultCode.NOT_PERFORMED else ENABLED
        iterations = 5 if bit == ResultCode.NOT_WITHIN_TOLERANCE else 50
        group = IKGroup(scene, elements, method=method, flags=flags, max_iterations=iterations)
    q, code = group.solve(scene.neutral())
    assert code & bit, seed
    assert bool(code & ResultCode.FAILED) == bool(bit & ResultCode.FAILED)


def test_ik_jointmode(scene):
    assert JOINT_MODES == ("ik", "passive")  # ik_jointmode_ik, ik_jointmode_passive
    _goal(scene, (0.03, 0.0, 0.0))
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    scene.set_joint_settings("panda_joint3", mode="passive")
    assert "panda_joint3" not in [c.joint for c in group.columns]
    scene.set_joint_settings("panda_joint3", mode="ik")
    assert "panda_joint3" in [c.joint for c in group.columns]


def test_ik_jointtype(scene):
    assert JOINT_TYPES == ("revolute", "prismatic", "spherical")
    for kind in JOINT_TYPES:
        scene.add_joint(kind, kind)
        assert scene.joint_type(kind) == kind and scene.objects()[-1].joint_type == kind


# ---------------------------------------------------------------------- bad input


def _bad_calls(scene, env):
    """``(call, message)`` of every boundary the seed's functions added."""
    q = scene.neutral()
    group = env.add_group("g", [IKElement(TOOL, "goal")])
    envs = IKEnvironments()
    envs.create()
    tip = scene.world_pose(TOOL, q)
    anything = IKGroup(scene, [IKElement(TOOL, precision=(10.0, 10.0))])  # any draw solves it
    return {
        "scene robot": (lambda: IKEnvironment("franka"), "robot must be a PinkRobot or None"),
        "pose relative_to": (lambda: scene.pose(TOOL, 3, q=q), "relative_to: 3 is not a frame"),
        "pose name": (lambda: scene.pose("nowhere"), "'nowhere' is not an object"),
        "pose q": (lambda: scene.pose(TOOL), "q is needed"),
        "object_type": (lambda: scene.object_type(None), "None is not an object"),
        "set_target tip": (lambda: scene.set_target("nowhere", "goal"), "tip 'nowhere'"),
        "set_target target": (lambda: scene.set_target(TOOL, TOOL), "target 'panda_hand_tcp'"),
        "joint_position q": (lambda: scene.joint_position("panda_joint1", q[:3]), "q must be"),
        "set_joint_position value": (
            lambda: scene.set_joint_position("panda_joint1", math.nan, q),
            "value must be finite",
        ),
        "set_joint_position joint": (
            lambda: scene.set_joint_position("panda_link1", 0.0, q),
            "'panda_link1' is not a joint",
        ),
        "set_spherical_joint rotation": (
            lambda: scene.set_spherical_joint("ball", np.eye(2), q),
            "rotation must be a 3x3 rotation matrix or a quaternion",
        ),
        "set_spherical_joint quaternion": (
            lambda: scene.set_spherical_joint("ball", ["1", 0, 0, 0], q),
            "rotation must be an array of shape",
        ),
        "joint_transform q": (lambda: scene.joint_transform("panda_joint1", None), "q must be"),
        "set_joint_settings field": (
            lambda: scene.set_joint_settings("panda_joint1", speed=1.0),
            "set_joint_settings: .*speed",
        ),
        "set_joint_settings weight": (
            lambda: scene.set_joint_settings("panda_joint1", weight=-1.0),
            r"weight must be in \[0, inf\]",
        ),
        "set_joint_settings mode": (
            lambda: scene.set_joint_settings("panda_joint1", mode="free"),
            "mode must be one of",
        ),
        "set_screw_lead lead": (
            lambda: scene.set_screw_lead("panda_joint1", "0.1"),
            "lead must be a real number",
        ),
        "set_pose relative_to": (
            lambda: scene.set_pose("goal", pin.SE3.Identity(), "nowhere"),
            "relative_to: 'nowhere' is not a frame",
        ),
        "element key": (lambda: group.element(3), r"key must be an integer in \[-1, 0\]"),
        "element key bool": (lambda: group.element(True), "key must be an integer"),
        "element key empty": (lambda: IKGroup(scene).element(0), "key: the group has no element"),
        "set_joint field": (lambda: group.set_joint("panda_joint1", speed=1), "set_joint: .*speed"),
        "reset_joint": (lambda: group.reset_joint("panda_link1"), "'panda_link1' is not a joint"),
        "element target": (
            lambda: IKGroup(scene, [IKElement("panda_link3")]),
            "target: element on tip 'panda_link3' has none",
        ),
        "element other scene": (
            lambda: IKGroup(IKEnvironment().scene, [group.element(0)]),
            "belongs to another scene",
        ),
        "callback": (lambda: setattr(group, "jacobian_callback", 1), "jacobian_callback must be"),
        "chain joint": (
            lambda: chain_jacobian(scene, q, "panda_link7", tip),
            "joint 'panda_link7'",
        ),
        "chain base": (
            lambda: chain_jacobian(scene, q, "panda_joint7", tip, base="nowhere"),
            "base 'nowhere' is not a frame",
        ),
        "chain tip_pose": (
            lambda: chain_jacobian(scene, q, "panda_joint7", np.eye(3)),
            "tip_pose must be a pin.SE3 or a 4x4",
        ),
        "chain target_pose": (
            lambda: chain_jacobian(scene, q, "panda_joint7", tip, target_pose="goal"),
            "target_pose must be",
        ),
        "chain constraints": (
            lambda: chain_jacobian(scene, q, "panda_joint7", tip, constraints=0),
            "constraints must be",
        ),
        "chain constraint_base_pose": (
            lambda: chain_jacobian(scene, q, "panda_joint7", tip, constraint_base_pose=1.0),
            "constraint_base_pose must be",
        ),
        "find_config threshold": (
            lambda: find_config(group, q, threshold=-1.0),
            r"threshold must be in \[0, inf\]",
        ),
        "find_config metric": (lambda: find_config(group, q, metric=(1, 1, 1)), "metric must be"),
        "find_config negative metric": (
            lambda: find_config(group, q, metric=(1, 1, -1, 1)),
            "metric must be >= 0",
        ),
        "find_config max_trials": (
            lambda: find_config(group, q, max_trials=0),
            r"max_trials must be an integer in \[1, 1000000\]",
        ),
        "find_config max_time": (lambda: find_config(group, q, max_time=-1), "max_time must be"),
        "find_config joints": (lambda: find_config(group, q, joints="panda_joint1"), "joints must"),
        "find_config unknown joint": (
            lambda: find_config(group, q, joints=["nope"]),
            "joints: 'nope' is not a joint",
        ),
        "find_config ranges": (
            lambda: find_config(group, q, ranges={"panda_joint1": (0.0,)}),
            r"ranges\['panda_joint1'\] must be an array of shape \(2,\)",
        ),
        "find_config validate": (lambda: find_config(group, q, validate=3), "validate must be"),
        "find_config rng": (lambda: find_config(group, q, rng="seed"), "rng must be an integer"),
        "find_config validate verdict": (
            lambda: find_config(anything, q, threshold=10.0, max_trials=1, validate=lambda q: 1),
            "validate .*<lambda> returned 1, not a bool",
        ),
        "envs switch": (lambda: envs.switch(-3), r"handle must be an integer in \[0, inf\]"),
        "envs getitem": (lambda: envs[9], "handle 9 is not an environment"),
        "loads text": (lambda: IKEnvironment.loads(b"format = 1"), "text must be a str"),
    }


def test_new_boundaries_refuse_bad_input(scene, franka_robot):
    env = IKEnvironment(franka_robot)
    scene = env.scene
    _goal(scene, (0.02, 0.0, 0.0))
    scene.add_joint("ball", "spherical")
    for name, (call, message) in _bad_calls(scene, env).items():
        revision, targets, settings = scene.revision, scene.targets, scene.settings
        with pytest.raises(InputError, match=message):
            call()
        assert (scene.revision, scene.targets, scene.settings) == (revision, targets, settings), (
            name
        )


def test_a_rejected_element_leaves_the_tip_and_the_group_unchanged(scene):
    _goal(scene, (0.02, 0.0, 0.0))
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    bad = IKElement("panda_link5", "goal", base="nowhere")
    with pytest.raises(InputError, match="element 1: base 'nowhere' is not a frame"):
        group.add_element(bad)
    assert scene.target("panda_link5") is None and bad.scene is None and len(group.elements) == 1
    bad.base = None
    assert group.add_element(bad) == 1 and scene.target("panda_link5") == "goal"


def test_a_cascade_refuses_callback_steps_and_solve_checks_priority(scene):
    _goal(scene, (0.02, 0.0, 0.0))
    upper = IKGroup(scene, [IKElement(TOOL, "goal")])
    lower = IKGroup(scene, [IKElement("panda_link4", "goal", constraints=C.Z)])
    lower.jacobian_callback = lambda jacobian: np.zeros(len(jacobian.columns))
    with pytest.raises(
        InputError, match="only for a group solved alone or with priority='nullspace'"
    ):
        solve([upper, lower], scene.neutral(), priority="cascade")
    solve([upper, lower], scene.neutral(), priority="nullspace")  # the seed's form takes it
    with pytest.raises(InputError, match="priority must be one of"):
        solve([upper, lower], scene.neutral(), priority="projected")


def _table_rows() -> list[str]:
    text = DOCS.read_text(encoding="utf-8")
    table = text.split("## The seed, function by function", 1)[1].split("\n\n| seed |", 1)[1]
    return [line for line in table.split("\n\n", 1)[0].splitlines() if line.startswith("| `")]


def test_the_mapping_table_has_every_seed_function_and_a_test_for_each_row():
    if not DOCS.is_file():  # e.g. tests run from an sdist
        pytest.skip("docs/ is not available")
    rows = _table_rows()
    seed_cells = " ".join(row.split(" | ")[0] for row in rows)
    missing = [name for name in SEED_FUNCTIONS + SEED_OPTIONS if f"`{name}" not in seed_cells]
    assert missing == [], missing
    defined = set()
    for path in TESTS.glob("test_groups_seed*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined |= {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    for row in rows:
        cells = row.strip("|").split(" | ")
        assert len(cells) == 4 and cells[2].startswith(("works", "differs", "as ")), row
        named = re.findall(r"`(test_\w+)`", cells[3])
        assert named and set(named) <= defined, row
