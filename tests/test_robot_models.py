"""The bundled robot descriptions (robot_configurations/<name>/): kinematics, limits, SRDF, TOML.

Forward kinematics and joint limits are checked against the reference descriptions that the
``example-robot-data`` package ships (a test-only dependency); those tests are skipped when it
is not installed.
"""

from __future__ import annotations

import importlib.metadata
import math
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from pinkctl.core.robot import PinkRobot, load_pink_supported_robot

ROBOTS = ["franka", "ur10", "so101"]

# Reference file (under example-robot-data's robots/ folder) and the frames whose poses users
# address by name: the tool frame first.
REFERENCE = {
    "franka": ("panda_description/urdf/panda.urdf", ["panda_hand_tcp", "panda_hand"]),
    "ur10": ("ur_description/urdf/ur10_robot.urdf", ["tool0", "ee_link"]),
    "so101": ("so_arm_description/urdf/so101.urdf", ["gripper_frame_link"]),
}

# Link pairs that the arm can drive into each other: the SRDF must leave them enabled.
MUST_STAY_ENABLED = {
    "franka": [("panda_hand", "panda_link0"), ("panda_link1", "panda_link5")],
    "ur10": [("base_link", "forearm_link"), ("upper_arm_link", "wrist_2_link")],
    "so101": [("base_link", "gripper_link"), ("shoulder_link", "wrist_link")],
}

N_FK_SAMPLES = 200
N_SRDF_SAMPLES = 1000


def _reference_robots_dir() -> Path | None:
    """example-robot-data's ``robots`` folder, wherever the installed package put it."""
    probe = "panda_description/urdf/panda.urdf"
    candidates: list[Path] = []
    try:  # builds that ship the Python module (conda, robotpkg)
        import example_robot_data  # type: ignore[import-not-found]

        found = Path(example_robot_data.getModelPath(probe))
        candidates += [found, found / "robots"]
    except Exception:  # noqa: BLE001 - any failure just means "look elsewhere"
        pass
    try:  # the PyPI (cmeel) wheel installs data files under cmeel.prefix/
        dist = importlib.metadata.distribution("example-robot-data")
        candidates.append(
            Path(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")))
        )
    except importlib.metadata.PackageNotFoundError:
        pass
    candidates.append(Path(sys.prefix) / "share" / "example-robot-data" / "robots")
    for path in candidates:
        if (path / probe).is_file():
            return path
    return None


REFERENCE_DIR = _reference_robots_dir()
needs_reference = pytest.mark.skipif(
    REFERENCE_DIR is None, reason="example-robot-data (test-only dependency) is not installed"
)


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request: pytest.FixtureRequest) -> PinkRobot:
    return load_pink_supported_robot(request.param, build_collision_model=True)


def _reference_model(name: str) -> pin.Model:
    assert REFERENCE_DIR is not None
    return pin.buildModelFromUrdf(str(REFERENCE_DIR / REFERENCE[name][0]), True)


def _scalar_joints(model: pin.Model) -> dict[str, int]:
    """Joint name -> q index, for every joint with one coordinate of its own."""
    return {
        model.names[i]: model.joints[i].idx_q
        for i in range(1, model.njoints)
        if model.joints[i].nq == 1
    }


def _srdf_home(path: Path) -> dict[str, float]:
    root = ET.parse(path).getroot()
    states = [s for s in root.iter("group_state") if s.get("name") == "home"]
    assert len(states) == 1, f"{path}: expected one group_state named home"
    return {j.get("name", ""): float(j.get("value", "nan")) for j in states[0].iter("joint")}


# ---------------------------------------------------------------------------------------------
# Kinematics against the reference descriptions
# ---------------------------------------------------------------------------------------------


@needs_reference
def test_forward_kinematics_matches_reference(robot: PinkRobot) -> None:
    ref = _reference_model(robot.name)
    ref_data = ref.createData()
    ours, ref_q_index = _scalar_joints(robot.model), _scalar_joints(ref)
    assert set(ours) == set(ref_q_index), "same actuated joints as the reference"

    named = REFERENCE[robot.name][1]
    assert robot.tool_frame == named[0]
    shared = [
        f.name
        for f in robot.model.frames
        if f.type == pin.FrameType.BODY and ref.existFrame(f.name, pin.FrameType.BODY)
    ]
    frames = sorted(set(shared) | set(named))
    for frame in frames:
        assert robot.model.existFrame(frame), frame
        assert ref.existFrame(frame), frame

    rng = np.random.default_rng(12345)
    lo, hi = robot.model.lowerPositionLimit, robot.model.upperPositionLimit
    worst_pos = worst_rot = 0.0
    for _ in range(N_FK_SAMPLES):
        q = rng.uniform(lo, hi)
        q_ref = pin.neutral(ref)
        for joint, idx in ours.items():
            q_ref[ref_q_index[joint]] = q[idx]
        pin.framesForwardKinematics(robot.model, robot.data, q)
        pin.framesForwardKinematics(ref, ref_data, q_ref)
        for frame in frames:
            a = robot.data.oMf[robot.model.getFrameId(frame)]
            b = ref_data.oMf[ref.getFrameId(frame)]
            worst_pos = max(worst_pos, float(np.linalg.norm(a.translation - b.translation)))
            rot = pin.log3(a.rotation.T @ b.rotation)
            worst_rot = max(worst_rot, float(np.linalg.norm(rot)))
    assert worst_pos < 1e-6, f"frame position differs by {worst_pos} m"
    assert worst_rot < 1e-6, f"frame orientation differs by {worst_rot} rad"


@needs_reference
def test_joint_limits_match_reference(robot: PinkRobot) -> None:
    ref = _reference_model(robot.name)
    for joint in _scalar_joints(robot.model):
        mine = robot.model.joints[robot.model.getJointId(joint)]
        theirs = ref.joints[ref.getJointId(joint)]
        for field in ("lowerPositionLimit", "upperPositionLimit"):
            got = getattr(robot.model, field)[mine.idx_q]
            want = getattr(ref, field)[theirs.idx_q]
            assert got == pytest.approx(want, abs=1e-12), f"{joint} {field}"
        for field in ("velocityLimit", "effortLimit"):
            got = getattr(robot.model, field)[mine.idx_v]
            want = getattr(ref, field)[theirs.idx_v]
            assert got == pytest.approx(want, abs=1e-12), f"{joint} {field}"


def test_franka_structure() -> None:
    robot = load_pink_supported_robot("franka")
    model = robot.model
    assert robot.controlled_joint_names == [f"panda_joint{i}" for i in range(1, 8)]
    assert robot.gripper_joint_names == ["panda_finger_joint1"]
    for frame in ("panda_link8", "panda_hand", "panda_hand_tcp"):
        assert model.existFrame(frame), frame
    # The second finger is a mimic joint: no coordinate of its own, follows the first.
    finger2 = model.joints[model.getJointId("panda_finger_joint2")]
    assert finger2.nq == 0
    q = robot.q0.copy()
    finger1 = model.joints[model.getJointId("panda_finger_joint1")]
    q[finger1.idx_q] = 0.03
    pin.framesForwardKinematics(model, robot.data, q)
    left = robot.data.oMf[model.getFrameId("panda_leftfinger")].translation
    right = robot.data.oMf[model.getFrameId("panda_rightfinger")].translation
    assert np.linalg.norm(left - right) == pytest.approx(0.06, abs=1e-9)
    # The TCP sits 0.1034 m along the hand's z axis.
    hand = robot.data.oMf[model.getFrameId("panda_hand")]
    tcp = robot.data.oMf[model.getFrameId("panda_hand_tcp")]
    np.testing.assert_allclose(hand.actInv(tcp).translation, [0.0, 0.0, 0.1034], atol=1e-12)


# ---------------------------------------------------------------------------------------------
# Collision model and SRDF
# ---------------------------------------------------------------------------------------------


def _all_pairs_model(robot: PinkRobot) -> pin.GeometryModel:
    full = pin.buildGeomFromUrdf(robot.model, str(robot.urdf_path), pin.GeometryType.COLLISION)
    full.addAllCollisionPairs()
    return full


def _link_of(robot: PinkRobot, gmodel: pin.GeometryModel, gid: int) -> str:
    return str(robot.model.frames[gmodel.geometryObjects[gid].parentFrame].name)


def _link_pairs(robot: PinkRobot, gmodel: pin.GeometryModel) -> set[tuple[str, str]]:
    out = set()
    for cp in gmodel.collisionPairs:
        a, b = _link_of(robot, gmodel, cp.first), _link_of(robot, gmodel, cp.second)
        out.add((min(a, b), max(a, b)))
    return out


def test_srdf_removes_pairs(robot: PinkRobot) -> None:
    assert robot.collision_model is not None
    full = _all_pairs_model(robot)
    n_active, n_all = len(robot.collision_model.collisionPairs), len(full.collisionPairs)
    assert 0 < n_active < n_all
    # Geometry is primitives only: fast distance queries, no meshes to find.
    kinds = {type(geom.geometry).__name__ for geom in robot.collision_model.geometryObjects}
    assert kinds <= {"Box", "Cylinder", "Sphere", "Capsule"}, kinds


def test_no_active_pair_in_collision_at_home(robot: PinkRobot) -> None:
    assert robot.collision_model is not None and robot.collision_data is not None
    data = robot.model.createData()
    pin.forwardKinematics(robot.model, data, robot.q0)
    pin.updateGeometryPlacements(robot.model, data, robot.collision_model, robot.collision_data)
    pin.computeDistances(robot.collision_model, robot.collision_data)
    distances = np.array([r.min_distance for r in robot.collision_data.distanceResults])
    closest = int(np.argmin(distances))
    pair = robot.collision_model.collisionPairs[closest]
    names = [robot.collision_model.geometryObjects[i].name for i in (pair.first, pair.second)]
    assert distances.min() > 0.0, f"{names} in collision at home ({distances.min()} m)"


def test_srdf_keeps_pairs_that_can_collide(robot: PinkRobot) -> None:
    assert robot.collision_model is not None
    kept = _link_pairs(robot, robot.collision_model)
    for a, b in MUST_STAY_ENABLED[robot.name]:
        assert (min(a, b), max(a, b)) in kept, f"{a} / {b} must stay enabled"


def test_disabled_pairs_are_adjacent_or_never_touch(robot: PinkRobot) -> None:
    """Random motion never brings a disabled pair into contact, unless its links are at most
    one moving joint apart or move relative to each other through gripper joints only."""
    assert robot.collision_model is not None
    model = robot.model
    full = _all_pairs_model(robot)
    kept = _link_pairs(robot, robot.collision_model)
    controlled = {model.getJointId(j) for j in robot.controlled_joint_names}

    def exempt(ja: int, jb: int) -> bool:
        adjacent = ja == jb or model.parents[ja] == jb or model.parents[jb] == ja
        gripper_only = ja not in controlled and jb not in controlled and ja > 0 and jb > 0
        return adjacent or gripper_only

    checked = []
    for k, cp in enumerate(full.collisionPairs):
        a, b = _link_of(robot, full, cp.first), _link_of(robot, full, cp.second)
        if (min(a, b), max(a, b)) in kept:
            continue
        ja = full.geometryObjects[cp.first].parentJoint
        jb = full.geometryObjects[cp.second].parentJoint
        if not exempt(ja, jb):
            checked.append(k)

    full_data = pin.GeometryData(full)
    data = model.createData()
    rng = np.random.default_rng(7)
    lo, hi = model.lowerPositionLimit, model.upperPositionLimit
    closest = math.inf
    for _ in range(N_SRDF_SAMPLES):
        pin.forwardKinematics(model, data, rng.uniform(lo, hi))
        pin.updateGeometryPlacements(model, data, full, full_data)
        for k in checked:
            closest = min(closest, pin.computeDistance(full, full_data, k).min_distance)
    assert closest > 0.0, f"a disabled pair came {closest} m close"


# ---------------------------------------------------------------------------------------------
# robot.toml
# ---------------------------------------------------------------------------------------------


def test_toml_home_equals_srdf_home(robot: PinkRobot) -> None:
    assert robot.srdf_path is not None
    srdf_home = _srdf_home(robot.srdf_path)
    toml_home = {k: float(v) for k, v in robot.config["home"].items()}
    assert toml_home == srdf_home
    expected = set(robot.controlled_joint_names) | set(robot.gripper_joint_names)
    assert set(toml_home) == expected


def test_home_inside_joint_limits(robot: PinkRobot) -> None:
    model = robot.model
    assert np.all(robot.q0 >= model.lowerPositionLimit)
    assert np.all(robot.q0 <= model.upperPositionLimit)
    for joint, value in robot.config["home"].items():
        idx = model.joints[model.getJointId(joint)].idx_q
        assert robot.q0[idx] == value
        assert model.lowerPositionLimit[idx] <= value <= model.upperPositionLimit[idx], joint


def test_toml_limits_cover_controlled_joints(robot: PinkRobot) -> None:
    controlled = set(robot.controlled_joint_names)
    for table in (robot.velocity_limits, robot.acceleration_limits, robot.jerk_limits):
        assert set(table) == controlled
        assert all(math.isfinite(v) and v > 0.0 for v in table.values())
    # A controller limit never exceeds what the joint itself is rated for.
    model = robot.model
    for joint, limit in robot.velocity_limits.items():
        rated = model.velocityLimit[model.joints[model.getJointId(joint)].idx_v]
        assert limit <= rated, joint


def test_toml_mujoco_gains_cover_actuated_joints(robot: PinkRobot) -> None:
    actuated = set(robot.actuated_joint_names)
    for table in (robot.actuator_kp, robot.actuator_kv, robot.armature):
        assert set(table) == actuated
        assert all(math.isfinite(v) and v > 0.0 for v in table.values())


def test_urdf_compiles_in_mujoco_with_frames_and_visuals(robot: PinkRobot) -> None:
    """The URDF's <mujoco><compiler/></mujoco> keeps static bodies (tool frames) and visuals."""
    m = mujoco.MjModel.from_xml_path(str(robot.urdf_path))
    bodies = {m.body(i).name for i in range(m.nbody)}
    assert robot.tool_frame in bodies
    assert set(REFERENCE[robot.name][1]) <= bodies
    visual = m.geom_contype == 0
    assert visual.any() and (~visual).any()
    joints = {m.joint(i).name for i in range(m.njnt)}
    assert set(robot.actuated_joint_names) <= joints


_FLOATING_MJCF = """
<mujoco model="floating">
  <worldbody>
    <body name="base" pos="0 0 0.5">
      {free}
      <geom type="box" size="0.1 0.1 0.05" mass="1"/>
      <body name="link1" pos="0 0 0.05">
        <joint name="j1" type="hinge" axis="0 0 1" range="-1 1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5"/>
        <site name="tip" pos="0.3 0 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("free", ['<freejoint name="base_free"/>', ""], ids=["own", "added"])
def test_mjcf_floating_base_loads_and_simulates(tmp_path, free) -> None:
    """Issue 28 bug 3: load_pink_robot(mjcf, floating_base=True) raised Pinocchio's
    ArgumentError on pin 4.1. A file's own free joint is the floating base; a file without
    one gets ``root_joint``; either way one free joint in Pinocchio and in MuJoCo."""
    import warnings

    from pinkctl import MujocoSimulation, load_pink_robot

    path = tmp_path / "floating.xml"
    path.write_text(_FLOATING_MJCF.format(free=free))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = load_pink_robot(path, floating_base=True, tool_frame="tip")
        sim = MujocoSimulation.from_robot(robot)
    assert robot.model.nq == 8 and robot.model.joints[1].shortname() == "JointModelFreeFlyer"
    assert robot.model.names[1] == ("base_free" if free else "root_joint")
    assert sim.model.nq == 8 and robot.controlled_joint_names == ["j1"]
