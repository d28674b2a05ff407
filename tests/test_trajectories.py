"""Trajectories: Path and its minimal-time joint trajectory, Cartesian pose trajectories."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from pinkctl.core.state import JointState, RobotState, SpatialState
from pinkctl.trajectories import (
    CircleTrajectory,
    FigureEightTrajectory,
    MinimalTimeJointTrajectory,
    Path,
    PlanarCurveChanges,
    PlanarCurveOptions,
    PoseWaypointTrajectory,
    RampedPhase,
    Trajectory,
    TrapezoidTimeScaling,
)

JOINT_SPACE = ["j0", "j1", "j2", "j3"]
ACTIVE = ["j2", "j0", "j1"]  # column order differs from the joint-space order on purpose


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def joint_sample(traj: MinimalTimeJointTrajectory, t: float) -> tuple[np.ndarray, np.ndarray]:
    """Active-joint positions and velocities in waypoint-column order, read from the state."""
    state = traj.get_target_state(t)
    assert isinstance(state, RobotState) and isinstance(state.joints, JointState)
    joints = state.joints
    active = traj.get_active_joints()
    return joints.get_positions(active), joints.get_velocities(active)


def rotation_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def site_sample(traj: Trajectory, frame: str, t: float) -> tuple[np.ndarray, ...]:
    """Position, quaternion, linear and angular velocity of ``frame``, read from the state."""
    state = traj.get_target_state(t)
    assert state is not None and isinstance(state.sites, SpatialState)
    sites = state.sites
    i = sites.spatial_space.index(frame)
    assert sites.valid_array[i].all(), "all four fields must be valid"
    return (
        sites.position_data[i].copy(),
        sites.orientation_data[i].copy(),
        sites.linear_velocity_data[i].copy(),
        sites.angular_velocity_data[i].copy(),
    )


def finite_difference_twist(
    traj: Trajectory, frame: str, t: float, h: float = 1e-6
) -> tuple[np.ndarray, np.ndarray]:
    """Central finite differences: d/dt position and world angular velocity from R' R^T."""
    p_plus, q_plus, _, _ = site_sample(traj, frame, t + h)
    p_minus, q_minus, _, _ = site_sample(traj, frame, t - h)
    _, q_mid, _, _ = site_sample(traj, frame, t)
    r_dot = (rotation_matrix(q_plus) - rotation_matrix(q_minus)) / (2 * h)
    skew = r_dot @ rotation_matrix(q_mid).T
    omega = np.array([skew[2, 1] - skew[1, 2], skew[0, 2] - skew[2, 0], skew[1, 0] - skew[0, 1]])
    return (p_plus - p_minus) / (2 * h), 0.5 * omega


def interior_times(traj: Trajectory, count: int, margin: float = 1e-4) -> np.ndarray:
    return np.linspace(margin, traj.duration - margin, count)


# --------------------------------------------------------------------------------------------
# TrapezoidTimeScaling and RampedPhase
# --------------------------------------------------------------------------------------------


def test_trapezoid_closed_form_matches_textbook_trapezoid() -> None:
    # distance 1, v 0.5, a 1: accelerate 0.5 s, cruise 1.5 s, decelerate 0.5 s
    profile = TrapezoidTimeScaling.synchronized([1.0], [0.5], [1.0])
    assert profile.duration == pytest.approx(2.5)
    assert profile.blend_time == pytest.approx(0.5)
    assert profile.peak_rate == pytest.approx(0.5)
    assert profile.acceleration == pytest.approx(1.0)
    assert not profile.is_triangular
    assert profile.evaluate(0.0) == pytest.approx((0.0, 0.0, 1.0))
    assert profile.evaluate(1.25)[0] == pytest.approx(0.5)
    assert profile.evaluate(2.5)[:2] == pytest.approx((1.0, 0.0))


def test_trapezoid_triangle_when_peak_rate_unreachable() -> None:
    # distance 1, v 10, a 1: triangle of duration 2 sqrt(d / a) = 2, peak rate 1 < 10
    profile = TrapezoidTimeScaling.synchronized([1.0], [10.0], [1.0])
    assert profile.is_triangular
    assert profile.duration == pytest.approx(2.0)
    assert profile.peak_rate == pytest.approx(1.0)
    assert profile.evaluate(1.0)[:2] == pytest.approx((0.5, 1.0))


def test_trapezoid_rejects_all_zero_distances_and_bad_limits() -> None:
    with pytest.raises(ValueError):
        TrapezoidTimeScaling.synchronized([0.0, 0.0], [1.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError):
        TrapezoidTimeScaling.synchronized([1.0], [0.0], [1.0])
    with pytest.raises(ValueError):
        TrapezoidTimeScaling.from_p_q(float("nan"), 1.0)


def test_ramped_phase_is_smooth_and_reaches_total_phase() -> None:
    phase = RampedPhase(rate=2.0, ramp_time=1.0, duration=5.0)
    assert phase.evaluate(0.0) == pytest.approx((0.0, 0.0, 0.0))
    assert phase.evaluate(5.0)[:2] == pytest.approx((phase.total_phase, 0.0))
    assert phase.total_phase == pytest.approx(2.0 * 4.0)
    h = 1e-6
    for t in np.linspace(0.01, 4.99, 97):
        phi, phi_dot, phi_ddot = phase.evaluate(t)
        assert (phase.evaluate(t + h)[0] - phase.evaluate(t - h)[0]) / (2 * h) == pytest.approx(
            phi_dot, abs=1e-6
        )
        assert (phase.evaluate(t + h)[1] - phase.evaluate(t - h)[1]) / (2 * h) == pytest.approx(
            phi_ddot, abs=1e-5
        )
    # rate and its derivative are continuous across the ramp ends
    for t in (1.0, 4.0):
        assert phase.evaluate(t - 1e-9)[1:] == pytest.approx(phase.evaluate(t + 1e-9)[1:], abs=1e-6)
    with pytest.raises(ValueError):
        RampedPhase(rate=1.0, ramp_time=3.0, duration=5.0)


# --------------------------------------------------------------------------------------------
# Path
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", [[0.0, 1.0, 2.0], np.zeros((2, 2, 2)), 3.0, [["a", "b"]], [[0.0, float("nan")]]]
)
def test_path_rejects_anything_but_a_finite_2d_matrix(bad: object) -> None:
    with pytest.raises(ValueError):
        Path(bad)  # type: ignore[arg-type]


def test_path_accessors_return_copies_and_check_index() -> None:
    waypoints = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    path = Path(waypoints)
    assert path.get_waypoints_count() == 3
    np.testing.assert_array_equal(path.get_waypoints(), waypoints)
    np.testing.assert_array_equal(path.get_waypoint_by_index(1), [2.0, 3.0])
    path.get_waypoints()[0, 0] = 99.0
    path.get_waypoint_by_index(0)[0] = 99.0
    assert path.get_waypoint_by_index(0)[0] == 0.0
    for index in (3, -1, 100):
        with pytest.raises(IndexError):
            path.get_waypoint_by_index(index)


def make_trajectory(
    waypoints: list[list[float]], **overrides: object
) -> MinimalTimeJointTrajectory:
    kwargs: dict[str, object] = dict(
        max_velocities=[1.0, 2.0, 0.5],
        max_accelerations=[2.0, 1.0, 4.0],
        robot_joint_space=JOINT_SPACE,
        active_joints=ACTIVE,
    )
    kwargs.update(overrides)
    return Path(waypoints).to_minimal_time_joint_trajectory(**kwargs)  # type: ignore[arg-type]


WAYPOINTS = [[0.0, 0.0, 0.0], [1.0, -0.5, 0.3], [1.2, 0.5, 0.3], [0.0, 0.0, -0.2]]


@pytest.mark.parametrize(
    ("overrides", "waypoints"),
    [
        ({"max_velocities": [1.0, 2.0]}, WAYPOINTS),  # wrong length
        ({"max_velocities": [[1.0, 2.0, 0.5]]}, WAYPOINTS),  # not 1-D
        ({"max_velocities": [1.0, 0.0, 0.5]}, WAYPOINTS),  # not strictly positive
        ({"max_accelerations": [1.0, -2.0, 0.5]}, WAYPOINTS),
        ({"max_accelerations": [1.0, 2.0, 0.5, 1.0]}, WAYPOINTS),
        ({"max_accelerations": [1.0, float("inf"), 0.5]}, WAYPOINTS),
        ({"active_joints": ["j0", "j1"]}, WAYPOINTS),  # len != M
        ({"active_joints": ["j0", "j1", "nope"]}, WAYPOINTS),  # not in the joint space
        ({"active_joints": ["j0", "j0", "j1"]}, WAYPOINTS),  # repeated
        ({}, WAYPOINTS[:1]),  # fewer than 2 waypoints
        ({"waypoint_relative_difference_tolerance": 0.0}, WAYPOINTS),
        ({"waypoint_absolute_difference_tolerance": -1e-9}, WAYPOINTS),
        ({}, [WAYPOINTS[0], WAYPOINTS[1], WAYPOINTS[1], WAYPOINTS[2]]),  # exact duplicate
        ({}, [WAYPOINTS[0], WAYPOINTS[1], [1.0, -0.5, 0.3 + 1e-12]]),  # duplicate within atol
    ],
)
def test_minimal_time_trajectory_value_errors(
    overrides: dict[str, object], waypoints: list[list[float]]
) -> None:
    with pytest.raises(ValueError):
        make_trajectory(waypoints, **overrides)


def test_duplicate_check_uses_the_given_tolerances() -> None:
    waypoints = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.001]]
    make_trajectory(waypoints)  # 1e-3 apart: distinct under the defaults
    with pytest.raises(ValueError, match="waypoints 1 and 2"):
        make_trajectory(waypoints, waypoint_absolute_difference_tolerance=1e-2)


def test_alias_builds_the_same_trajectory() -> None:
    path = Path(WAYPOINTS)
    limits = ([1.0, 2.0, 0.5], [2.0, 1.0, 4.0], JOINT_SPACE, ACTIVE)
    a = path.to_minimal_time_joint_trajectory(*limits)
    b = path.to_minimal_time_trajectory(*limits)
    assert a.duration == b.duration
    np.testing.assert_array_equal(joint_sample(a, 1.234)[0], joint_sample(b, 1.234)[0])


def test_output_state_layout() -> None:
    traj = make_trajectory(WAYPOINTS)
    assert traj.get_active_joints() == ACTIVE
    state = traj.get_target_state(0.3)
    assert state.root is None and state.links is None and state.sites is None
    joints = state.joints
    assert joints is not None
    assert joints.robot_joint_space == JOINT_SPACE
    # valid entries are the active joints, reported in joint-space order
    assert joints.position_names == ["j0", "j1", "j2"]
    assert joints.velocity_names == ["j0", "j1", "j2"]
    assert joints.efforts is None


def reference_segment_duration(d: np.ndarray, v: np.ndarray, a: np.ndarray) -> float:
    """Independent computation: limits on the unit path parameter, then the textbook trapezoid."""
    moving = np.abs(d) > 0
    rate = np.min(v[moving] / np.abs(d[moving]))
    accel = np.min(a[moving] / np.abs(d[moving]))
    if rate * rate / accel >= 1.0:  # triangle: the peak rate is never reached
        return 2.0 * math.sqrt(1.0 / accel)
    return 1.0 / rate + rate / accel


def test_profile_respects_limits_and_is_time_optimal() -> None:
    v_max = np.array([1.0, 2.0, 0.5])
    a_max = np.array([2.0, 1.0, 4.0])
    traj = make_trajectory(WAYPOINTS, max_velocities=v_max, max_accelerations=a_max)
    waypoints = np.array(WAYPOINTS)
    deltas = np.diff(waypoints, axis=0)
    times = traj.waypoint_times
    expected = [reference_segment_duration(d, v_max, a_max) for d in deltas]
    np.testing.assert_allclose(np.diff(times), expected, rtol=1e-12)
    assert traj.duration == pytest.approx(sum(expected))

    dt = 1e-3
    ts = np.arange(0.0, traj.duration + dt / 2, dt)
    samples = [joint_sample(traj, t) for t in ts]
    q = np.array([s[0] for s in samples])
    qd = np.array([s[1] for s in samples])
    assert np.all(np.abs(qd) <= v_max * (1 + 1e-9))
    accel = np.diff(qd, axis=0) / dt
    assert np.all(np.abs(accel) <= a_max * (1 + 1e-6))
    # velocities are the derivative of the positions
    np.testing.assert_allclose(np.gradient(q, dt, axis=0)[1:-1], qd[1:-1], atol=2e-3)

    for k, d in enumerate(deltas):
        seg = (ts > times[k]) & (ts < times[k + 1])
        peak_v = np.max(np.abs(qd[seg]) / v_max, axis=0)
        peak_a = np.max(np.abs(accel[seg[1:]]) / a_max, axis=0)
        # some joint saturates its speed or its acceleration limit in every segment
        assert max(peak_v.max(), peak_a.max()) > 0.99
        # straight line: the offset from the segment start stays parallel to the segment
        offset = q[seg] - waypoints[k]
        s = offset @ d / (d @ d)
        np.testing.assert_allclose(offset, np.outer(s, d), atol=1e-12)
        assert np.all((s >= -1e-12) & (s <= 1 + 1e-12))


def test_all_joints_stop_together_at_every_waypoint() -> None:
    traj = make_trajectory(WAYPOINTS)
    for k, t in enumerate(traj.waypoint_times):
        q, qd = joint_sample(traj, float(t))
        np.testing.assert_allclose(q, WAYPOINTS[k], atol=1e-12)
        np.testing.assert_allclose(qd, 0.0, atol=1e-12)
        # just inside the segment, every moving joint moves
        if 0 < k < len(WAYPOINTS) - 1:
            _, qd_after = joint_sample(traj, float(t) + 1e-3)
            moving = np.abs(np.subtract(WAYPOINTS[k + 1], WAYPOINTS[k])) > 0
            assert np.all(np.abs(qd_after[moving]) > 0)


def test_triangle_segment_reaches_acceleration_not_speed() -> None:
    traj = make_trajectory(
        [[0.0, 0.0, 0.0], [0.01, 0.0, 0.0]],
        max_velocities=[10.0, 10.0, 10.0],
        max_accelerations=[1.0, 1.0, 1.0],
    )
    assert traj.segment_profiles[0].is_triangular
    assert traj.duration == pytest.approx(2.0 * math.sqrt(0.01 / 1.0))
    _, qd_mid = joint_sample(traj, traj.duration / 2)
    assert qd_mid[0] == pytest.approx(math.sqrt(0.01 * 1.0))  # a * T / 2, far below 10
    q_quarter, _ = joint_sample(traj, traj.duration / 4)
    assert q_quarter[0] == pytest.approx(0.5 * 1.0 * (traj.duration / 4) ** 2)


def test_sampling_is_clamped_and_rejects_non_finite_time() -> None:
    traj = make_trajectory(WAYPOINTS)
    for t, k in ((-5.0, 0), (traj.duration + 5.0, -1), (traj.duration, -1)):
        q, qd = joint_sample(traj, t)
        np.testing.assert_allclose(q, WAYPOINTS[k], atol=1e-12)
        np.testing.assert_allclose(qd, 0.0, atol=1e-12)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError):
            traj.get_target_state(bad)


# --------------------------------------------------------------------------------------------
# PoseWaypointTrajectory
# --------------------------------------------------------------------------------------------

POSITIONS = [[0.4, 0.0, 0.5], [0.5, 0.1, 0.4], [0.5, 0.1, 0.4], [0.3, -0.2, 0.6]]
HALF = math.sqrt(0.5)
ORIENTATIONS = [
    [0.0, 1.0, 0.0, 0.0],
    [0.0, HALF, HALF, 0.0],  # + 90 deg about z
    [0.0, 0.0, 1.0, 0.0],  # rotation only (same position): allowed
    [0.0, 1.0, 0.0, 0.0],
]
LIMITS = dict(
    max_linear_velocity=0.2,
    max_angular_velocity=1.0,
    max_linear_acceleration=0.5,
    max_angular_acceleration=2.0,
)


def make_pose_trajectory(**overrides: object) -> PoseWaypointTrajectory:
    kwargs: dict[str, object] = dict(LIMITS)
    kwargs.update(overrides)
    positions = kwargs.pop("positions", POSITIONS)
    orientations = kwargs.pop("orientations", ORIENTATIONS)
    return PoseWaypointTrajectory("tool", positions, orientations, **kwargs)  # type: ignore[arg-type]


def test_pose_trajectory_hits_waypoints_at_rest() -> None:
    traj = make_pose_trajectory()
    for k, t in enumerate(traj.waypoint_times):
        p, q, v, w = site_sample(traj, "tool", float(t))
        np.testing.assert_allclose(p, POSITIONS[k], atol=1e-12)
        assert abs(float(q @ np.array(ORIENTATIONS[k]))) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(v, 0.0, atol=1e-12)
        np.testing.assert_allclose(w, 0.0, atol=1e-12)


def test_pose_trajectory_velocities_match_finite_differences() -> None:
    traj = make_pose_trajectory()
    for t in interior_times(traj, 211):
        _, q, v, w = site_sample(traj, "tool", float(t))
        assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-12)
        v_fd, w_fd = finite_difference_twist(traj, "tool", float(t))
        np.testing.assert_allclose(v, v_fd, atol=1e-6)
        np.testing.assert_allclose(w, w_fd, atol=1e-6)


def test_pose_trajectory_respects_limits_and_reaches_one_per_segment() -> None:
    traj = make_pose_trajectory()
    dt = 1e-3
    ts = np.arange(0.0, traj.duration + dt / 2, dt)
    samples = [site_sample(traj, "tool", float(t)) for t in ts]
    p = np.array([s[0] for s in samples])
    v = np.array([s[2] for s in samples])
    w = np.array([s[3] for s in samples])
    speed = np.linalg.norm(v, axis=1)
    angular_speed = np.linalg.norm(w, axis=1)
    linear_accel = np.linalg.norm(np.diff(v, axis=0), axis=1) / dt
    angular_accel = np.linalg.norm(np.diff(w, axis=0), axis=1) / dt
    assert speed.max() <= LIMITS["max_linear_velocity"] * (1 + 1e-9)
    assert angular_speed.max() <= LIMITS["max_angular_velocity"] * (1 + 1e-9)
    assert linear_accel.max() <= LIMITS["max_linear_acceleration"] * (1 + 1e-6)
    assert angular_accel.max() <= LIMITS["max_angular_acceleration"] * (1 + 1e-6)
    times = traj.waypoint_times
    for k in range(len(POSITIONS) - 1):
        seg = (ts > times[k]) & (ts < times[k + 1])
        ratios = [
            speed[seg].max() / LIMITS["max_linear_velocity"],
            angular_speed[seg].max() / LIMITS["max_angular_velocity"],
            linear_accel[seg[1:]].max() / LIMITS["max_linear_acceleration"],
            angular_accel[seg[1:]].max() / LIMITS["max_angular_acceleration"],
        ]
        assert max(ratios) > 0.99
        # translation follows the straight line between the two waypoints
        d = np.subtract(POSITIONS[k + 1], POSITIONS[k])
        offset = p[seg] - POSITIONS[k]
        if np.linalg.norm(d) > 0:
            s = offset @ d / (d @ d)
            np.testing.assert_allclose(offset, np.outer(s, d), atol=1e-12)
        else:
            np.testing.assert_allclose(offset, 0.0, atol=1e-12)


def test_slower_of_rotation_and_translation_sets_segment_duration() -> None:
    # 0.01 m of translation but a half turn: rotation (pi rad at 1 rad/s, 2 rad/s^2) dominates
    traj = make_pose_trajectory(
        positions=[[0.0, 0.0, 0.0], [0.01, 0.0, 0.0]],
        orientations=[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]],
    )
    # textbook trapezoid for the angle: pi / 1 + 1 / 2
    assert traj.duration == pytest.approx(math.pi / 1.0 + 1.0 / 2.0)
    _, _, _, w = site_sample(traj, "tool", traj.duration / 2)
    np.testing.assert_allclose(w, [0.0, 0.0, 1.0], atol=1e-12)


def test_pose_trajectory_value_errors() -> None:
    with pytest.raises(ValueError, match="same pose"):
        make_pose_trajectory(
            positions=[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
            orientations=[[1.0, 0.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]],  # same rotation
        )
    bad_cases: list[dict[str, object]] = [
        {"positions": POSITIONS[:1], "orientations": ORIENTATIONS[:1]},
        {"positions": [[0.0, 0.0], [1.0, 1.0]], "orientations": ORIENTATIONS[:2]},
        {"orientations": ORIENTATIONS[:3]},
        {"orientations": [[0.0, 0.0, 0.0, 0.0]] + ORIENTATIONS[1:]},
        {"positions": [[float("nan"), 0.0, 0.0]] + POSITIONS[1:]},
        {"max_linear_velocity": 0.0},
        {"max_angular_acceleration": -1.0},
        {"site_space": ["other"]},
    ]
    for overrides in bad_cases:
        with pytest.raises(ValueError):
            make_pose_trajectory(**overrides)


def test_pose_trajectory_site_space_and_clamping() -> None:
    traj = make_pose_trajectory(site_space=["other", "tool"])
    state = traj.get_target_state(-1.0)
    assert state.sites is not None
    assert state.sites.spatial_space == ["other", "tool"]
    assert state.sites.position_names == ["tool"]
    np.testing.assert_allclose(state.sites.get_position("tool"), POSITIONS[0])
    p_end, _, v_end, _ = site_sample(traj, "tool", traj.duration + 10.0)
    np.testing.assert_allclose(p_end, POSITIONS[-1], atol=1e-12)
    np.testing.assert_allclose(v_end, 0.0)
    with pytest.raises(ValueError):
        traj.get_target_state(float("nan"))


# --------------------------------------------------------------------------------------------
# FigureEightTrajectory and CircleTrajectory
# --------------------------------------------------------------------------------------------

CENTER = np.array([0.5, 0.0, 0.4])
DOWN = [0.0, 1.0, 0.0, 0.0]


def in_plane_coordinates(points: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    offsets = points - CENTER
    normal = np.cross(u, v)
    np.testing.assert_allclose(offsets @ normal, 0.0, atol=1e-12)  # stays in the plane
    return np.stack([offsets @ u, offsets @ v], axis=1)


def test_figure_eight_geometry_in_yz_plane() -> None:
    traj = FigureEightTrajectory("tool", CENTER, half_width=0.15, period=8.0, orientation=DOWN)
    assert traj.duration == pytest.approx(8.0)
    u, v = traj.axes
    np.testing.assert_array_equal(u, [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(v, [0.0, 0.0, 1.0])
    ts = np.linspace(0.0, 8.0, 4001)
    points = np.array([site_sample(traj, "tool", float(t))[0] for t in ts])
    uv = in_plane_coordinates(points, u, v)
    assert uv[:, 0].max() == pytest.approx(0.15, abs=1e-6)
    assert uv[:, 0].min() == pytest.approx(-0.15, abs=1e-6)
    assert uv[:, 1].max() == pytest.approx(0.075, abs=1e-6)
    assert uv[:, 1].min() == pytest.approx(-0.075, abs=1e-6)
    # starts and ends at the centre, passes through it at half period, lobes at +u then -u
    np.testing.assert_allclose(points[0], CENTER, atol=1e-12)
    np.testing.assert_allclose(points[-1], CENTER, atol=1e-12)
    np.testing.assert_allclose(site_sample(traj, "tool", 4.0)[0], CENTER, atol=1e-12)
    assert site_sample(traj, "tool", 2.0)[0] @ u == pytest.approx(0.15)
    assert site_sample(traj, "tool", 6.0)[0] @ u == pytest.approx(-0.15)
    # Gerono lemniscate: (x/a)^4 = (x/a)^2 - (2 y/a)^2 ... i.e. y = x sqrt(1 - (x/a)^2)
    x, y = uv[:, 0] / 0.15, uv[:, 1] / 0.15
    np.testing.assert_allclose(y**2, x**2 * (1 - x**2), atol=1e-12)
    # orientation fixed, no angular velocity
    _, q, lin, ang = site_sample(traj, "tool", 1.0)
    np.testing.assert_allclose(q, DOWN)
    np.testing.assert_allclose(ang, 0.0)
    # full speed through the centre without a ramp: sqrt(2) * omega * a
    speed0 = np.linalg.norm(site_sample(traj, "tool", 0.0)[2])
    assert speed0 == pytest.approx(math.sqrt(2) * 2 * math.pi / 8.0 * 0.15)


def test_figure_eight_ramp_starts_and_ends_at_rest_and_keeps_the_period() -> None:
    traj = FigureEightTrajectory(
        "tool", CENTER, half_width=0.1, period=4.0, cycles=2, ramp_time=1.5, plane="xy"
    )
    assert traj.duration == pytest.approx(2 * 4.0 + 1.5)
    for t in (0.0, traj.duration):
        p, _, v, _ = site_sample(traj, "tool", t)
        np.testing.assert_allclose(p, CENTER, atol=1e-12)
        np.testing.assert_allclose(v, 0.0, atol=1e-12)
    # after the ramp the motion repeats with the period
    for t in (1.6, 2.5, 3.9):  # t and t + period both in the cruise phase [1.5, 8.0]
        p1, _, v1, _ = site_sample(traj, "tool", t)
        p2, _, v2, _ = site_sample(traj, "tool", t + 4.0)
        np.testing.assert_allclose(p1, p2, atol=1e-12)
        np.testing.assert_allclose(v1, v2, atol=1e-12)
    for t in interior_times(traj, 151):
        _, _, v, w = site_sample(traj, "tool", float(t))
        v_fd, w_fd = finite_difference_twist(traj, "tool", float(t))
        np.testing.assert_allclose(v, v_fd, atol=1e-7)
        np.testing.assert_allclose(w, w_fd, atol=1e-7)
    # the ramp is smooth: the phase rate grows monotonically from zero to 2 pi / period
    phases = np.array([traj.phase(t) for t in np.linspace(0.0, 1.5, 151)])
    rates = np.diff(phases) / 0.01
    assert rates[0] < 1e-3 and np.all(np.diff(rates) > 0)
    assert rates[-1] == pytest.approx(2 * math.pi / 4.0, rel=1e-3)
    assert np.linalg.norm(site_sample(traj, "tool", 0.01)[2]) < 1e-4


def test_figure_eight_orientation_rocking_matches_finite_differences() -> None:
    axis = np.array([1.0, 1.0, 0.0]) / math.sqrt(2)
    traj = FigureEightTrajectory(
        "tool",
        CENTER,
        half_width=0.1,
        period=3.0,
        plane=([1.0, 0.0, 0.0], [0.0, HALF, HALF]),
        orientation=DOWN,
        orientation_amplitude=0.3,
        orientation_axis=axis * 2.0,  # normalised on input
        duration=5.0,
        ramp_time=0.5,
    )
    for t in interior_times(traj, 121):
        _, q, v, w = site_sample(traj, "tool", float(t))
        v_fd, w_fd = finite_difference_twist(traj, "tool", float(t))
        np.testing.assert_allclose(v, v_fd, atol=1e-7)
        np.testing.assert_allclose(w, w_fd, atol=1e-7)
        np.testing.assert_allclose(np.cross(w, axis), 0.0, atol=1e-12)  # about the axis only
    # a quarter cycle into cruise the rocking angle is at its amplitude
    phi_t = traj.phase(0.5 + 0.25 * 3.0)
    _, q, _, _ = site_sample(traj, "tool", 0.5 + 0.25 * 3.0)
    relative = rotation_matrix(q) @ rotation_matrix(np.array(DOWN)).T
    angle = math.acos(max(-1.0, min(1.0, (np.trace(relative) - 1) / 2)))
    assert angle == pytest.approx(abs(0.3 * math.sin(phi_t)), abs=1e-9)


def test_circle_geometry_and_speed() -> None:
    traj = CircleTrajectory("tool", CENTER, radius=0.08, period=5.0, plane="xz", cycles=1.5)
    assert traj.duration == pytest.approx(7.5)
    u, v = traj.axes
    np.testing.assert_allclose(site_sample(traj, "tool", 0.0)[0], CENTER + 0.08 * u)
    # a quarter period later it has turned from u towards v
    np.testing.assert_allclose(site_sample(traj, "tool", 1.25)[0], CENTER + 0.08 * v, atol=1e-12)
    ts = np.linspace(0.0, traj.duration, 1001)
    samples = [site_sample(traj, "tool", float(t)) for t in ts]
    points = np.array([s[0] for s in samples])
    uv = in_plane_coordinates(points, u, v)
    np.testing.assert_allclose(np.linalg.norm(uv, axis=1), 0.08, atol=1e-12)
    speeds = np.linalg.norm([s[2] for s in samples], axis=1)
    np.testing.assert_allclose(speeds, 2 * math.pi * 0.08 / 5.0, rtol=1e-12)
    for t in interior_times(traj, 61):
        v_fd, _ = finite_difference_twist(traj, "tool", float(t))
        np.testing.assert_allclose(site_sample(traj, "tool", float(t))[2], v_fd, atol=1e-7)


def test_circle_from_normal_is_right_handed() -> None:
    normal = np.array([1.0, 2.0, 2.0]) / 3.0
    traj = CircleTrajectory("tool", CENTER, radius=0.05, period=2.0, normal=normal * 3.0)
    u, v = traj.axes
    np.testing.assert_allclose(traj.normal, normal, atol=1e-12)
    assert u @ v == pytest.approx(0.0, abs=1e-12)
    ts = np.linspace(0.0, 2.0, 101)
    points = np.array([site_sample(traj, "tool", float(t))[0] for t in ts])
    np.testing.assert_allclose((points - CENTER) @ normal, 0.0, atol=1e-12)


@pytest.mark.parametrize(
    "overrides",
    [
        {"plane": "xx"},
        {"plane": "xw"},
        {"plane": ([1.0, 0.0, 0.0], [1.0, 0.0, 0.0])},  # not orthogonal
        {"plane": ([2.0, 0.0, 0.0], [0.0, 1.0, 0.0])},  # not unit
        {"plane": "xy", "normal": [0.0, 0.0, 1.0]},
        {"normal": [0.0, 0.0, 0.0]},
        {"cycles": 1, "duration": 3.0},
        {"cycles": 0},
        {"duration": 1.0, "ramp_time": 0.6},  # shorter than two ramps
        {"ramp_time": -1.0},
        {"period": 0.0},
        {"half_width": -0.1},
        {"orientation": [0.0, 0.0, 0.0, 0.0]},
        {"orientation_axis": [0.0, 0.0, 0.0]},
        {"center": [0.0, 0.0]},
        {"site_space": ["a", "b"]},
    ],
)
def test_planar_trajectory_value_errors(overrides: dict[str, object]) -> None:
    kwargs: dict[str, object] = dict(half_width=0.1, period=2.0)
    center = overrides.pop("center", CENTER)
    kwargs.update(overrides)
    with pytest.raises(ValueError):
        FigureEightTrajectory("tool", center, **kwargs)  # type: ignore[arg-type]


def test_planar_options_object_equals_keywords_and_keywords_override_it() -> None:
    options = PlanarCurveOptions(plane="xz", ramp_time=0.5, cycles=2, orientation=DOWN)
    for make in (
        lambda **kw: CircleTrajectory("tool", CENTER, radius=0.08, period=3.0, **kw),
        lambda **kw: FigureEightTrajectory("tool", CENTER, half_width=0.1, period=3.0, **kw),
    ):
        from_options = make(options=options)
        from_keywords = make(plane="xz", ramp_time=0.5, cycles=2, orientation=DOWN)
        assert from_options.duration == pytest.approx(2 * 3.0 + 0.5)
        for t in np.linspace(0.0, from_options.duration, 23):
            for a, b in zip(
                site_sample(from_options, "tool", float(t)),
                site_sample(from_keywords, "tool", float(t)),
                strict=True,
            ):
                np.testing.assert_array_equal(a, b)
        overridden = make(options=options, cycles=1)
        assert overridden.duration == pytest.approx(3.0 + 0.5)
        np.testing.assert_array_equal(overridden.axes[1], [0.0, 0.0, 1.0])  # "xz" kept
    assert options.cycles == 2  # the options object is not changed


def test_planar_options_reject_unknown_keywords_and_other_objects() -> None:
    with pytest.raises(TypeError, match="radius_m"):
        CircleTrajectory("tool", CENTER, radius=0.1, period=2.0, radius_m=0.1)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="options"):
        CircleTrajectory("tool", CENTER, radius=0.1, period=2.0, options={"plane": "xy"})  # type: ignore[arg-type]
    fields = {field.name for field in dataclasses.fields(PlanarCurveOptions)}
    assert set(PlanarCurveChanges.__annotations__) == fields  # the keywords are the fields


def test_planar_sampling_clamps_to_the_window() -> None:
    traj = CircleTrajectory("tool", CENTER, radius=0.1, period=2.0, ramp_time=0.5)
    p0, _, v0, _ = site_sample(traj, "tool", -3.0)
    np.testing.assert_allclose(p0, site_sample(traj, "tool", 0.0)[0])
    np.testing.assert_allclose(v0, 0.0)
    p_end, _, _, _ = site_sample(traj, "tool", traj.duration + 3.0)
    np.testing.assert_allclose(p_end, site_sample(traj, "tool", traj.duration)[0])
    with pytest.raises(ValueError):
        traj.get_target_state(float("inf"))
