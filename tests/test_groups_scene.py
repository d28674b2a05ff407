"""The editable kinematic scene (pinkctl.groups.KinematicScene): dummies and joints created,
moved, re-parented and erased at run time; joint intervals, dependencies and screw leads."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from pinkctl.errors import InputError
from pinkctl.groups import (
    Constraint,
    IKElement,
    IKGroup,
    JointDependency,
    JointInterval,
    ResultCode,
)

TOOL = "panda_hand_tcp"


@pytest.fixture
def scene(franka_scene):
    return franka_scene


def _pose(rotation: list[float], translation: list[float]) -> pin.SE3:
    return pin.SE3(pin.exp3(np.array(rotation)), np.array(translation))


def _assert_same(a: pin.SE3, b: pin.SE3, tol: float = 1e-12) -> None:
    np.testing.assert_allclose(a.homogeneous, b.homogeneous, atol=tol)


def test_robot_is_copied_not_modified(scene):
    robot = scene.robot
    frames = robot.model.nframes
    scene.add_dummy("goal")
    scene.add_joint("extra", parent="panda_hand")
    assert robot.model.nframes == frames and scene.model.nq == robot.model.nq + 1
    np.testing.assert_array_equal(scene.neutral()[: robot.model.nq], robot.q0)


def test_dummies_are_added_moved_reparented_and_removed(scene):
    q = scene.neutral()
    q[:7] += 0.2
    revision = scene.revision
    scene.add_dummy("a", parent="panda_hand", pose=_pose([0.1, 0.0, 0.0], [0.0, 0.0, 0.1]))
    scene.add_dummy("b", parent="a", pose=_pose([0.0, 0.2, 0.0], [0.05, 0.0, 0.0]))
    assert scene.dummies == ["a", "b"] and scene.revision == revision + 2
    hand = scene.world_pose("panda_hand", q)
    _assert_same(scene.world_pose("b", q), hand * scene.placement("a") * scene.placement("b"))
    # move: in place (no rebuild), children follow
    scene.set_pose("a", _pose([0.0, 0.0, 0.3], [0.0, 0.1, 0.0]))
    assert scene.revision == revision + 2
    _assert_same(scene.world_pose("b", q), hand * scene.placement("a") * scene.placement("b"))
    # move in world coordinates at q
    target = _pose([0.3, 0.2, 0.1], [0.4, -0.1, 0.5])
    scene.set_pose("b", target, relative_to="world", q=q)
    _assert_same(scene.world_pose("b", q), target)
    scene.set_pose("b", pin.SE3.Identity(), relative_to="panda_link3", q=q)
    _assert_same(scene.world_pose("b", q), scene.world_pose("panda_link3", q))
    # re-parent keeping the world pose, then keeping the local placement
    before = scene.world_pose("b", q)
    scene.set_parent("b", "world", q=q)
    assert scene.parent("b") == "world"
    _assert_same(scene.world_pose("b"), before)
    local = scene.placement("b")
    scene.set_parent("b", "panda_link5", keep_in_place=False)
    _assert_same(scene.placement("b"), local)
    # remove a dummy: its children move to its parent, rigidly in place
    scene.set_parent("b", "a", q=q)
    before = scene.world_pose("b", q)
    scene.remove("a")
    assert scene.dummies == ["b"] and scene.parent("b") == "panda_hand"
    _assert_same(scene.world_pose("b", q), before)


def test_scene_edits_are_checked(scene):
    scene.add_dummy("a")
    scene.add_dummy("b", parent="a")
    scene.add_joint("slide", "prismatic", parent="a")
    scene.add_dummy("c", parent="slide")
    for call, message in [
        (lambda: scene.add_dummy("a"), "already"),
        (lambda: scene.add_dummy("panda_hand"), "already"),
        (lambda: scene.add_dummy("world"), "other than"),
        (lambda: scene.add_dummy("x", parent="nowhere"), "not a frame"),
        (lambda: scene.add_dummy("x", pose=np.eye(3)), "4x4"),
        (lambda: scene.add_dummy("x", pose=2.0 * np.eye(4)), "homogeneous"),
        (lambda: scene.add_dummy("x", pose=np.diag([1.0, 1.0, -1.0, 1.0])), "rotation"),
        (lambda: scene.add_joint("x", "hinge"), "kind"),
        (lambda: scene.add_joint("x", "prismatic", screw_lead=0.1), "screw_lead"),
        (lambda: scene.set_parent("a", "b"), "cycle"),
        (lambda: scene.set_pose("panda_hand", pin.SE3.Identity()), "not a dummy"),
        (lambda: scene.remove("panda_link3"), "not a dummy"),
        (lambda: scene.remove("slide"), "carries"),
        (lambda: scene.world_pose("c"), "q is needed"),
        (lambda: scene.world_pose("c", np.zeros(3)), "shape"),
        (lambda: scene.frame_id("nowhere"), "not a frame"),
    ]:
        revision = scene.revision
        with pytest.raises(InputError, match=message):
            call()
        assert scene.revision == revision  # a rejected edit changes nothing
    assert scene.build_order == ["a", "b", "slide", "c"]


def test_scene_joints_move_their_children(scene):
    scene.add_joint("hinge", parent="world", pose=_pose([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]))
    scene.add_dummy("on_hinge", parent="hinge", pose=_pose([0, 0, 0], [0.1, 0.0, 0.0]))
    scene.add_joint("slide", "prismatic", parent="world")
    scene.add_dummy("on_slide", parent="slide")
    scene.add_joint("ball", "spherical", parent="world")
    scene.add_dummy("on_ball", parent="ball", pose=_pose([0, 0, 0], [0.0, 0.0, 0.2]))
    assert scene.scene_joints == ["hinge", "slide", "ball"]
    q = scene.neutral()
    base = scene.robot.model.nq
    assert scene.model.nq == base + 1 + 1 + 4
    q[base] = math.pi / 2
    q[base + 1] = 0.3
    q[base + 2 : base + 6] = pin.Quaternion(pin.exp3(np.array([math.pi / 2, 0, 0]))).coeffs()
    np.testing.assert_allclose(scene.world_pose("on_hinge", q).translation, [1, 0.1, 0], atol=1e-12)
    np.testing.assert_allclose(scene.world_pose("on_slide", q).translation, [0.0, 0.0, 0.3])
    np.testing.assert_allclose(scene.world_pose("on_ball", q).translation, [0, -0.2, 0], atol=1e-12)
    assert scene.joint_interval("hinge").cyclic
    assert scene.joint_interval("slide") == JointInterval(False, -1.0, 2.0)
    scene.set_pose("hinge", _pose([0, 0, 0], [2.0, 0.0, 0.0]))  # a joint moves too
    np.testing.assert_allclose(scene.world_pose("on_hinge", q).translation, [2.0, 0.1, 0.0])


def test_screw_lead_makes_a_revolute_joint_helical(scene):
    scene.add_joint("screw", parent="world")
    scene.add_dummy("nut", parent="screw", pose=_pose([0, 0, 0], [0.1, 0.0, 0.0]))
    q = scene.neutral()
    q[-1] = 2.0 * math.pi
    np.testing.assert_allclose(scene.world_pose("nut", q).translation, [0.1, 0.0, 0.0], atol=1e-12)
    scene.set_screw_lead("screw", 0.02)  # 2 cm per turn along the joint's z
    assert scene.screw_lead("screw") == 0.02 and scene.screw_lead("panda_joint1") == 0.0
    np.testing.assert_allclose(scene.world_pose("nut", q).translation, [0.1, 0.0, 0.02], atol=1e-12)
    q[-1] = math.pi
    np.testing.assert_allclose(
        scene.world_pose("nut", q).translation, [-0.1, 0.0, 0.01], atol=1e-12
    )
    scene.add_joint("slide", "prismatic")
    with pytest.raises(InputError, match="lead: joint 'slide' is prismatic, not revolute"):
        scene.set_screw_lead("slide", 0.01)
    with pytest.raises(InputError, match="lead: joint 'panda_finger_joint1'.*not a one-coord"):
        scene.set_screw_lead("panda_finger_joint1", 0.01)  # a robot's prismatic joint
    # IK moves the screw: reaching a height 5 mm up needs a quarter turn
    scene.add_dummy("height", pose=_pose([0, 0, 0], [0.0, 0.0, 0.005]))
    screw = IKGroup(scene, [IKElement("nut", "height", constraints=Constraint.Z)])
    q, code = screw.solve(scene.neutral())
    assert code == ResultCode.STEPS_TOO_BIG  # 10 degrees per step at most
    assert [c.joint for c in screw.columns] == ["screw"]
    angle = q[scene.model.joints[scene.joint_id("screw")].idx_q]
    assert angle == pytest.approx(math.pi / 2, abs=1e-4)


def test_joint_intervals(scene):
    robot = scene.robot
    assert scene.joint_interval("panda_joint4") == JointInterval(
        False, float(robot.model.lowerPositionLimit[3]), pytest.approx(3.0020)
    )
    scene.set_joint_interval("panda_joint1", lower=-0.5, range=1.0)
    assert scene.limits("panda_joint1") == (-0.5, 0.5)
    assert scene.model.upperPositionLimit[0] == 0.5
    assert robot.model.upperPositionLimit[0] != 0.5
    scene.set_joint_interval("panda_joint1", cyclic=True)
    assert scene.limits("panda_joint1") == (-math.inf, math.inf)
    scene.add_dummy("d")  # a rebuild keeps the intervals
    assert scene.limits("panda_joint1") == (-math.inf, math.inf)
    assert set(scene.intervals) == {"panda_joint1"}
    for kwargs, message in [
        ({"lower": 0.0, "range": -1.0}, "range"),
        ({"lower": None, "range": 1.0}, "lower"),
        ({"cyclic": 1}, "bool"),
    ]:
        with pytest.raises(InputError, match=message):
            scene.set_joint_interval("panda_joint2", **kwargs)
    with pytest.raises(InputError, match="not rotational"):
        scene.set_joint_interval("panda_finger_joint1", cyclic=True)
    with pytest.raises(InputError, match="one coordinate"):
        scene.set_joint_interval("panda_finger_joint2", lower=0.0, range=0.01)  # mimic


def test_joint_dependencies(scene):
    scene.set_joint_dependency("panda_joint3", "panda_joint1", offset=0.1, mult=2.0)
    assert scene.joint_dependency("panda_joint3") == JointDependency("panda_joint1", 0.1, 2.0)
    q = scene.neutral()
    q[0] = 0.25
    assert scene.apply_dependencies(q)[2] == pytest.approx(0.6)
    scene.set_joint_dependency("panda_joint3", "panda_joint1", callback=lambda m: m * m)
    assert scene.apply_dependencies(q)[2] == pytest.approx(0.0625)
    assert scene.joint_dependency("panda_joint3").derivative(0.25) == pytest.approx(0.5)
    for args, message in [
        (("panda_joint5", "panda_joint3"), "dependent"),
        (("panda_joint1", "panda_joint2"), "leads"),
        (("panda_joint5", "panda_joint5"), "itself"),
        (("panda_joint5", "nowhere"), "not a joint"),
    ]:
        with pytest.raises(InputError, match=message):
            scene.set_joint_dependency(*args)
    with pytest.raises(InputError, match="callback"):
        scene.set_joint_dependency("panda_joint5", "panda_joint1", callback=3)  # type: ignore[arg-type]
    scene.set_joint_dependency("panda_joint3", None)
    assert scene.dependencies == {}
    scene.add_joint("follower", parent="panda_hand")
    scene.set_joint_dependency("follower", "panda_joint7")
    with pytest.raises(InputError, match="not a dummy"):
        scene.remove("panda_hand")  # a robot frame
    scene.add_joint("leader", parent="world")
    scene.set_joint_dependency("panda_joint6", "leader")
    with pytest.raises(InputError, match="carries"):
        scene.remove("leader")
    scene.set_joint_dependency("panda_joint6", None)
    scene.remove("follower")  # its own dependency goes with it
    assert scene.dependencies == {}


def test_elements_see_scene_edits_at_the_next_solve(scene):
    tool = scene.world_pose(TOOL, scene.neutral())
    scene.add_dummy("goal", pose=tool * _pose([0, 0, 0], [0.02, 0.0, 0.0]))
    group = IKGroup(scene, [IKElement(TOOL, "goal")])
    first = group.solve(scene.neutral()).q
    scene.set_pose("goal", tool * _pose([0, 0, 0], [0.0, 0.02, 0.0]))
    assert not np.array_equal(group.solve(scene.neutral()).q, first)
    scene.remove("goal")
    with pytest.raises(InputError, match="element 0: target 'goal'"):
        group.solve(scene.neutral())
