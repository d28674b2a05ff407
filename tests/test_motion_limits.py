"""Motion limits: the velocity box of MotionLimitFilter and the trajectory checker.

The filter's promise is checked the way a robot would check it: drive it with requests (random,
bang-bang, sign flips, huge values, pushes into the position limits), clip each request into
the box, integrate, and hand the commanded positions to ``check_trajectory`` at the controller
rate. Franka's published limits are the main case; other rates and limit sets follow.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pinkctl import load_pink_robot
from pinkctl.motion.check import LIMIT_KINDS, LimitReport, Violation, check_trajectory
from pinkctl.motion.filter import MotionLimitFilter
from pinkctl.motion.limits import MotionLimits

URDF_DIR = Path(__file__).parent / "urdf"

# Franka Panda, published joint-space limits (velocity, acceleration, jerk) and URDF ranges.
FRANKA_LOWER = [-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973]
FRANKA_UPPER = [2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973]
FRANKA_VELOCITY = [2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61]
FRANKA_ACCELERATION = [15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]
FRANKA_JERK = [7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0]


def _franka_limits() -> MotionLimits:
    try:
        from pinkctl import load_pink_supported_robot

        return MotionLimits.from_robot(load_pink_supported_robot("franka"))
    except (ImportError, FileNotFoundError):  # bundled robot not available
        return MotionLimits(
            joint_names=tuple(f"panda_joint{i}" for i in range(1, 8)),
            lower=FRANKA_LOWER,
            upper=FRANKA_UPPER,
            velocity=FRANKA_VELOCITY,
            acceleration=FRANKA_ACCELERATION,
            jerk=FRANKA_JERK,
        )


FRANKA = _franka_limits()


@pytest.fixture
def franka() -> MotionLimits:
    return FRANKA


def mid(limits: MotionLimits) -> np.ndarray:
    return 0.5 * (limits.lower + limits.upper)


def one_joint(
    *,
    lower: float = -1.0,
    upper: float = 1.0,
    velocity: float = 1.0,
    acceleration: float | None = None,
    jerk: float | None = None,
) -> MotionLimits:
    return MotionLimits(
        joint_names=("j",),
        lower=lower,
        upper=upper,
        velocity=velocity,
        acceleration=acceleration,
        jerk=jerk,
    )


class Run:
    """Commanded positions and the boxes seen while driving a filter."""

    def __init__(self, q0: np.ndarray, ticks: int) -> None:
        n = q0.size
        self.q = np.empty((ticks + 1, n))
        self.q[0] = q0
        self.v = np.empty((ticks, n))
        self.lower = np.empty((ticks, n))
        self.upper = np.empty((ticks, n))
        self.requested = np.empty((ticks, n))
        self.recovering = np.zeros(ticks, dtype=bool)


def drive(
    f: MotionLimitFilter,
    request: Callable[[int, MotionLimitFilter], np.ndarray],
    ticks: int,
) -> Run:
    """Clip ``request(k, f)`` into the box on every tick and send it."""
    run = Run(f.q, ticks)
    for k in range(ticks):
        lo, hi = f.bounds()
        run.lower[k], run.upper[k] = lo, hi
        run.recovering[k] = f.recovering
        d = request(k, f)
        run.requested[k] = d
        v = np.minimum(np.maximum(d, lo), hi)
        f.update(v)
        run.v[k] = v
        run.q[k + 1] = f.q
    return run


def adversarial(limits: MotionLimits, seed: int, max_hold: int = 1500) -> Callable:
    """Requests switching among random, held, bang-bang, sign-flip and huge patterns."""
    rng = np.random.default_rng(seed)
    n = limits.num_joints
    vel = limits.velocity
    state = {"mode": 0, "hold": 0, "req": np.zeros(n), "sign": np.ones(n)}

    def request(k: int, f: MotionLimitFilter) -> np.ndarray:
        if state["hold"] <= 0:
            state["mode"] = int(rng.integers(0, 7))
            state["hold"] = int(rng.integers(1, max_hold))
            state["req"] = rng.uniform(-2.0, 2.0, n) * vel
            state["sign"] = rng.choice([-1.0, 1.0], n)
        state["hold"] -= 1
        mode, sign = state["mode"], state["sign"]
        if mode == 0:  # white noise up to twice the velocity limit
            return rng.uniform(-2.0, 2.0, n) * vel
        if mode == 1:  # held request
            return state["req"]
        if mode == 2:  # toward a position limit at full speed
            return sign * 1e6
        if mode == 3:  # sign flip every tick at the velocity limit
            return sign * vel * (1.0 if k % 2 else -1.0)
        if mode == 4:  # huge bang-bang every 3 ticks
            return sign * 1e12 * (1.0 if (k // 3) % 2 else -1.0)
        if mode == 5:  # random bang-bang
            return np.where(rng.random(n) < 0.5, 1e3, -1e3)
        return np.zeros(n)  # stop

    return request


# ============================================================================================
# MotionLimits
# ============================================================================================


def test_limits_validate_and_broadcast():
    lim = MotionLimits(joint_names=["a", "b"], lower=[-1, -np.inf], upper=[1, np.inf], velocity=2.0)
    assert lim.joint_names == ("a", "b")
    assert lim.velocity.tolist() == [2.0, 2.0]
    assert lim.acceleration is None and lim.jerk is None
    assert lim.kinds == ("position", "velocity")
    assert lim.num_joints == 2
    with pytest.raises(ValueError):
        lim.velocity[0] = 3.0  # stored read-only
    with pytest.raises(ValueError, match="shape"):
        MotionLimits(joint_names=["a"], lower=[-1, -1], upper=1, velocity=1)
    with pytest.raises(ValueError, match="lower must be < upper"):
        MotionLimits(joint_names=["a"], lower=1, upper=1, velocity=1)
    with pytest.raises(ValueError, match="velocity"):
        MotionLimits(joint_names=["a"], lower=-1, upper=1, velocity=0)
    with pytest.raises(ValueError, match="velocity"):
        MotionLimits(joint_names=["a"], lower=-1, upper=1, velocity=np.inf)
    with pytest.raises(ValueError, match="NaN"):
        MotionLimits(joint_names=["a"], lower=np.nan, upper=1, velocity=1)
    with pytest.raises(ValueError, match="acceleration"):
        MotionLimits(joint_names=["a"], lower=-1, upper=1, velocity=1, acceleration=-2)
    with pytest.raises(ValueError, match="jerk limits need acceleration"):
        MotionLimits(joint_names=["a"], lower=-1, upper=1, velocity=1, jerk=10)
    with pytest.raises(ValueError, match="duplicates"):
        MotionLimits(joint_names=["a", "a"], lower=-1, upper=1, velocity=1)
    with pytest.raises(ValueError, match="cannot be"):
        MotionLimits(joint_names=["a"], lower=np.inf, upper=np.inf, velocity=1)


def test_limits_select_reorders(franka):
    sub = franka.select(["panda_joint7", "panda_joint2"])
    assert sub.joint_names == ("panda_joint7", "panda_joint2")
    assert sub.velocity.tolist() == [2.61, 2.175]
    assert sub.jerk is not None and sub.jerk.tolist() == [10000.0, 3750.0]
    with pytest.raises(ValueError, match="not in"):
        franka.select(["nope"])


def test_from_robot_reads_franka():
    from pinkctl import load_pink_supported_robot

    robot = load_pink_supported_robot("franka")
    lim = MotionLimits.from_robot(robot)
    assert lim.joint_names == tuple(robot.controlled_joint_names)
    np.testing.assert_allclose(lim.velocity, FRANKA_VELOCITY)
    assert lim.acceleration is not None and lim.jerk is not None
    np.testing.assert_allclose(lim.acceleration, FRANKA_ACCELERATION)
    np.testing.assert_allclose(lim.jerk, FRANKA_JERK)
    np.testing.assert_allclose(lim.lower, FRANKA_LOWER)
    np.testing.assert_allclose(lim.upper, FRANKA_UPPER)
    no_jerk = MotionLimits.from_robot(robot, use_jerk=False)
    assert no_jerk.acceleration is not None and no_jerk.jerk is None
    no_acc = MotionLimits.from_robot(robot, use_acceleration=False)
    assert no_acc.acceleration is None and no_acc.jerk is None
    two = MotionLimits.from_robot(robot, ["panda_joint4", "panda_joint1"])
    assert two.upper.tolist() == [FRANKA_UPPER[3], FRANKA_UPPER[0]]


def test_from_robot_continuous_and_mimic_joints():
    robot = load_pink_robot(URDF_DIR / "continuous_arm.urdf")
    lim = MotionLimits.from_robot(robot)
    idx = lim.joint_names.index("joint1")  # continuous: no position limits
    assert lim.lower[idx] == -np.inf and lim.upper[idx] == np.inf
    assert np.isfinite(lim.lower[lim.joint_names.index("joint2")])
    mimic = load_pink_robot(URDF_DIR / "mimic_gripper.urdf")
    with pytest.raises(ValueError, match="finger_joint2"):
        MotionLimits.from_robot(mimic, ["joint1", "finger_joint2"])
    with pytest.raises(ValueError, match="not in the model"):
        MotionLimits.from_robot(mimic, ["joint1", "nope"])


def test_from_robot_rejects_partial_acceleration_table():
    from pinkctl import load_pink_supported_robot

    robot = load_pink_supported_robot("franka")
    del robot.acceleration_limits["panda_joint3"]
    with pytest.raises(ValueError, match="panda_joint3"):
        MotionLimits.from_robot(robot)


# ============================================================================================
# Filter: soak with adversarial requests
# ============================================================================================


def test_franka_soak_1khz_has_no_violation(franka):
    """20000 ticks at 1 kHz of adversarial requests: all four Franka limit sets hold."""
    f = MotionLimitFilter(franka, 1e-3)
    f.reset(mid(franka))
    run = drive(f, adversarial(franka, seed=0), 20000)
    assert (run.lower <= run.upper).all()
    assert not run.recovering.any()
    report = check_trajectory(run.q, 1e-3, franka)
    assert report.ok, str(report)
    # The requests did drive every limit kind to saturation (not a vacuous pass).
    for kind in LIMIT_KINDS:
        assert report.max_ratio(kind) > 0.999, kind


@pytest.mark.parametrize("dt, seconds", [(1e-4, 3.0), (2e-3, 10.0), (1e-2, 30.0)])
def test_franka_soak_other_rates(franka, dt, seconds):
    f = MotionLimitFilter(franka, dt)
    f.reset(mid(franka))
    ticks = int(round(seconds / dt))
    run = drive(f, adversarial(franka, seed=1, max_hold=int(1.0 / dt)), ticks)
    assert not run.recovering.any()
    report = check_trajectory(run.q, dt, franka)
    assert report.ok, str(report)
    assert report.max_ratio("velocity") > 0.999


@pytest.mark.parametrize(
    "use_acceleration, use_jerk", [(True, False), (False, False)], ids=["no-jerk", "pos-vel"]
)
def test_soak_with_fewer_limit_kinds(use_acceleration, use_jerk):
    from pinkctl import load_pink_supported_robot

    robot = load_pink_supported_robot("franka")
    lim = MotionLimits.from_robot(robot, use_acceleration=use_acceleration, use_jerk=use_jerk)
    f = MotionLimitFilter(lim, 1e-3)
    f.reset(mid(lim))
    run = drive(f, adversarial(lim, seed=2), 6000)
    assert not run.recovering.any()
    report = check_trajectory(run.q, 1e-3, lim)
    assert report.ok, str(report)
    assert report.kinds == lim.kinds
    # The kinds left out are really not limited: the commands use more than the robot's.
    full = check_trajectory(run.q, 1e-3, FRANKA)
    missing = set(LIMIT_KINDS) - set(lim.kinds)
    assert all(full.counts()[kind] > 0 for kind in missing)


def test_continuous_joint_runs_unbounded():
    lim = MotionLimits(
        joint_names=("spin", "arm"),
        lower=[-np.inf, -1.0],
        upper=[np.inf, 1.0],
        velocity=[3.0, 1.0],
        acceleration=[10.0, 10.0],
        jerk=[1000.0, 1000.0],
    )
    f = MotionLimitFilter(lim, 1e-3)
    f.reset([0.0, 0.0])
    run = drive(f, lambda k, f: np.array([1e3, 1e3]), 5000)
    assert np.isfinite(run.lower).all() and np.isfinite(run.upper).all()
    assert run.q[-1, 0] > 3.0 * 4.0  # spins on at full speed
    assert run.v[-1, 0] == pytest.approx(3.0, rel=1e-5)
    assert 1.0 - 1e-3 < run.q[-1, 1] <= 1.0  # the other stops at its limit
    assert check_trajectory(run.q, 1e-3, lim).ok


# ============================================================================================
# Filter: starting outside the limits
# ============================================================================================


@pytest.mark.parametrize("side", [+1.0, -1.0], ids=["above", "below"])
@pytest.mark.parametrize("outward", [0.0, 0.5], ids=["at-rest", "moving-out"])
def test_start_outside_recovers_toward_the_range(franka, side, outward):
    """0.05 rad outside, possibly moving further out at half the velocity limit.

    The joint first brakes (as fast as the acceleration and jerk limits allow: its velocity
    points outward for about v0/A + A/J), then every command moves it toward the range, it is
    inside within 1 s, and it stays inside. Velocity, acceleration and jerk hold throughout.
    """
    dt = 1e-3
    v0 = side * outward * franka.velocity
    q0 = np.where(side > 0, franka.upper + 0.05, franka.lower - 0.05)
    f = MotionLimitFilter(franka, dt)
    f.reset(q0, v0)
    base = adversarial(franka, seed=3)

    def request(k: int, f: MotionLimitFilter) -> np.ndarray:
        if k % 7 == 0:
            return np.full(7, side * 1e3)  # push further out
        return base(k, f)

    run = drive(f, request, 1500)
    assert (run.lower <= run.upper).all()
    q = run.q
    outside = (q > franka.upper) | (q < franka.lower)
    first_inside = np.argmax(~outside, axis=0)
    assert (~outside).any(axis=0).all()
    assert (first_inside * dt <= 1.0).all(), first_inside * dt
    assert (first_inside * dt <= 0.4).all()  # Franka is back in about 0.3 s
    for j in range(franka.num_joints):
        assert not outside[first_inside[j] :, j].any(), "left the range again"
        steps = np.diff(q[: first_inside[j] + 1, j]) * side  # > 0: outward
        outward_ticks = np.flatnonzero(steps > 0)
        braking = 0 if outward_ticks.size == 0 else outward_ticks[-1] + 1
        bound = outward * franka.velocity[j] / franka.acceleration[j] + 2 * (
            franka.acceleration[j] / franka.jerk[j]
        )
        assert braking * dt <= bound + 3 * dt
        assert (steps[braking:] < 0).all(), "a command moved away from the range"
    report = check_trajectory(q, dt, franka, initial_velocity=v0)
    counts = report.counts()
    assert counts["velocity"] == counts["acceleration"] == counts["jerk"] == 0, str(report)
    assert counts["position"] == int(first_inside.sum())


def test_start_above_velocity_limit_slows_down(franka):
    f = MotionLimitFilter(franka, 1e-3)
    v0 = 1.2 * franka.velocity
    f.reset(mid(franka), v0)
    run = drive(f, lambda k, f: np.full(7, 1e9), 300)
    assert (run.lower <= run.upper).all()
    assert run.recovering[0]
    over = run.v > franka.velocity
    back = np.argmax(~over, axis=0)
    for j in range(7):
        assert (np.diff(np.r_[v0[j], run.v[: back[j], j]]) < 0).all()  # decelerates each tick
    report = check_trajectory(run.q, 1e-3, franka, initial_velocity=v0)
    assert report.counts()["acceleration"] == report.counts()["jerk"] == 0
    last_velocity_violation = max(v.tick for v in report.violations_of("velocity"))
    assert last_velocity_violation * 1e-3 < 0.1
    assert not run.recovering[150:].any()


def test_start_with_excess_acceleration_respects_jerk():
    lim = one_joint(velocity=2.0, acceleration=10.0, jerk=1000.0)
    f = MotionLimitFilter(lim, 1e-3)
    f.reset([0.0], [0.0], [30.0])  # |a| > A: the jerk limit still holds
    run = drive(f, lambda k, f: np.array([0.0]), 200)
    report = check_trajectory(run.q, 1e-3, lim, initial_velocity=0.0, initial_acceleration=30.0)
    assert report.counts()["jerk"] == 0
    assert report.counts()["acceleration"] > 0  # unavoidable while a ramps down
    assert max(v.tick for v in report.violations_of("acceleration")) <= 21


@pytest.mark.parametrize("at", ["upper", "lower"])
def test_rest_exactly_at_a_limit_moves_out_by_the_standoff_only(franka, at):
    q0 = getattr(franka, at)
    f = MotionLimitFilter(franka, 1e-3)
    f.reset(q0)
    run = drive(f, lambda k, f: np.zeros(7), 500)
    assert np.abs(run.q - q0).max() < 1e-4
    np.testing.assert_array_equal(run.v[-1], 0.0)
    assert run.recovering.sum() <= 2
    assert check_trajectory(run.q, 1e-3, franka).ok


def test_zero_request_brakes_from_full_speed_within_limits(franka):
    """What a controller sends when it has no solution: the command closest to standing still."""
    f = MotionLimitFilter(franka, 1e-3)
    f.reset(franka.lower + 0.3)
    first = drive(f, lambda k, f: np.full(7, 1e3), 300)
    assert (first.v[-1] > 0.9 * franka.velocity).all()
    second = drive(f, lambda k, f: np.zeros(7), 400)
    np.testing.assert_array_equal(second.v[-1], 0.0)
    stop = np.argmax(second.v == 0.0, axis=0)
    acc, jerk = franka.acceleration, franka.jerk
    assert acc is not None and jerk is not None
    assert (stop * 1e-3 <= first.v[-1] / acc + acc / jerk + 3e-3).all()  # time-optimal stop
    q = np.concatenate([first.q, second.q[1:]])
    assert check_trajectory(q, 1e-3, franka).ok


# ============================================================================================
# Filter: not overly conservative
# ============================================================================================


def test_sinusoid_inside_the_limits_passes_unchanged(franka):
    """A motion at most half of every limit is never clipped."""
    dt = 1e-3
    w = 2.0 * np.pi / 1.5  # rad/s
    amp = 0.5 * np.min(
        [
            franka.velocity / w,
            franka.acceleration / w**2,
            franka.jerk / w**3,
            0.5 * (franka.upper - franka.lower),
        ],
        axis=0,
    )
    k = np.arange(-3, 4001)
    q_des = mid(franka) + amp * np.sin(w * k[:, None] * dt)
    v_des = np.diff(q_des, axis=0) / dt
    a_des = np.diff(v_des, axis=0) / dt
    f = MotionLimitFilter(franka, dt)
    f.reset(q_des[3], v_des[2], a_des[1])
    run = drive(f, lambda i, f: v_des[i + 3], 4000)
    np.testing.assert_array_equal(run.v, run.requested)
    assert (run.lower < run.requested).all() and (run.requested < run.upper).all()
    np.testing.assert_allclose(run.q, q_des[3:], atol=1e-10)


def test_step_request_reaches_max_velocity_in_minimum_time(franka):
    f = MotionLimitFilter(franka, 1e-3)
    f.reset(franka.lower + 0.3)
    run = drive(f, lambda k, f: np.full(7, 1e3), 1000)
    vel, acc, jerk = franka.velocity, franka.acceleration, franka.jerk
    assert acc is not None and jerk is not None
    reached = np.argmax(run.v >= vel * (1.0 - 1e-5), axis=0)
    assert (run.v.max(axis=0) >= vel * (1.0 - 1e-5)).all()
    ideal = vel / acc + acc / jerk  # time-optimal jerk-limited ramp to full speed
    assert ((reached + 1) * 1e-3 <= ideal + 2e-3).all(), (reached, ideal)


def test_braking_into_a_limit_is_close_to_time_optimal(franka):
    """From full speed, the joint stops near its limit; the braking distance is within 1.5 %
    of the continuous-time optimum ``V²/(2A) + V A/(2J)``."""
    f = MotionLimitFilter(franka, 1e-3)
    f.reset(franka.lower + 0.3)
    run = drive(f, lambda k, f: np.full(7, 1e3), 4000)
    vel, acc, jerk = franka.velocity, franka.acceleration, franka.jerk
    assert acc is not None and jerk is not None
    rest = franka.upper - run.q[-1]
    assert (rest > 0).all() and (rest < 1e-4).all(), rest
    assert np.abs(run.v[-1]).max() < 1e-9
    for j in range(7):
        cruise = np.flatnonzero(run.v[:, j] >= vel[j] * (1.0 - 1e-5))[-1]
        distance = run.q[-1, j] - run.q[cruise + 1, j]
        optimum = vel[j] ** 2 / (2 * acc[j]) + vel[j] * acc[j] / (2 * jerk[j])
        assert distance == pytest.approx(optimum, rel=0.015)


# ============================================================================================
# Filter: property test
# ============================================================================================

segments = st.lists(
    st.tuples(
        st.lists(
            st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False), min_size=3, max_size=3
        ),
        st.integers(1, 400),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    segments=segments,
    start=st.lists(st.floats(0.1, 0.9), min_size=3, max_size=3),
    dt=st.sampled_from([1e-3, 2e-3, 5e-3, 2e-4]),
    vel=st.floats(0.2, 4.0),
    ramp=st.floats(0.02, 1.0),  # V / A [s]
    jerk_time=st.floats(5e-4, 0.05),  # A / J [s]
    span=st.floats(0.2, 6.0),
)
def test_any_request_sequence_keeps_all_limits(segments, start, dt, vel, ramp, jerk_time, span):
    """Any finite requests, any realistic limits and rate: no violation, never recovering."""
    acc = vel / ramp
    lim = MotionLimits(
        joint_names=("a", "b", "c"),
        lower=[-span / 2, 0.0, -span],
        upper=[span / 2, span, 0.0],
        velocity=[vel, 2 * vel, vel],
        acceleration=[acc, acc, 2 * acc],
        jerk=[acc / jerk_time, 2 * acc / jerk_time, acc / jerk_time],
    )
    f = MotionLimitFilter(lim, dt)
    f.reset(lim.lower + np.asarray(start) * (lim.upper - lim.lower))
    plan = np.concatenate([np.tile(np.asarray(v), (n, 1)) for v, n in segments])
    run = drive(f, lambda k, f: plan[k], plan.shape[0])
    assert not run.recovering.any()
    assert (run.lower <= run.upper).all()
    report = check_trajectory(run.q, dt, lim)
    assert report.ok, str(report)


# ============================================================================================
# Filter: API
# ============================================================================================


def test_filter_state_matches_the_checker(franka):
    f = MotionLimitFilter(franka, 1e-3)
    f.reset(mid(franka), 0.1 * franka.velocity, np.ones(7))
    run = drive(f, adversarial(franka, seed=5), 50)
    v = np.diff(run.q, axis=0) / 1e-3
    np.testing.assert_array_equal(f.q, run.q[-1])
    np.testing.assert_array_equal(f.v, v[-1])
    np.testing.assert_array_equal(f.a, (v[-1] - v[-2]) / 1e-3)
    np.testing.assert_array_equal(f.next_position(run.v[-1]), run.q[-1] + run.v[-1] * 1e-3)


def test_filter_rejects_bad_input_and_stays_unchanged(franka):
    with pytest.raises(ValueError, match="dt"):
        MotionLimitFilter(franka, 0.0)
    with pytest.raises(ValueError, match="margin"):
        MotionLimitFilter(franka, 1e-3, margin=-1.0)
    with pytest.raises(ValueError, match="MotionLimits"):
        MotionLimitFilter("franka", 1e-3)  # type: ignore[arg-type]
    f = MotionLimitFilter(franka, 1e-3)
    with pytest.raises(RuntimeError, match="reset"):
        f.bounds()
    with pytest.raises(RuntimeError, match="reset"):
        f.update(np.zeros(7))
    f.reset(mid(franka))
    f.step(np.full(7, 1.0))
    before = (f.q, f.v, f.a, *f.bounds())
    with pytest.raises(ValueError, match="shape"):
        f.update(np.zeros(6))
    with pytest.raises(ValueError, match="finite"):
        f.update(np.r_[np.zeros(6), np.nan])
    with pytest.raises(ValueError, match="finite"):
        f.reset(np.r_[mid(franka)[:6], np.inf])
    with pytest.raises(ValueError, match="shape"):
        f.reset(mid(franka), np.zeros(3))
    after = (f.q, f.v, f.a, *f.bounds())
    for x, y in zip(before, after):
        np.testing.assert_array_equal(x, y)


def test_bounds_returns_fresh_arrays(franka):
    f = MotionLimitFilter(franka, 1e-3)
    f.reset(mid(franka))
    lo, hi = f.bounds()
    lo[:] = 5.0
    hi[:] = -5.0
    lo2, hi2 = f.bounds()
    assert (lo2 < 0).all() and (hi2 > 0).all()
    # From rest, the first command is limited by the jerk: |v| <= J dt².
    np.testing.assert_allclose(hi2, FRANKA_JERK * np.array(1e-6) * (1 - 1e-6))


def test_margin_keeps_an_exactly_saturated_run_reportable_as_clean():
    lim = one_joint(velocity=1.0, acceleration=10.0, jerk=1000.0)
    f = MotionLimitFilter(lim, 1e-3, margin=0.0)
    f.reset([0.0])
    run = drive(f, lambda k, f: np.array([1e3]), 3000)
    report = check_trajectory(run.q, 1e-3, lim)
    assert report.ok, str(report)
    assert report.max_ratio("velocity") == pytest.approx(1.0, abs=1e-12)


# ============================================================================================
# Checker
# ============================================================================================


def positions_from_velocities(v: np.ndarray, dt: float, q0: float = 0.0) -> np.ndarray:
    return q0 + np.concatenate([[0.0], np.cumsum(v) * dt])[:, None]


def test_checker_finds_planted_position_violation():
    lim = one_joint(lower=-1.0, upper=1.0, velocity=1e6)
    q = np.zeros((50, 1))
    q[17, 0] = 1.25
    q[30, 0] = -1.5
    report = check_trajectory(q, 0.01, lim)
    pos = report.violations_of("position")
    assert [(v.tick, v.limit) for v in pos] == [(17, 1.0), (30, -1.0)]
    assert pos[0].excess == pytest.approx(0.25) and pos[1].excess == pytest.approx(0.5)
    assert pos[0].time == pytest.approx(0.17) and pos[0].joint == "j"
    assert pos[1].value == -1.5
    assert report.counts() == {"position": 2, "velocity": 0}
    assert not report.ok


def test_checker_finds_planted_velocity_violation():
    dt = 1e-3
    lim = one_joint(lower=-10, upper=10, velocity=2.0)
    v = np.zeros(100)
    v[41] = -2.3  # one tick too fast, at sample 42
    report = check_trajectory(positions_from_velocities(v, dt), dt, lim)
    (viol,) = report.violations
    assert (viol.kind, viol.tick, viol.limit) == ("velocity", 42, -2.0)
    assert viol.excess == pytest.approx(0.3, rel=1e-9)
    assert report.max_ratio("velocity") == pytest.approx(1.15)


def test_checker_finds_planted_acceleration_violation():
    dt = 1e-3
    lim = one_joint(lower=-10, upper=10, velocity=10.0, acceleration=5.0)
    a = np.zeros(200)
    a[60:70] = 5.0
    a[120] = 5.5
    a[121] = -5.5
    v = np.cumsum(a) * dt
    report = check_trajectory(positions_from_velocities(v, dt), dt, lim)
    acc = report.violations_of("acceleration")
    assert [x.tick for x in acc] == [121, 122]
    assert [x.limit for x in acc] == [5.0, -5.0]
    np.testing.assert_allclose([x.excess for x in acc], [0.5, 0.5], rtol=1e-6)
    assert report.counts() == {"position": 0, "velocity": 0, "acceleration": 2}


def test_checker_finds_planted_jerk_violation():
    dt = 1e-3
    lim = one_joint(lower=-10, upper=10, velocity=10.0, acceleration=100.0, jerk=1000.0)
    j = np.zeros(300)
    j[100:110] = 1000.0  # at the limit: not reported
    j[110:120] = -1000.0
    j[200] = 1200.0
    j[201] = -1200.0
    a = np.cumsum(j) * dt
    v = np.cumsum(a) * dt
    report = check_trajectory(positions_from_velocities(v, dt), dt, lim)
    jerk = report.violations_of("jerk")
    assert [(x.tick, x.limit) for x in jerk] == [(201, 1000.0), (202, -1000.0)]
    np.testing.assert_allclose([x.excess for x in jerk], [200.0, 200.0], rtol=1e-5)
    assert report.counts()["acceleration"] == 0
    assert report.max_ratio("jerk") == pytest.approx(1.2, rel=1e-5)


def test_checker_tolerance():
    dt = 1e-3
    lim = one_joint(lower=-100, upper=100, velocity=2.0)
    exact = np.arange(2001)[:, None] * (2.0 * dt) + 3.0  # |q| up to 7: rounding in every step
    assert check_trajectory(exact, dt, lim, initial_velocity=2.0).ok
    over = exact.copy()
    over[1000:] += 2e-8 * dt  # v_1000 = 2 + 2e-8: 1e-8 relative, above rtol
    report = check_trajectory(over, dt, lim, initial_velocity=2.0)
    assert [v.tick for v in report.violations] == [1000]
    assert report.violations[0].excess == pytest.approx(2e-8, rel=1e-3)
    assert check_trajectory(over, dt, lim, initial_velocity=2.0, rtol=1e-7).ok
    # atol replaces the float floor.
    assert not check_trajectory(exact, dt, lim, initial_velocity=2.0, rtol=0.0, atol=0.0).ok


def test_checker_initial_state_and_skipping():
    dt = 1e-2
    lim = one_joint(lower=-10, upper=10, velocity=10.0, acceleration=10.0, jerk=100.0)
    q = (np.arange(100) * 0.05)[:, None]  # constant 5 rad/s from sample 0
    rest = check_trajectory(q, dt, lim)  # from rest: a jump at tick 1
    assert {(v.kind, v.tick) for v in rest.violations} == {
        ("acceleration", 1),
        ("jerk", 1),
        ("jerk", 2),
    }
    assert check_trajectory(q, dt, lim, initial_velocity=5.0).ok
    assert check_trajectory(q, dt, lim, initial_velocity=None).ok
    # Unknown acceleration history: acceleration from tick 1, jerk from tick 2.
    q2 = np.cumsum(np.r_[0.0, np.full(20, 0.05)])[:, None]
    report = check_trajectory(q2, dt, lim, initial_velocity=0.0, initial_acceleration=None)
    assert {(v.kind, v.tick) for v in report.violations} == {("acceleration", 1), ("jerk", 2)}
    # The initial velocity itself is checked at tick 0.
    fast = check_trajectory(q, dt, lim, initial_velocity=12.0)
    assert ("velocity", 0) in {(v.kind, v.tick) for v in fast.violations}


def test_checker_report_formatting(franka):
    q = np.tile(mid(franka), (10, 1))
    q[4, 2] = franka.upper[2] + 0.1
    report = check_trajectory(q, 1e-3, franka, t0=2.0)
    assert isinstance(report, LimitReport)
    assert report.num_samples == 10 and report.kinds == LIMIT_KINDS
    first = report.violations[0]
    assert isinstance(first, Violation)
    assert (first.joint, first.kind, first.tick) == ("panda_joint3", "position", 4)
    assert first.time == pytest.approx(2.004)
    ticks = [v.tick for v in report.violations]
    assert ticks == sorted(ticks)
    rows = dict(report.summary_rows())
    assert set(rows) == {f"limit violations: {k}" for k in LIMIT_KINDS}
    assert rows["limit violations: position"].startswith("1 ")
    text = str(report)
    assert "VIOLATED" in text and "jerk" in text
    assert report.worst("velocity") is not None and report.worst("velocity").tick in (4, 5)
    pos_vel = MotionLimits(joint_names=("j",), lower=-1, upper=1, velocity=1)
    rows = dict(check_trajectory(np.zeros((3, 1)), 1e-3, pos_vel).summary_rows())
    assert rows["limit violations: jerk"].startswith("not checked")
    with pytest.raises(ValueError, match="kind"):
        report.max_ratio("speed")


def test_checker_rejects_bad_input(franka):
    with pytest.raises(ValueError, match="shape"):
        check_trajectory(np.zeros((5, 6)), 1e-3, franka)
    with pytest.raises(ValueError, match="finite"):
        check_trajectory(np.full((5, 7), np.nan), 1e-3, franka)
    with pytest.raises(ValueError, match="dt"):
        check_trajectory(np.zeros((5, 7)), -1.0, franka)
    with pytest.raises(ValueError, match="initial_velocity"):
        check_trajectory(np.zeros((5, 7)), 1e-3, franka, initial_velocity=[1.0, 2.0])
