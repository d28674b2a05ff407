"""One test per function row of docs/groups.md's mapping table: each function of the seed
(seed-coppelia-kinematics-routines-api.txt) checked through its pinkctl counterpart, the test
named after the seed's function (options and bad input: tests/test_groups_seed_options.py)."""

from __future__ import annotations

import math
import sys

import numpy as np
import pinocchio as pin
import pytest

from pinkctl.errors import InputError
from pinkctl.groups import (
    NO_ENVIRONMENT,
    Column,
    Constraint,
    FindResult,
    GroupFlags,
    IKElement,
    IKEnvironment,
    IKEnvironments,
    IKGroup,
    JointInterval,
    KinematicScene,
    ResultCode,
    Row,
    SceneObject,
    chain_jacobian,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TOOL = "panda_hand_tcp"
C = Constraint


@pytest.fixture
def scene(franka_scene):
    return franka_scene


@pytest.fixture
def env(franka_robot):
    return IKEnvironment(franka_robot)


def _se3(rotation=(0.0, 0.0, 0.0), translation=(0.0, 0.0, 0.0)) -> pin.SE3:
    return pin.SE3(pin.exp3(np.array(rotation, dtype=float)), np.array(translation, dtype=float))


def _goal(scene, offset=(0.03, -0.02, 0.01), rotation=(0.1, 0.0, 0.2), name="goal") -> pin.SE3:
    """A dummy at the home tool pose times an offset; its world pose."""
    pose = scene.world_pose(TOOL, scene.neutral()) * _se3(rotation, offset)
    scene.add_dummy(name, pose=pose)
    return pose


def _bent(scene) -> np.ndarray:
    q = scene.neutral()
    q[:7] += np.array([0.3, -0.2, 0.25, 0.3, -0.4, 0.2, 0.5])
    return q


def _same(a: pin.SE3, b: pin.SE3, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(a.homogeneous, b.homogeneous, atol=atol)


def _planar_arm(env: IKEnvironment) -> None:
    """Two revolute joints (0.5 m and 0.4 m links) and a target, in an empty environment."""
    scene = env.scene
    scene.add_joint("shoulder")
    scene.add_dummy("upper", parent="shoulder", pose=_se3(translation=(0.5, 0.0, 0.0)))
    scene.add_joint("elbow", parent="upper")
    scene.add_dummy("hand", parent="elbow", pose=_se3(translation=(0.4, 0.0, 0.0)))
    scene.add_dummy("mark", pose=_se3(translation=(0.3, 0.5, 0.0)))


# ---------------------------------------------------------------------- environments


def test_ikCreateEnvironment(franka_robot):
    empty = IKEnvironment()  # no robot: only the world
    assert empty.scene.robot is None and empty.scene.model.nq == 0 and empty.scene.objects() == []
    _planar_arm(empty)
    arm = empty.add_group("arm", [IKElement("hand", "mark", constraints=C.X | C.Y)])
    q, code = arm.solve(np.array([0.1, 0.1]))
    assert not code & ResultCode.FAILED
    np.testing.assert_allclose(
        empty.scene.world_pose("hand", q).translation, [0.3, 0.5, 0.0], atol=1e-4
    )
    envs = IKEnvironments()
    assert envs.current_handle == NO_ENVIRONMENT
    first = envs.create()
    assert (first, envs.current_handle) == (0, 0) and envs.current.scene.robot is None
    second = envs.create(franka_robot)  # the new one becomes the current one
    assert envs.current_handle == second == 1 and envs.current.scene.robot is franka_robot


def test_ikEraseEnvironment():
    envs = IKEnvironments()
    handles = [envs.create() for _ in range(3)]
    envs.switch(handles[1])
    assert envs.erase() == handles[2]  # switched to the most recently created one left
    assert envs.handles == [handles[0], handles[2]] and handles[1] not in envs
    assert envs.erase() == handles[0]
    assert envs.erase() == NO_ENVIRONMENT and len(envs) == 0
    with pytest.raises(InputError, match="no current environment"):
        envs.erase()
    with pytest.raises(InputError, match="no current environment"):
        envs.current  # noqa: B018 - the property raises
    assert envs.create() == 3  # handles are never reused


def test_ikDuplicateEnvironment(franka_robot):
    envs = IKEnvironments()
    original = envs.create(franka_robot)
    _goal(envs.current.scene)
    envs.current.add_group("tool", [IKElement(TOOL, "goal")])
    q0 = envs.current.scene.neutral()
    expected = envs.current.group("tool").solve(q0).q
    copy = envs.duplicate()
    assert envs.current_handle == original  # the copy does not become the current one
    duplicate = envs[copy]
    assert duplicate.group("tool").scene is duplicate.scene is not envs.current.scene
    duplicate.scene.set_pose("goal", _se3(translation=(0.4, 0.1, 0.4)))
    np.testing.assert_array_equal(envs.current.group("tool").solve(q0).q, expected)
    assert not np.array_equal(duplicate.group("tool").solve(q0).q, expected)
    assert env_copy_is_independent(envs.current)


def env_copy_is_independent(env: IKEnvironment) -> bool:
    copied = env.duplicate()
    copied.scene.add_dummy("only_in_copy")
    return not env.scene.exists("only_in_copy") and copied.scene.exists("only_in_copy")


def test_ikSwitchEnvironment(franka_robot):
    envs = IKEnvironments()
    robot_env = envs.create(franka_robot)
    empty_env = envs.create()
    envs.switch(robot_env)
    assert envs.current is envs[robot_env] and envs.current.scene.robot is franka_robot
    envs.switch(empty_env)
    assert envs.current.scene.robot is None
    for bad in (7, -1, "0", True, 1.0):
        with pytest.raises(InputError, match="handle"):
            envs.switch(bad)  # type: ignore[arg-type]
        assert envs.current_handle == empty_env  # a rejected switch changes nothing


def test_ikSave(env, tmp_path):
    _goal(env.scene)
    env.add_group("tool", [IKElement(TOOL, "goal", constraints=C.POSITION)], method="dls")
    path = tmp_path / "setup.toml"
    env.save(path)
    text = path.read_text(encoding="utf-8")
    assert text == env.dumps() and text.startswith("# pinkctl IK setup")
    document = tomllib.loads(text)
    assert document["robot"]["name"] == "franka"
    assert document["targets"] == [{"tip": TOOL, "target": "goal"}]
    assert document["groups"][0]["method"] == "dls"
    assert "robot" not in tomllib.loads(IKEnvironment().dumps())  # an empty environment


def test_ikLoad(env, tmp_path):
    _goal(env.scene)
    env.add_group("tool", [IKElement(TOOL, "goal")])
    env.scene.set_joint_settings("panda_joint2", weight=0.5)
    env.scene.set_screw_lead("panda_joint7", 0.01)
    path = tmp_path / "setup.toml"
    env.save(path)
    q0 = env.scene.neutral()
    expected = env.group("tool").solve(q0).q
    for loaded in (IKEnvironment.load(path), IKEnvironment.loads(path.read_text())):
        assert loaded.group("tool").solve(q0).q.tobytes() == expected.tobytes()
        assert loaded.scene.joint_settings("panda_joint2").weight == 0.5
        assert loaded.scene.screw_lead("panda_joint7") == 0.01
    envs = IKEnvironments()
    handle = envs.load(path)
    assert envs.current_handle == handle and envs.current.group("tool").elements[0].tip == TOOL
    empty = IKEnvironment()
    _planar_arm(empty)
    again = IKEnvironment.loads(empty.dumps())
    assert again.scene.robot is None and again.scene.build_order == empty.scene.build_order


def test_ikGetLastError(scene):
    # errors are exceptions naming the argument; a solve that stops says why in its report
    with pytest.raises(InputError, match="relative_to: 'nowhere' is not a frame") as error:
        scene.pose("panda_link3", "nowhere", q=scene.neutral())
    assert isinstance(error.value, ValueError)
    _goal(scene)
    scene.set_joint_dependency("panda_joint7", "panda_joint5", callback=lambda m: math.nan)
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    q, code = group.solve(scene.neutral())
    assert code & ResultCode.CANNOT_INVERT and "panda_joint7" in group.last_report.reason


def test_ikReleaseBuffer(env):
    _goal(env.scene)
    text = env.dumps()  # a Python string: a snapshot the caller owns, nothing to release
    env.scene.remove("goal")
    assert "goal" in text and "goal" not in env.dumps()


# ---------------------------------------------------------------------- objects


def test_ikGetObjects(scene):
    objects = scene.objects()
    model = scene.model
    assert [o.name for o in objects] == [frame.name for frame in model.frames][1:]
    by_name = {o.name: o for o in objects}
    assert by_name["panda_link3"] == SceneObject(
        "panda_link3", "dummy", None, "panda_joint3", False
    )
    assert by_name["panda_joint3"] == SceneObject(
        "panda_joint3", "joint", "revolute", "panda_link2", False
    )
    assert by_name["panda_finger_joint1"].joint_type == "prismatic"
    scene.add_dummy("d", parent="panda_hand")
    scene.add_joint("ball", "spherical", parent="d")
    added = [o for o in scene.objects() if o.added]
    assert added == [
        SceneObject("d", "dummy", None, "panda_hand", True),
        SceneObject("ball", "joint", "spherical", "d", True),
    ]


def test_ikGetObjectHandle(scene):
    # names are the handles: every function takes them; the model index is there if needed
    assert scene.frame_id("panda_link3") == scene.model.getFrameId("panda_link3")
    assert scene.joint_id("panda_joint3") == 3
    with pytest.raises(InputError, match="'panda_link33' is not a frame"):
        scene.frame_id("panda_link33")
    with pytest.raises(InputError, match="'panda_link3' is not a joint"):
        scene.joint_id("panda_link3")


def test_ikDoesObjectExist(scene):
    scene.add_dummy("d")
    scene.add_joint("j")
    for name in ("panda_link3", "panda_joint3", "panda_hand_tcp", "d", "j"):
        assert scene.exists(name), name
    for name in ("world", "universe", "nowhere", 3, None):
        assert not scene.exists(name), name


def test_ikEraseObject(scene):
    scene.add_dummy("d", parent="panda_hand")
    scene.add_joint("j", parent="d")
    scene.remove("j")
    scene.remove("d")
    assert not scene.exists("d") and not scene.exists("j")
    with pytest.raises(InputError, match="robot's own frames and joints cannot be .* erased"):
        scene.remove("panda_link3")
    assert scene.exists("panda_link3")


def test_ikGetObjectParent(scene):
    scene.add_dummy("d", parent="panda_hand")
    assert scene.parent("panda_link3") == "panda_joint3"
    assert scene.parent("panda_joint3") == "panda_link2"
    assert scene.parent("panda_link0") == "world"
    assert scene.parent("d") == "panda_hand"
    with pytest.raises(InputError, match="'nowhere' is not an object"):
        scene.parent("nowhere")


def test_ikSetObjectParent(scene):
    q = _bent(scene)
    scene.add_dummy("d", parent="panda_hand", pose=_se3((0.1, 0.2, 0.0), (0.0, 0.05, 0.1)))
    before = scene.pose("d", q=q)
    scene.set_parent("d", "panda_link3", q=q)  # keep in place
    assert scene.parent("d") == "panda_link3"
    _same(scene.pose("d", q=q), before)
    local = scene.placement("d")
    scene.set_parent("d", "world", keep_in_place=False)
    _same(scene.placement("d"), local)
    with pytest.raises(InputError, match="robot's own frames"):
        scene.set_parent("panda_link3", "world")


def test_ikGetObjectTransformation(scene):
    q = _bent(scene)
    hand = scene.world_pose("panda_hand", q)
    scene.add_dummy("d", parent="panda_hand", pose=_se3((0.0, 0.3, 0.0), (0.0, 0.0, 0.1)))
    _same(scene.pose("d", q=q), hand * scene.placement("d"))
    _same(scene.pose("d", "parent", q=q), scene.placement("d"))
    link3 = scene.world_pose("panda_link3", q)
    _same(scene.pose("d", "panda_link3", q=q), link3.actInv(hand * scene.placement("d")))
    # a joint's pose leaves out its own motion: pose(j) * motion(j) is its frame
    joint = "panda_joint4"
    _same(scene.pose(joint, q=q) * scene.joint_transform(joint, q), scene.world_pose(joint, q))
    other = q.copy()
    other[3] += 0.7
    _same(scene.pose(joint, "parent", q=q), scene.pose(joint, "parent", q=other))
    # the seed's C7Vector (position, quaternion) from the pose
    pose = scene.pose("d", q=q)
    quaternion = pin.Quaternion(pose.rotation)
    np.testing.assert_allclose(quaternion.toRotationMatrix(), pose.rotation, atol=1e-12)


def test_ikSetObjectTransformation(scene):
    scene.add_dummy("d")
    scene.add_joint("j", parent="panda_link2")
    q = _bent(scene)
    q[-1] = 0.4
    target = _se3((0.2, -0.1, 0.4), (0.1, 0.2, 0.3))
    for reference in ("world", "parent", "panda_link5", "panda_joint4", "j"):
        for name in ("d", "j"):
            if name == reference:
                with pytest.raises(InputError, match="relative_to: 'j' moves with 'j'"):
                    scene.set_pose(name, target, reference, q=q)
                continue
            scene.set_pose(name, target, reference, q=q)
            _same(scene.pose(name, reference, q=q), target)
    with pytest.raises(InputError, match="robot's own frames"):
        scene.set_pose("panda_link5", target)


def test_ikGetObjectMatrix(scene):
    q = _bent(scene)
    matrix = scene.pose("panda_link5", "panda_link2", q=q).homogeneous
    assert matrix.shape == (4, 4)
    np.testing.assert_array_equal(matrix[3], [0.0, 0.0, 0.0, 1.0])
    expected = scene.world_pose("panda_link2", q).actInv(scene.world_pose("panda_link5", q))
    np.testing.assert_allclose(matrix, expected.homogeneous, atol=1e-12)


def test_ikSetObjectMatrix(scene):
    scene.add_dummy("d")
    matrix = _se3((0.0, 0.0, 0.5), (0.4, 0.0, 0.3)).homogeneous
    scene.set_pose("d", matrix, "world")
    np.testing.assert_allclose(scene.pose("d").homogeneous, matrix, atol=1e-15)
    for bad in (np.eye(3), 2.0 * np.eye(4), [["1"] * 4] * 4):
        with pytest.raises(InputError, match="pose"):
            scene.set_pose("d", bad)
    np.testing.assert_allclose(scene.pose("d").homogeneous, matrix, atol=1e-15)


def test_ikGetObjectType(scene):
    scene.add_dummy("d")
    scene.add_joint("j", "prismatic")
    types = {n: scene.object_type(n) for n in ("panda_joint1", "j", "panda_link1", "d", TOOL)}
    assert types == {
        "panda_joint1": "joint",
        "j": "joint",
        "panda_link1": "dummy",
        "d": "dummy",
        TOOL: "dummy",
    }
    with pytest.raises(InputError, match="'world' is not an object"):
        scene.object_type("world")


# ---------------------------------------------------------------------- dummies


def test_ikCreateDummy(scene):
    scene.add_dummy("d", parent="panda_link4", pose=_se3(translation=(0.0, 0.1, 0.0)))
    assert (
        scene.exists("d")
        and scene.object_type("d") == "dummy"
        and scene.parent("d") == "panda_link4"
    )
    assert scene.dummies == ["d"]
    with pytest.raises(InputError, match="already a frame"):
        scene.add_dummy("d")


def test_ikSetTargetDummy(scene):
    _goal(scene)
    _goal(scene, offset=(0.0, 0.05, 0.0), name="other")
    scene.set_target(TOOL, "goal")
    first = IKElement(TOOL)  # no target: the tip's
    second = IKElement(TOOL, constraints=C.POSITION)
    group = IKGroup(scene, [first])
    IKGroup(scene, [second])
    assert first.target == second.target == "goal"
    first.target = "other"  # the tip's target: both elements follow
    assert scene.target(TOOL) == "other" and second.target == "other"
    q, code = group.solve(scene.neutral())
    _same(scene.world_pose(TOOL, q), scene.world_pose("other"), atol=1e-4)
    with pytest.raises(InputError, match="tip 'panda_hand_tcp' already has the target 'other'"):
        IKGroup(scene, [IKElement(TOOL, "goal")])
    assert scene.target(TOOL) == "other"  # the refused element changed nothing
    scene.set_target(TOOL, None)
    assert first.target is None
    with pytest.raises(InputError, match="tip 'panda_hand_tcp' has no target"):
        group.solve(scene.neutral())


def test_ikGetTargetDummy(scene):
    _goal(scene)
    assert scene.target(TOOL) is None and scene.targets == {}
    IKGroup(scene, [IKElement(TOOL, "goal")])  # an element gives its tip its target
    assert scene.target(TOOL) == "goal" and scene.targets == {TOOL: "goal"}


def test_ikSetLinkedDummy(scene):
    # the deprecated ikSetLinkedDummy / ikGetLinkedDummy are the target association
    scene.add_dummy("tip", parent="panda_hand")
    scene.add_dummy("target")
    scene.set_target("tip", "target")
    assert scene.target("tip") == "target"
    scene.set_target("tip", None)
    assert scene.target("tip") is None


# ---------------------------------------------------------------------- joints


def test_ikCreateJoint(scene):
    nq = scene.model.nq
    scene.add_joint("r", parent="panda_hand", pose=_se3(translation=(0.0, 0.0, 0.1)))
    scene.add_joint("p", "prismatic", parent="r")
    scene.add_joint("s", "spherical", parent="p")
    scene.add_joint("h", parent="s", screw_lead=0.01)
    assert scene.model.nq == nq + 1 + 1 + 4 + 1
    assert [scene.joint_type(n) for n in ("r", "p", "s", "h")] == ["revolute"] * 1 + [
        "prismatic",
        "spherical",
        "revolute",
    ]
    assert scene.joint_interval("r").cyclic
    assert scene.joint_interval("p") == JointInterval(False, -1.0, 2.0)
    assert scene.screw_lead("h") == 0.01


def test_ikGetJointPosition(scene):
    scene.add_joint("slide", "prismatic")
    q = _bent(scene)
    q[-1] = 0.25
    assert scene.joint_position("panda_joint4", q) == q[3]
    assert scene.joint_position("slide", q) == 0.25
    scene.add_joint("ball", "spherical")
    with pytest.raises(InputError, match="'ball' does not have one coordinate"):
        scene.joint_position("ball", scene.neutral())


def test_ikSetJointPosition(scene):
    q = scene.neutral()
    moved = scene.set_joint_position("panda_joint4", -1.0, q)
    assert moved[3] == -1.0 and q[3] != -1.0  # a new configuration; the input is unchanged
    lower, upper = scene.limits("panda_joint4")
    assert scene.set_joint_position("panda_joint4", 10.0, q)[3] == upper  # clamped
    scene.set_joint_interval("panda_joint1", cyclic=True)
    assert scene.set_joint_position("panda_joint1", 10.0, q)[0] == 10.0
    with pytest.raises(InputError, match="value must be a real number"):
        scene.set_joint_position("panda_joint4", "1.0", q)


def test_ikSetJointMode(scene):
    _goal(scene)
    a = IKGroup(scene, [IKElement(TOOL, "goal")])
    b = IKGroup(scene, [IKElement(TOOL, "goal")])
    assert scene.joint_settings("panda_joint2").mode == "ik"
    scene.set_joint_settings("panda_joint2", mode="passive")  # the joint's own: every group
    assert scene.joint_settings("panda_joint2").mode == "passive"
    for group in (a, b):
        assert "panda_joint2" not in [c.joint for c in group.columns]
    b.set_joint("panda_joint2", mode="ik")  # one group overrides it for itself
    assert "panda_joint2" in [c.joint for c in b.columns] and b.joint("panda_joint2").mode == "ik"
    q = a.solve(scene.neutral()).q
    assert q[1] == scene.neutral()[1]
    b.reset_joint("panda_joint2")
    assert b.joint("panda_joint2").mode == "passive"


def test_ikSetJointInterval(scene):
    scene.add_joint("slide", "prismatic")
    scene.set_joint_interval("slide", lower=-0.1, range=0.3)
    assert scene.joint_interval("slide") == JointInterval(False, -0.1, 0.3)
    scene.set_joint_interval("panda_joint1", cyclic=True)
    assert scene.joint_interval("panda_joint1").cyclic and scene.limits("panda_joint1") == (
        -math.inf,
        math.inf,
    )
    assert scene.model.upperPositionLimit[-1] == pytest.approx(0.2)


def test_ikSetJointDependency(scene):
    _goal(scene)
    scene.set_joint_dependency("panda_joint6", "panda_joint4", offset=0.2, mult=-0.5)
    law = scene.joint_dependency("panda_joint6")
    assert (law.master, law.offset, law.mult) == ("panda_joint4", 0.2, -0.5)
    q, _ = IKGroup(scene, [IKElement(TOOL, "goal", constraints=C.POSITION)]).solve(scene.neutral())
    assert q[5] == pytest.approx(0.2 - 0.5 * q[3], abs=1e-15)


def _one_step(scene: KinematicScene, group: IKGroup) -> np.ndarray:
    return group.solve(scene.neutral()).q - scene.neutral()


def test_ikSetJointWeight(scene):
    _goal(scene, offset=(0.05, 0.05, 0.0), rotation=(0.0, 0.0, 0.0))
    flags = GroupFlags.ENABLED | GroupFlags.IGNORE_MAX_STEPS
    element = IKElement(TOOL, "goal", constraints=C.POSITION)
    group = IKGroup(scene, [element], max_iterations=1, flags=flags)
    even = _one_step(scene, group)
    scene.set_joint_settings("panda_joint1", weight=0.1)
    assert scene.joint_settings("panda_joint1").weight == 0.1
    light = _one_step(scene, group)
    assert abs(light[0]) < 0.2 * abs(even[0])
    group.set_joint("panda_joint1", weight=1.0)  # this group's own weight
    np.testing.assert_allclose(_one_step(scene, group), even, atol=1e-15)


def test_ikSetJointLimitMargin(scene):
    tool = scene.world_pose(TOOL, scene.neutral())
    scene.add_dummy("turned", pose=_se3((0.0, 0.0, 0.6)) * tool)
    scene.set_joint_interval("panda_joint1", lower=-0.2, range=0.4)
    scene.set_joint_settings("panda_joint1", limit_margin=0.05)
    assert scene.joint_settings("panda_joint1").limit_margin == 0.05
    flags = GroupFlags.ENABLED | GroupFlags.AVOID_LIMITS
    group = IKGroup(scene, [IKElement(TOOL, "turned")], method="dls", flags=flags)
    q, code = group.solve(scene.neutral())
    assert q[0] <= 0.15 + 1e-12 and not code & ResultCode.LIMIT_HIT


def test_ikSetJointMaxStepSize(scene):
    _goal(scene, offset=(0.05, 0.05, 0.0))
    group = IKGroup(scene, [IKElement(TOOL, "goal")], max_iterations=1)
    scene.set_joint_settings("panda_joint1", max_step=0.01)
    assert scene.joint_settings("panda_joint1").max_step == 0.01
    step = _one_step(scene, group)
    assert abs(step[0]) <= 0.01 and group.last_report.code & ResultCode.STEPS_TOO_BIG


def test_ikSetJointScrewLead(scene):
    q = scene.neutral()
    axis = scene.world_pose("panda_joint7", q).rotation[:, 2]
    scene.set_screw_lead("panda_joint7", 0.02)  # a robot joint: 2 cm per turn along its axis
    assert scene.screw_lead("panda_joint7") == 0.02
    flange = scene.world_pose("panda_link8", q)
    assert scene.model.joints[7].shortname() == "JointModelHZ"
    turned = q.copy()
    turned[6] += 2.0 * math.pi
    moved = scene.world_pose("panda_link8", turned).translation - flange.translation
    np.testing.assert_allclose(moved, 0.02 * axis, atol=1e-12)
    _goal(scene)
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    J = group.jacobian(q).J
    h = 1e-6
    dv = np.zeros(scene.model.nv)
    dv[6] = h
    fd = (group.error(pin.integrate(scene.model, q, dv)).e - group.error(q).e) / h
    np.testing.assert_allclose(J[:, 6], fd, atol=1e-5)  # the helical motion is in the IK
    scene.set_screw_lead("panda_joint7", 0.0)
    assert scene.model.joints[7].shortname() == "JointModelRZ"
    with pytest.raises(InputError, match="'panda_finger_joint1'.*not a one-coordinate revolute"):
        scene.set_screw_lead("panda_finger_joint1", 0.01)


def test_ikGetJointTransformation(scene):
    q = _bent(scene)
    motion = scene.joint_transform("panda_joint4", q)  # a rotation about z by q
    np.testing.assert_allclose(motion.rotation, pin.exp3(np.array([0.0, 0.0, q[3]])), atol=1e-15)
    np.testing.assert_allclose(motion.translation, 0.0, atol=1e-15)
    q[7] = 0.03
    finger = scene.joint_transform("panda_finger_joint1", q)  # a translation along y
    np.testing.assert_allclose(finger.translation, [0.0, 0.03, 0.0], atol=1e-15)
    quaternion = pin.Quaternion(motion.rotation)  # the seed's C7Vector: position, quaternion
    assert quaternion.z == pytest.approx(math.sin(q[3] / 2.0))


def test_ikGetJointMatrix(scene):
    scene.add_joint("slide", "prismatic")
    q = scene.neutral()
    q[-1] = 0.4
    matrix = scene.joint_transform("slide", q).homogeneous
    expected = np.eye(4)
    expected[2, 3] = 0.4
    np.testing.assert_allclose(matrix, expected, atol=1e-15)


def test_ikSetSphericalJointQuaternion(scene):
    scene.add_joint("ball", "spherical", parent="panda_hand")
    wxyz = np.array([math.cos(0.3), 0.0, math.sin(0.3), 0.0])  # 0.6 rad about y
    q = scene.set_spherical_joint("ball", 2.0 * wxyz, scene.neutral())  # normalised
    expected = pin.exp3(np.array([0.0, 0.6, 0.0]))
    np.testing.assert_allclose(scene.joint_transform("ball", q).rotation, expected, atol=1e-15)
    same = scene.set_spherical_joint("ball", pin.Quaternion(expected), scene.neutral())
    np.testing.assert_allclose(same, q, atol=1e-15)
    with pytest.raises(InputError, match="rotation: the quaternion .* must not be zero"):
        scene.set_spherical_joint("ball", np.zeros(4), q)
    with pytest.raises(InputError, match="'panda_joint1' is not a spherical joint"):
        scene.set_spherical_joint("panda_joint1", wxyz, q)


def test_ikSetSphericalJointMatrix(scene):
    scene.add_joint("ball", "spherical")
    rotation = pin.exp3(np.array([0.2, -0.4, 0.1]))
    q = scene.set_spherical_joint("ball", rotation, scene.neutral())
    np.testing.assert_allclose(scene.joint_transform("ball", q).rotation, rotation, atol=1e-15)
    with pytest.raises(InputError, match="rotation: not a proper rotation"):
        scene.set_spherical_joint("ball", 2.0 * rotation, q)


def test_ikGetJointType(scene):
    scene.add_joint("r")
    scene.add_joint("p", "prismatic")
    scene.add_joint("s", "spherical")
    scene.add_joint("h", screw_lead=0.01)
    kinds = [
        scene.joint_type(n)
        for n in ("panda_joint1", "panda_finger_joint1", "panda_finger_joint2", "r", "p", "s", "h")
    ]
    assert kinds == [
        "revolute",
        "prismatic",
        "mimic",
        "revolute",
        "prismatic",
        "spherical",
        "revolute",
    ]


def test_ikGetGroupJoints(scene):
    scene.add_joint("ball", "spherical", parent="panda_hand")
    scene.add_dummy("tip", parent="ball", pose=_se3(translation=(0.0, 0.0, 0.1)))
    _goal(scene)
    group = IKGroup(scene, [IKElement("tip", "goal", base="panda_link3")])
    assert group.columns == (
        *(Column(f"panda_joint{i}", 0) for i in range(4, 8)),
        Column("ball", 0),
        Column("ball", 1),
        Column("ball", 2),
    )


# ---------------------------------------------------------------------- groups


def test_ikCreateGroup(env):
    _goal(env.scene)
    group = env.add_group("tool", [IKElement(TOOL, "goal")], method="dls", damping=0.1)
    assert env.groups == {"tool": group} and group.method == "dls"
    with pytest.raises(InputError, match="exists already"):
        env.add_group("tool")
    assert IKGroup(env.scene).elements == ()  # a group outside the environment's names


def test_ikGetGroupHandle(env):
    group = env.add_group("tool")
    assert env.group("tool") is group
    with pytest.raises(InputError, match=r"no group named 'tol'; groups: \['tool'\]"):
        env.group("tol")


def test_ikDoesGroupExist(env):
    env.add_group("tool")
    assert "tool" in env.groups and "other" not in env.groups
    env.remove_group("tool")
    assert "tool" not in env.groups


def test_ikSetGroupFlags(scene):
    _goal(scene)
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    assert group.flags == GroupFlags.ENABLED
    group.flags = GroupFlags(0)
    assert group.solve(scene.neutral()).code == ResultCode.NOT_PERFORMED
    with pytest.raises(InputError, match="flags: unknown bits"):
        group.flags = 128
    assert group.flags == GroupFlags(0)


def test_ikSetGroupCalculation(scene):
    _goal(scene)
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    assert (group.method, group.damping, group.max_iterations) == ("pinv", 0.05, 20)
    group.method, group.damping, group.max_iterations = "dls", 0.2, 1
    assert (group.method, group.damping, group.max_iterations) == ("dls", 0.2, 1)
    group.solve(scene.neutral())
    assert group.last_report.iterations == 1


def test_ikGetGroupJointLimitHits(scene):
    tool = scene.world_pose(TOOL, scene.neutral())
    scene.add_dummy("turned", pose=_se3((0.0, 0.0, 0.6)) * tool)
    scene.set_joint_interval("panda_joint1", lower=-0.2, range=0.4)
    group = IKGroup(scene, [IKElement(TOOL, "turned")])
    q, code = group.solve(scene.neutral())
    assert code & ResultCode.LIMIT_HIT and list(group.last_report.limit_hits) == ["panda_joint1"]
    assert group.last_report.limit_hits["panda_joint1"] > 0.0  # the overshoot asked for


# ---------------------------------------------------------------------- elements


def test_ikAddElement(scene):
    _goal(scene)
    group = IKGroup(scene)
    assert group.add_element(IKElement(TOOL, "goal")) == 0
    assert group.add_element(IKElement("panda_link4", "goal", constraints=C.Z)) == 1
    with pytest.raises(InputError, match="target 'nowhere' is not a frame"):
        group.add_element(IKElement("panda_link5", "nowhere"))
    assert len(group.elements) == 2 and scene.target("panda_link5") is None


def test_ikSetElementFlags(scene):
    _goal(scene)
    element = IKElement("panda_link4", "goal", constraints=C.Z)
    group = IKGroup(scene, [IKElement(TOOL, "goal"), element])
    assert element.enabled and len(group.jacobian(scene.neutral()).rows) == 7
    element.enabled = False
    assert len(group.jacobian(scene.neutral()).rows) == 6


def test_ikSetElementConstraints(scene):
    _goal(scene)
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    element = group.element(0)
    assert element.constraints == C.POSE
    element.constraints = C.X | C.ALPHA_BETA
    assert [r.axis for r in group.jacobian(scene.neutral()).rows] == ["x", "alpha", "beta"]


def test_ikSetElementBase(scene):
    _goal(scene)
    scene.add_dummy("axes", parent="panda_link2", pose=_se3((0.0, 0.0, 0.7)))
    element = IKElement(TOOL, "goal", constraints=C.POSITION)
    group = IKGroup(scene, [element])
    assert (element.base, element.constraint_base) == (None, None)
    element.base, element.constraint_base = "panda_link2", "axes"
    q = _bent(scene)
    assert [c.joint for c in group.columns] == [f"panda_joint{i}" for i in range(3, 8)]
    offset = scene.world_pose(TOOL, q).translation - scene.world_pose("goal").translation
    axes = scene.world_pose("axes", q).rotation
    np.testing.assert_allclose(group.error(q).e, axes.T @ offset, atol=1e-12)


def test_ikSetElementPrecision(scene):
    _goal(scene, offset=(0.002, 0.0, 0.0), rotation=(0.0, 0.0, 0.0))
    element = IKElement(TOOL, "goal", precision=(0.01, 0.01))
    group = IKGroup(scene, [element])
    group.solve(scene.neutral())
    assert element.precision == (0.01, 0.01) and group.last_report.iterations == 0
    element.precision = (1e-6, 1e-6)
    group.solve(scene.neutral())
    assert group.last_report.iterations > 0 and group.last_report.precision[0] <= 1e-6


def test_ikSetElementWeights(scene):
    _goal(scene)
    seen = []
    element = IKElement(TOOL, "goal", weights=(2.0, 0.5, 3.0))
    group = IKGroup(scene, [element], max_iterations=1)
    group.jacobian_callback = lambda jacobian: seen.append(jacobian.J.copy())
    group.solve(scene.neutral())
    raw = group.jacobian(scene.neutral()).J
    np.testing.assert_allclose(seen[0][:3], 6.0 * raw[:3], atol=1e-12)
    np.testing.assert_allclose(seen[0][3:], 1.5 * raw[3:], atol=1e-12)
    assert element.weights == (2.0, 0.5, 3.0)


# ---------------------------------------------------------------------- calculation


def test_ikHandleGroups(scene):
    _goal(scene)
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    q0 = scene.neutral()
    q, code = group.solve(q0)
    assert not code & ResultCode.FAILED and not np.array_equal(q, q0)
    np.testing.assert_array_equal(q0, scene.neutral())  # the input is never changed
    linear, angular = group.last_report.precision  # the seed's precision output
    assert linear <= 1e-4 and angular <= 1e-3


def _docs_example(franka_robot) -> IKEnvironment:
    """docs/groups.md's first example: a carry group above an unreachable elbow goal."""
    env = IKEnvironment(franka_robot)
    scene = env.scene
    q = scene.neutral()
    tool = scene.world_pose(TOOL, q)
    scene.add_dummy("goal", pose=tool * pin.SE3(np.eye(3), np.array([0.05, -0.05, 0.1])))
    elbow = scene.world_pose("panda_link4", q).translation
    scene.add_dummy("elbow_goal", pose=pin.SE3(np.eye(3), elbow + [0.0, 0.0, 0.3]))
    carry = IKElement(TOOL, "goal", constraints=C.X | C.Y | C.ALPHA_BETA)
    flags = GroupFlags.ENABLED | GroupFlags.RESTORE_ON_BAD_LIN_TOL
    env.add_group("carry", [carry], flags=flags)
    env.add_group("elbow", [IKElement("panda_link4", "elbow_goal", constraints=C.Z)], damping=0.2)
    return env


@pytest.mark.parametrize("iterations", [20, 50, 200])
@pytest.mark.parametrize("priority", ["cascade", "nullspace"])
def test_ikHandleGroups_projected(franka_robot, priority, iterations):
    env = _docs_example(franka_robot)
    env.group("carry").max_iterations = iterations
    q0 = env.scene.neutral()
    q, code = env.solve(["carry", "elbow"], q0, priority=priority)
    assert code & ResultCode.NOT_WITHIN_TOLERANCE  # the elbow goal is out of reach
    linear, angular = env.group("carry").last_report.precision
    assert linear <= 1e-4 and angular <= 1e-3  # was 27 mm / 0.12 rad with "nullspace"
    assert not np.array_equal(q, q0)  # reached, not restored
    elbow = env.group("elbow").last_report.precision[0]
    assert 0.2552 < elbow < 0.27  # the elbow as high as the carry group leaves it (0.2553)


def test_ikHandleGroups_callback(scene):
    _goal(scene, offset=(0.05, 0.0, 0.0))
    q0 = scene.neutral()
    reference = IKGroup(scene, [IKElement(TOOL, "goal")], method="pinv_undamped").solve(q0).q
    group = IKGroup(scene, [IKElement(TOOL, "goal")], method="transpose")
    group.jacobian_callback = lambda jacobian: np.linalg.pinv(jacobian.J)  # bit1: J⁺
    np.testing.assert_allclose(group.solve(q0).q, reference, atol=1e-10)

    def step_and_pinv(jacobian):  # bit0 and bit1: the step wins
        step = np.zeros(len(jacobian.columns))
        step[0] = 0.01
        return step, np.zeros((len(jacobian.columns), len(jacobian.rows)))

    group.jacobian_callback = step_and_pinv
    group.max_iterations = 2
    np.testing.assert_allclose(group.solve(q0).q[:7] - q0[:7], [0.02, 0, 0, 0, 0, 0, 0])
    group.jacobian_callback = lambda jacobian: np.zeros((2, 2))
    with pytest.raises(InputError, match=r"pseudo-inverse must be an array of shape \(7, 6\)"):
        group.solve(q0)


def test_ikHandleGroups_callback_in_projected_groups(franka_robot):
    env = _docs_example(franka_robot)
    carry, elbow = env.group("carry"), env.group("elbow")
    q0 = env.scene.neutral()
    for group in (carry, elbow):
        group.method = "pinv_undamped"
        group.max_iterations = 3
    expected = env.solve(["carry", "elbow"], q0, priority="nullspace").q
    for group in (carry, elbow):  # the exact J⁺ as the callback's: same steps, same projector
        group.jacobian_callback = lambda jacobian: np.linalg.pinv(jacobian.J, rcond=1e-6)
    np.testing.assert_allclose(
        env.solve(["carry", "elbow"], q0, priority="nullspace").q, expected, atol=1e-9
    )
    with pytest.raises(InputError, match="priority='nullspace'"):
        env.solve(["carry", "elbow"], q0, priority="cascade")


def test_ikFindConfig(scene):
    goal = _goal(scene, offset=(0.1, -0.2, -0.1), rotation=(0.3, 0.2, -0.5))
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    start = scene.neutral()
    found = group.find_config(start, threshold=0.5, max_trials=200, rng=3)
    assert found.code == FindResult.FOUND == 1 and found.trials <= 200
    _same(scene.world_pose(TOOL, found.q), goal, atol=1e-3)
    np.testing.assert_array_equal(found.values, found.q[:7])  # the group's joints, in order
    again = group.find_config(start, threshold=0.5, max_trials=200, rng=3)
    np.testing.assert_array_equal(again.q, found.q)  # deterministic for a given rng
    rejected = group.find_config(start, threshold=0.5, max_trials=30, validate=lambda q: False)
    assert rejected.code == FindResult.NOT_FOUND == 0 and rejected.trials == 30
    np.testing.assert_array_equal(rejected.q, start)
    scene.set_pose("goal", _se3(translation=(3.0, 0.0, 0.0)))  # out of reach
    assert group.find_config(start, max_trials=50).code == FindResult.NOT_FOUND
    group.flags = GroupFlags(0)
    assert group.find_config(start).code == FindResult.ERROR == -1


def test_ikGetConfigForTipPose(scene):
    # the deprecated form: an iteration budget (max_trials) and per-joint search ranges; a
    # precision so loose that the draw itself is the solution shows where the draws fall
    _goal(scene, offset=(0.02, 0.0, 0.0), rotation=(0.0, 0.0, 0.0))
    group = IKGroup(scene, [IKElement(TOOL, "goal", precision=(10.0, 10.0))])
    start = scene.neutral()
    draws = []

    def remember(q):
        draws.append(q.copy())
        return len(draws) == 20

    ranges = {"panda_joint1": (0.5, 0.1), "panda_joint2": (0.0, -0.2), "panda_joint3": (0, 0)}
    found = group.find_config(
        start, threshold=10.0, max_trials=20, ranges=ranges, validate=remember, rng=1
    )
    assert found.code == FindResult.FOUND and found.trials == len(draws) == 20
    draws = np.array(draws)
    assert np.all((draws[:, 0] >= 0.5) & (draws[:, 0] <= 0.6))  # [lower, lower + range]
    assert np.all(np.abs(draws[:, 1] - start[1]) <= 0.1)  # centred on q, extent 0.2
    lower, upper = scene.limits("panda_joint3")  # range 0: the joint's interval
    assert np.all((draws[:, 2] >= lower) & (draws[:, 2] <= upper)) and np.ptp(draws[:, 2]) > 1.0
    none = group.find_config(start, threshold=0.0, max_trials=5, ranges=ranges, rng=1)
    assert none.code == FindResult.NOT_FOUND and none.trials == 5  # no draw within 0 m
    with pytest.raises(InputError, match="ranges: \\['panda_joint9'\\]"):
        group.find_config(start, ranges={"panda_joint9": (0.0, 1.0)})


def _finite_differences(error, q, model, columns, h=1e-6):
    J = np.zeros((len(error(q)), len(columns)))
    for k, v in enumerate(columns):
        dv = np.zeros(model.nv)
        dv[v] = h
        J[:, k] = (error(pin.integrate(model, q, dv)) - error(pin.integrate(model, q, -dv))) / (
            2 * h
        )
    return J


def test_ikComputeGroupJacobian(scene):
    _goal(scene)
    group = IKGroup(scene, [IKElement(TOOL, "goal", constraints=C.X | C.Z | C.ALPHA_BETA)])
    q = _bent(scene)
    jacobian = group.jacobian(q)
    assert jacobian.rows == (Row(0, "x"), Row(0, "z"), Row(0, "alpha"), Row(0, "beta"))
    columns = group.layout().v_indices
    expected = _finite_differences(lambda x: group.error(x).e, q, scene.model, columns)
    np.testing.assert_allclose(jacobian.J, expected, atol=1e-6)
    np.testing.assert_array_equal(jacobian.e, group.error(q).e)


def test_ikComputeJacobian(scene):
    q = _bent(scene)
    goal = _goal(scene)
    tip = scene.world_pose(TOOL, q)
    # the same numbers as a group's Jacobian for that tip and target
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    chain = chain_jacobian(scene, q, "panda_joint7", tip, target_pose=goal)
    np.testing.assert_allclose(chain.J, group.jacobian(q).J, atol=1e-12)
    np.testing.assert_allclose(chain.e, group.error(q).e, atol=1e-12)
    # a chain from a link, a fixed constraint base, no target (zero error)
    axes = _se3((0.3, 0.0, 0.9))
    short = chain_jacobian(
        scene,
        q,
        "panda_joint6",
        tip,
        base="panda_link2",
        constraints=C.POSITION,
        constraint_base_pose=axes,
    )
    assert [c.joint for c in short.columns] == [f"panda_joint{i}" for i in range(3, 7)]
    np.testing.assert_allclose(short.e, 0.0, atol=1e-15)
    placement = scene.world_pose("panda_joint6", q).actInv(tip)  # the tip rides on joint 6

    def error(x):
        moved = scene.world_pose("panda_joint6", x) * placement
        return axes.rotation.T @ (moved.translation - tip.translation)

    columns = [scene.model.joints[scene.joint_id(f"panda_joint{i}")].idx_v for i in range(3, 7)]
    np.testing.assert_allclose(
        short.J, _finite_differences(error, q, scene.model, columns), atol=1e-6
    )
    with pytest.raises(InputError, match="base 'panda_link7' is not on the chain"):
        chain_jacobian(scene, q, "panda_joint6", tip, base="panda_link7")
