"""Pose <-> SE3 and joint space <-> Pinocchio configuration conversions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pinkctl.core import joints as joint_maps
from pinkctl.core import poses
from pinkctl.core.joints import (
    JointSpaceMap,
    configuration_to_joint_positions,
    joint_positions_to_configuration,
    velocity_to_joint_state,
)
from pinkctl.core.poses import SitePoseReader, pose_to_se3, se3_to_pose
from pinkctl.core.robot import load_pink_robot
from pinkctl.core.state import JointState, SpatialState

URDF_DIR = Path(__file__).parent / "urdf"


@pytest.fixture(scope="module")
def continuous_arm():
    return load_pink_robot(URDF_DIR / "continuous_arm.urdf")


@pytest.fixture(scope="module")
def mimic_gripper():
    return load_pink_robot(URDF_DIR / "mimic_gripper.urdf")


def tool_position(robot, q: np.ndarray) -> np.ndarray:
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    return data.oMf[robot.model.getFrameId("tool")].translation.copy()


# --------------------------------------------------------------------------------------------
# Poses
# --------------------------------------------------------------------------------------------


def test_pose_to_se3_uses_wxyz() -> None:
    half = np.sqrt(0.5)
    T = pose_to_se3([1.0, 2.0, 3.0], [half, 0.0, 0.0, half])  # +90 deg about z
    np.testing.assert_allclose(T.translation, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(T.rotation @ [1.0, 0, 0], [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(T.rotation, [[0.0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
    # A general quaternion against the textbook rotation matrix formula.
    w, x, y, z = np.array([0.3, -0.5, 0.4, 0.7]) / np.linalg.norm([0.3, -0.5, 0.4, 0.7])
    R = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )
    np.testing.assert_allclose(pose_to_se3(np.zeros(3), [w, x, y, z]).rotation, R, atol=1e-15)


def test_pose_to_se3_normalises_quaternion() -> None:
    T = pose_to_se3(np.zeros(3), [0.0, 0.0, 0.0, 5.0])
    np.testing.assert_allclose(T.rotation, np.diag([-1.0, -1.0, 1.0]), atol=1e-15)
    tiny = pose_to_se3(np.zeros(3), [0.0, 1e-8, 0.0, 0.0])
    np.testing.assert_allclose(tiny.rotation, np.diag([1.0, -1.0, -1.0]), atol=1e-15)
    huge = pose_to_se3(np.zeros(3), [1e308, 0.0, 0.0, 1e308])
    np.testing.assert_allclose(huge.rotation @ [1.0, 0, 0], [0.0, 1.0, 0.0], atol=1e-15)


@pytest.mark.parametrize(
    ("position", "quaternion", "match"),
    [
        ([0.0, 0.0], [1.0, 0, 0, 0], "position must have 3"),
        ([0.0, 0.0, 0.0, 0.0], [1.0, 0, 0, 0], "position must have 3"),
        ([0.0, 0.0, 0.0], [1.0, 0, 0], "quaternion must have 4"),
        ([0.0, np.nan, 0.0], [1.0, 0, 0, 0], "position contains NaN"),
        ([0.0, 0.0, 0.0], [np.inf, 0, 0, 0], "quaternion contains NaN"),
        ([0.0, 0.0, 0.0], [0.0, 0, 0, 0], "zero"),
        (["a", "b", "c"], [1.0, 0, 0, 0], "real numbers"),
    ],
)
def test_pose_to_se3_rejects(position, quaternion, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        pose_to_se3(position, quaternion)


def test_se3_to_pose_canonical_sign() -> None:
    # A rotation of 3π/2 about x is a quaternion with w < 0 before canonicalisation.
    R = pin.AngleAxis(1.5 * np.pi, np.array([1.0, 0, 0])).toRotationMatrix()
    pos, quat = se3_to_pose(pin.SE3(R, np.array([0.1, 0.2, 0.3])))
    np.testing.assert_allclose(pos, [0.1, 0.2, 0.3])
    half = np.sqrt(0.5)
    np.testing.assert_allclose(quat, [half, -half, 0.0, 0.0], atol=1e-15)
    with pytest.raises(ValueError, match="SE3"):
        se3_to_pose(np.eye(4))  # type: ignore[arg-type]


unit = st.floats(-1.0, 1.0, allow_nan=False)
coord = st.floats(-10.0, 10.0, allow_nan=False)


@given(st.tuples(coord, coord, coord), st.tuples(unit, unit, unit, unit), st.floats(0.01, 100))
@settings(max_examples=200, deadline=None)
def test_pose_round_trip(position, quaternion, scale: float) -> None:
    q = np.array(quaternion)
    if np.linalg.norm(q) < 1e-3:
        q = np.array([1.0, 0.0, 0.0, 0.0])
    T = pose_to_se3(position, scale * q)
    pos, quat = se3_to_pose(T)
    np.testing.assert_allclose(pos, position, atol=1e-12)
    expected = q / np.linalg.norm(q)
    expected = expected if expected[0] >= 0 else -expected
    assert quat[0] >= 0
    assert abs(np.linalg.norm(quat) - 1.0) < 1e-12
    # q and -q are the same rotation; at w == 0 both signs are canonical.
    assert min(np.abs(quat - expected).max(), np.abs(quat + expected).max()) < 1e-9
    assert pose_to_se3(pos, quat).isApprox(T, 1e-10)


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=50, deadline=None)
def test_se3_round_trip(seed: int) -> None:
    twist = np.random.default_rng(seed).normal(scale=2.0, size=6)
    T = pin.exp6(pin.Motion(twist))
    assert pose_to_se3(*se3_to_pose(T)).isApprox(T, 1e-12)


def test_aliases_are_the_same_functions() -> None:
    assert poses.isaac_sim_position_quaternion_to_se3 is pose_to_se3
    assert poses.se3_to_isaac_sim_position_quaternion is se3_to_pose
    assert joint_maps.map_joint_positions_to_pinocchio is joint_positions_to_configuration
    assert joint_maps.map_pinocchio_velocity_to_joint_state is velocity_to_joint_state


# --------------------------------------------------------------------------------------------
# Joint positions <-> configuration
# --------------------------------------------------------------------------------------------


def test_continuous_joint_maps_to_cos_sin(continuous_arm) -> None:
    model = continuous_arm.model
    assert model.nq == 4 and model.nv == 3
    q = joint_positions_to_configuration(["joint1", "joint2", "joint3"], [2.5, 0.3, -0.4], model)
    np.testing.assert_allclose(q, [np.cos(2.5), np.sin(2.5), 0.3, -0.4])
    # Unwrapped angles land on the same configuration (and the same tool pose).
    q_wrapped = joint_positions_to_configuration(
        ["joint1", "joint2", "joint3"], [2.5 + 4 * np.pi, 0.3, -0.4], model
    )
    np.testing.assert_allclose(q_wrapped, q, atol=1e-12)
    # Base joint +90 deg about z turns the tool's x offset into y.
    q90 = joint_positions_to_configuration(["joint1"], [np.pi / 2], model)
    np.testing.assert_allclose(tool_position(continuous_arm, q90), [0.0, 0.45, 0.4], atol=1e-12)
    angles = configuration_to_joint_positions(q_wrapped, model, ["joint3", "joint1"])
    np.testing.assert_allclose(angles, [-0.4, 2.5], atol=1e-12)
    wrapped = configuration_to_joint_positions(
        joint_positions_to_configuration(["joint1"], [3.5], model), model, ["joint1"]
    )
    np.testing.assert_allclose(wrapped, [3.5 - 2 * np.pi], atol=1e-12)


def test_unknown_names_skipped_and_q_current_kept(continuous_arm) -> None:
    model = continuous_arm.model
    q_current = np.array([0.0, 1.0, 0.7, 0.8])
    before = q_current.copy()
    q = joint_positions_to_configuration(["gripper", "joint3"], [9.0, -1.0], model, q_current)
    np.testing.assert_array_equal(q, [0.0, 1.0, 0.7, -1.0])
    np.testing.assert_array_equal(q_current, before)
    np.testing.assert_array_equal(
        joint_positions_to_configuration([], [], model), pin.neutral(model)
    )


@pytest.mark.parametrize(
    ("names", "values", "q_current", "match"),
    [
        (["joint1", "joint2"], [0.0], None, "joint_positions must have 2"),
        (["joint1"], [np.nan], None, "NaN"),
        (["joint1", "joint1"], [0.0, 1.0], None, "duplicates"),
        (["joint1"], [0.0], np.zeros(3), "q_current must have 4"),
        (["joint1"], [0.0], [np.inf, 0, 0, 0], "q_current must be finite"),
    ],
)
def test_joint_positions_to_configuration_rejects(
    continuous_arm, names, values, q_current, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        joint_positions_to_configuration(names, values, continuous_arm.model, q_current)


def test_mimic_joint_is_skipped_and_read_back(mimic_gripper) -> None:
    model = mimic_gripper.model
    assert model.nq == 4
    names = ["joint1", "joint2", "joint3", "finger_joint1", "finger_joint2"]
    q = joint_positions_to_configuration(names, [0.1, 0.2, 0.3, 0.03, 0.5], model)
    np.testing.assert_allclose(q, [0.1, 0.2, 0.3, 0.03])
    back = configuration_to_joint_positions(q, model, ["finger_joint1", "finger_joint2"])
    np.testing.assert_allclose(back, [0.03, -1.0 * 0.03 + 0.01])
    # The follower finger moves as the URDF says: y = -q_master + offset (in link3's frame).
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    fid = model.getJointId("finger_joint2")
    local = data.oMi[model.getJointId("joint3")].actInv(data.oMi[fid]).translation
    np.testing.assert_allclose(local, [0.12, back[1], 0.0], atol=1e-12)


def test_multi_dof_joints_rejected() -> None:
    model = pin.buildModelFromUrdf(str(URDF_DIR / "continuous_arm.urdf"), pin.JointModelFreeFlyer())
    assert model.joints[1].nq == 7
    with pytest.raises(ValueError, match="root_joint"):
        joint_positions_to_configuration(["root_joint"], [0.0], model)
    with pytest.raises(ValueError, match="root_joint"):
        configuration_to_joint_positions(pin.neutral(model), model, ["root_joint"])
    with pytest.raises(ValueError, match="root_joint"):
        JointSpaceMap(model, ["root_joint", "joint2"], ["root_joint", "joint2"])
    # Scalar joints of a floating-base model still map.
    q = joint_positions_to_configuration(["joint2"], [0.5], model)
    assert q[model.joints[model.getJointId("joint2")].idx_q] == 0.5


def test_configuration_to_joint_positions_rejects(continuous_arm) -> None:
    model = continuous_arm.model
    with pytest.raises(ValueError, match="not in the model"):
        configuration_to_joint_positions(pin.neutral(model), model, ["gripper"])
    with pytest.raises(ValueError, match="q must have 4"):
        configuration_to_joint_positions(np.zeros(3), model, ["joint1"])


# --------------------------------------------------------------------------------------------
# Velocity -> JointState, JointSpaceMap
# --------------------------------------------------------------------------------------------

ARM_SPACE = ["joint1", "joint2", "joint3", "gripper"]


def test_velocity_to_joint_state_continues_unwrapped_angle(continuous_arm) -> None:
    model = continuous_arm.model
    measured = np.array([7.0, 0.2, -0.1])  # joint1 has turned more than a full revolution
    q = joint_positions_to_configuration(["joint1", "joint2", "joint3"], measured, model)
    v = np.array([1.0, -2.0, 0.5])
    dt = 0.01
    js = velocity_to_joint_state(
        v, model, ["joint1", "joint2", "joint3"], ARM_SPACE, dt, q, measured
    )
    assert js.robot_joint_space == ARM_SPACE
    assert js.position_names == ["joint1", "joint2", "joint3"]
    np.testing.assert_allclose(js.positions, measured + v * dt)  # 7.01, not 0.727
    np.testing.assert_array_equal(js.velocities, v)
    assert js.efforts is None
    assert not js.valid_array[:, 3].any()  # joints outside the controller are not commanded
    # Same rotation as Pinocchio's own integration on the manifold.
    q_next = pin.integrate(model, q, v * dt)
    np.testing.assert_allclose(
        joint_positions_to_configuration(ARM_SPACE[:3], js.positions, model), q_next, atol=1e-12
    )


def test_velocity_to_joint_state_without_measured_positions(continuous_arm) -> None:
    model = continuous_arm.model
    q = joint_positions_to_configuration(["joint1", "joint2"], [3.0, 0.4], model)
    v = np.array([0.5, 0.1, 0.0])
    js = velocity_to_joint_state(v, model, ["joint2", "joint1"], ARM_SPACE, 0.1, q)
    np.testing.assert_allclose(js.get_positions(["joint1", "joint2"]), [3.05, 0.41])
    np.testing.assert_allclose(js.get_velocities(["joint1", "joint2"]), [0.5, 0.1])
    assert js.position_names == ["joint1", "joint2"]


def test_seed_argument_order(continuous_arm) -> None:
    model = continuous_arm.model
    q = pin.neutral(model)
    js = joint_maps.map_pinocchio_velocity_to_joint_state(
        np.ones(3), model, ["joint3"], ARM_SPACE, 0.5, q, np.array([1.0])
    )
    np.testing.assert_allclose(js.positions, [1.5])
    q2 = joint_maps.map_joint_positions_to_pinocchio(["joint2"], np.array([0.3]), model, q)
    assert q2[2] == 0.3


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"velocity": np.ones(2)}, "velocity must have 3"),
        ({"velocity": np.array([np.nan, 0, 0])}, "velocity must be finite"),
        ({"dt": 0.0}, r"dt must be in \(0, inf\]"),
        ({"dt": np.inf}, "dt must be finite"),
        ({"dt": "0.1"}, "dt must be a real number"),
        ({"q_current": np.zeros(3)}, "q_current must have 4"),
        ({"current_joint_positions": np.zeros(2)}, "current_joint_positions must have 3"),
        ({"current_joint_positions": np.array([0.0, np.inf, 0])}, "NaN"),
        ({"controlled_joint_names": ["joint1", "joint1"]}, "duplicates"),
        ({"controlled_joint_names": ["elbow"]}, "not a joint of the model"),
        ({"robot_joint_space": ["joint1", "joint2"]}, "joint3.*not in robot_joint_space"),
    ],
)
def test_velocity_to_joint_state_rejects(continuous_arm, kwargs: dict, match: str) -> None:
    args = {
        "velocity": np.zeros(3),
        "model": continuous_arm.model,
        "controlled_joint_names": ["joint1", "joint2", "joint3"],
        "robot_joint_space": ARM_SPACE,
        "dt": 0.01,
        "q_current": pin.neutral(continuous_arm.model),
        "current_joint_positions": np.zeros(3),
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        velocity_to_joint_state(**args)


def test_joint_space_map_rejects_mimic_controlled_joint(mimic_gripper) -> None:
    with pytest.raises(ValueError, match="mimic"):
        JointSpaceMap(mimic_gripper.model, ["finger_joint2"], ["finger_joint2"])


def test_joint_space_map_fast_path(continuous_arm) -> None:
    model = continuous_arm.model
    controlled = ["joint3", "joint1", "joint2"]  # any order
    space = ["gripper", "joint1", "joint2", "joint3"]
    jmap = JointSpaceMap(model, controlled, space)
    assert jmap.robot_joint_space == space
    np.testing.assert_array_equal(jmap.space_indices, [3, 1, 2])
    np.testing.assert_array_equal(jmap.is_continuous, [False, True, False])

    measured = JointState.from_name(
        space, positions=(space, np.array([0.02, 7.0, 0.2, -0.1])), velocities=(space, np.ones(4))
    )
    positions = jmap.positions_from_state(measured)
    np.testing.assert_array_equal(positions, [-0.1, 7.0, 0.2])
    q = jmap.to_configuration(positions)
    np.testing.assert_allclose(
        q, joint_positions_to_configuration(controlled, positions, model), atol=0
    )
    np.testing.assert_allclose(jmap.configuration_to_positions(q), [-0.1, 7.0 - 2 * np.pi, 0.2])

    v = np.array([0.1, 0.2, 0.3])
    out = jmap.to_joint_state(v, positions, 0.5)
    np.testing.assert_allclose(out.get_positions(controlled), positions + v[[2, 0, 1]] * 0.5)
    np.testing.assert_allclose(out.get_velocities(controlled), v[[2, 0, 1]])
    assert out.valid_array[:, 0].sum() == 0
    # Output states are independent and read-only.
    with pytest.raises(ValueError):
        out.valid_array[0, 0] = True
    assert jmap.to_joint_state(np.zeros(3), positions, 0.5).velocities.tolist() == [0.0] * 3

    # The estimated state may use another joint space, as long as it holds the joints.
    other = JointState.from_name(
        ["joint3", "joint2", "joint1"], positions=(["joint1", "joint2", "joint3"], np.ones(3))
    )
    np.testing.assert_array_equal(jmap.positions_from_state(other), [1.0, 1.0, 1.0])
    partial = JointState.from_name(space, positions=(["joint1", "joint2"], np.ones(2)))
    assert jmap.positions_from_state(partial) is None
    missing = JointState.from_name(["joint1"], positions=(["joint1"], np.ones(1)))
    assert jmap.positions_from_state(missing) is None
    assert jmap.positions_from_state(None) is None


@pytest.mark.parametrize(
    "space",
    [
        ["joint1", "joint2", "joint3"],
        ["joint1", "joint2", "joint3", "gripper"],
        ["gripper", "joint1", "joint3", "joint2"],
    ],
)
def test_command_state(continuous_arm, space: list[str]) -> None:
    """Rows written in place when the controlled joints are a contiguous block of the space,
    gathered otherwise: the same command either way."""
    jmap = JointSpaceMap(continuous_arm.model, ["joint1", "joint2", "joint3"], space)
    positions = np.array([0.1, -0.2, 0.3]) + np.array([0.01, 0.02, -0.03])
    velocities = np.array([0.01, 0.02, -0.03]) / 0.01
    joints = jmap.command_state(positions, velocities)
    names = ["joint1", "joint2", "joint3"]
    np.testing.assert_allclose(joints.get_positions(names), positions, atol=0)
    np.testing.assert_allclose(joints.get_velocities(names), velocities, atol=0)
    assert joints.valid_array[2].sum() == 0 and joints.valid_array[0].sum() == 3
    with pytest.raises(ValueError):  # the state's matrix is read-only
        joints.data_array[0, 0] = 1.0


def _sites(names: list[str], rows: dict[str, tuple]) -> SpatialState:
    """A spatial state with the given (position or None, quaternion or None) rows."""
    fields = {}
    for key, column in (("positions", 0), ("orientations", 1)):
        given = [n for n in rows if rows[n][column] is not None]
        if given:
            fields[key] = (given, np.array([rows[n][column] for n in given], dtype=float))
    return SpatialState.from_name(names, **fields)


@settings(max_examples=60, deadline=None)
@given(
    position=st.lists(st.floats(-5, 5), min_size=3, max_size=3),
    quaternion=st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
        lambda q: max(map(abs, q)) > 1e-3
    ),
    scale=st.sampled_from([1.0, 1e-6, 1e150, 3.7]),  # 1e150: the overflow-safe path
)
def test_site_pose_reader_matches_pose_to_se3(position, quaternion, scale: float) -> None:
    reader = SitePoseReader("tool")
    quaternion = np.array(quaternion) * scale
    sites = _sites(["base", "tool"], {"tool": (position, quaternion)})
    pose = reader.pose(sites, None)
    assert pose is not None
    assert pose.isApprox(pose_to_se3(position, quaternion), 1e-12)


def test_site_pose_reader_missing_fields_and_spaces() -> None:
    reader = SitePoseReader("tool")
    previous = pin.SE3(pin.utils.rpyToMatrix(0.1, 0.2, 0.3), np.zeros(3))
    only_position = _sites(["tool"], {"tool": ([1.0, 2.0, 3.0], None)})
    pose = reader.pose(only_position, previous)
    assert pose is not None
    np.testing.assert_array_equal(pose.translation, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(pose.rotation, previous.rotation)  # kept
    np.testing.assert_array_equal(reader.pose(only_position, None).rotation, np.eye(3))
    only_orientation = _sites(["tool"], {"tool": (None, [1.0, 0.0, 0.0, 0.0])})
    assert reader.pose(only_orientation, previous) is None
    # another space, then one without the frame, then the first again: rows looked up anew
    other = _sites(["a", "tool"], {"tool": ([0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0])})
    np.testing.assert_allclose(reader.pose(other, None).rotation, np.diag([1.0, -1.0, -1.0]))
    assert reader.pose(_sites(["a"], {"a": ([0.0, 0.0, 1.0], None)}), None) is None
    assert reader.pose(only_position, previous) is not None


def test_joint_space_map_shape_and_finite_checks(continuous_arm) -> None:
    jmap = JointSpaceMap(continuous_arm.model, ["joint1", "joint2"], ARM_SPACE)
    with pytest.raises(ValueError, match="positions must have shape"):
        jmap.to_configuration(np.zeros(3))
    with pytest.raises(ValueError, match="q_base must have shape"):
        jmap.to_configuration(np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="velocity must have shape"):
        jmap.to_joint_state(np.zeros(2), np.zeros(2), 0.1)
    with pytest.raises(ValueError, match="current_positions must have shape"):
        jmap.to_joint_state(np.zeros(3), np.zeros(3), 0.1)
    with pytest.raises(ValueError, match="NaN"):
        jmap.to_joint_state(np.array([np.nan, 0, 0]), np.zeros(2), 0.1)
    with pytest.raises(ValueError, match="q must have shape"):
        jmap.configuration_to_positions(np.zeros(3))


@given(
    st.lists(st.floats(-50, 50), min_size=3, max_size=3),
    st.lists(st.floats(-5, 5), min_size=3, max_size=3),
    st.floats(1e-4, 0.1),
)
@settings(max_examples=100, deadline=None)
def test_integration_matches_pinocchio(continuous_arm, positions, velocity, dt: float) -> None:
    model = continuous_arm.model
    names = ["joint1", "joint2", "joint3"]
    pos, v = np.array(positions), np.array(velocity)
    q = joint_positions_to_configuration(names, pos, model)
    js = velocity_to_joint_state(v, model, names, names, dt, q, pos)
    np.testing.assert_allclose(js.positions, pos + v * dt)
    q_next = joint_positions_to_configuration(names, js.positions, model)
    np.testing.assert_allclose(q_next, pin.integrate(model, q, v * dt), atol=1e-9)
