"""The compiled QP (pinkctl.qp.compile_qp) solves exactly pink's differential-IK problem.

Over random configurations, targets and mixes of pink tasks, limits and barriers, on several
robots (example-robot-data Panda with and without its fingers controlled, in a permuted
subset, on a floating base, parsed with mimic joints, with primitive collision geometry; UR10;
the test URDFs with a mimic gripper and a continuous joint; the bundled robots):

- the assembled QP equals pink's ``build_ik`` restricted to the controlled columns;
- ``CompiledQP.solve`` equals ``reference_solve_ik`` (exact solvers: to 1e-8 rad/s);
- ``reference_solve_ik`` equals ``pink.solve_ik`` when every coordinate is controlled;
- OSQP / ProxQP (approximate) stay within 1e-4 rad/s and inside the position limits;
- a 2000-tick tracking run follows the same joint path as ``pink.solve_ik``;
- infeasible problems raise ``QPSolveError`` with a reason; bad arguments ``ValueError``.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pink
import pinocchio as pin
import pytest
from pink.barriers import BodySphericalBarrier, PositionBarrier, SelfCollisionBarrier
from pink.limits import (
    AccelerationLimit,
    ConfigurationLimit,
    FloatingBaseVelocityLimit,
    Limit,
    VelocityLimit,
)
from pink.tasks import (
    ComTask,
    DampingTask,
    FrameTask,
    JointCouplingTask,
    JointVelocityTask,
    LowAccelerationTask,
    PostureTask,
    RelativeFrameTask,
)

from pinkctl.qp import (
    CompiledQP,
    QPSolveError,
    SolverChain,
    available_solvers,
    compile_qp,
    reference_solve_ik,
)
from pinkctl.qp.solvers import qpsolvers_options

DT = 5e-3
EXACT_TOL = 1e-8  # [rad/s] daqp / quadprog against the reference
CLARABEL_TOL = 1e-7  # [rad/s] interior point with tight tolerances
APPROX_TOL = 1e-4  # [rad/s] osqp / proxqp
TESTS_DIR = Path(__file__).resolve().parent

logging.getLogger().setLevel(logging.ERROR)  # pink warns when safety_break=False


# --------------------------------------------------------------------------- robots


def erd_robots_dir() -> Path:
    """example-robot-data's ``robots`` folder (a test-only dependency, via its cmeel prefix)."""
    try:  # older example-robot-data ships a Python module
        import example_robot_data  # type: ignore[import-not-found]  # noqa: PLC0415

        return Path(example_robot_data.getModelPath("panda_description/urdf/panda.urdf")) / (
            "robots"
        )
    except (ImportError, AttributeError, ValueError):
        prefix = Path(pin.__file__).resolve().parents[4]  # <prefix>/lib/pythonX.Y/site-packages
        return prefix / "share" / "example-robot-data" / "robots"


class Robot:
    """A test robot: model, controlled tangent indices, frames used by the tasks."""

    def __init__(
        self,
        name: str,
        model: pin.Model,
        controlled: list[int],
        ee: str,
        root: str,
        collision_model: pin.GeometryModel | None = None,
        coupled: tuple[str, str] | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.controlled = controlled
        self.ee = ee
        self.root = root
        self.collision_model = collision_model
        self.coupled = coupled

    def __repr__(self) -> str:
        return self.name

    def configuration(self, q: np.ndarray) -> pink.Configuration:
        if self.collision_model is None:
            return pink.Configuration(self.model, self.model.createData(), q)
        return pink.Configuration(
            self.model,
            self.model.createData(),
            q,
            collision_model=self.collision_model,
            collision_data=pin.GeometryData(self.collision_model),
        )

    def random_q(self, rng: np.random.Generator, margin: float = 0.05) -> np.ndarray:
        lower = self.model.lowerPositionLimit.copy()
        upper = self.model.upperPositionLimit.copy()
        finite = (lower > -1e10) & (upper < 1e10) & (upper > lower)
        span = np.where(finite, upper, 0.0) - np.where(finite, lower, 0.0)
        lower[finite] += margin * span[finite]
        upper[finite] -= margin * span[finite]
        pin.seed(int(rng.integers(2**31)))
        return pin.randomConfiguration(self.model, lower, upper)


def _panda_paths() -> tuple[Path, Path, Path]:
    base = erd_robots_dir() / "panda_description"
    return base / "urdf" / "panda.urdf", base / "urdf" / "panda_collision.urdf", base


def _build_robots() -> dict[str, Robot]:
    panda_urdf, panda_collision_urdf, panda_dir = _panda_paths()
    robots: dict[str, Robot] = {}
    panda = pin.buildModelFromUrdf(str(panda_urdf))
    coupled = ("panda_joint1", "panda_joint3")
    robots["panda_arm"] = Robot(
        "panda_arm", panda, list(range(7)), "panda_hand_tcp", "panda_link2", coupled=coupled
    )
    robots["panda_all"] = Robot(
        "panda_all", panda, list(range(9)), "panda_hand_tcp", "panda_link2", coupled=coupled
    )
    robots["panda_perm"] = Robot(
        "panda_perm", panda, [6, 0, 3, 1, 2], "panda_hand_tcp", "panda_link2", coupled=coupled
    )
    mimic = pin.buildModelFromUrdf(str(panda_urdf), mimic=True)
    robots["panda_mimic"] = Robot(
        "panda_mimic", mimic, list(range(mimic.nv)), "panda_hand_tcp", "panda_link3"
    )
    floating = pin.buildModelFromUrdf(str(panda_urdf), pin.JointModelFreeFlyer())
    floating.lowerPositionLimit[:3] = -0.5  # a box for sampling the base position
    floating.upperPositionLimit[:3] = 0.5
    robots["panda_floating"] = Robot(
        "panda_floating", floating, list(range(floating.nv)), "panda_hand_tcp", "panda_link2"
    )
    robots["panda_floating_arm"] = Robot(
        "panda_floating_arm", floating, list(range(6, 13)), "panda_hand_tcp", "panda_link2"
    )
    ur10 = pin.buildModelFromUrdf(
        str(erd_robots_dir() / "ur_description" / "urdf" / "ur10_robot.urdf")
    )
    robots["ur10"] = Robot("ur10", ur10, list(range(6)), "tool0", "upper_arm_link")
    gripper_urdf = TESTS_DIR / "urdf" / "mimic_gripper.urdf"
    if gripper_urdf.exists():
        gripper = pin.buildModelFromUrdf(str(gripper_urdf), mimic=True)
        robots["mimic_gripper"] = Robot(
            "mimic_gripper", gripper, list(range(gripper.nv)), "tool", "link2"
        )
    continuous_urdf = TESTS_DIR / "urdf" / "continuous_arm.urdf"
    if continuous_urdf.exists():
        arm = pin.buildModelFromUrdf(str(continuous_urdf))
        robots["continuous_arm"] = Robot(
            "continuous_arm", arm, [0, 2], arm.frames[arm.nframes - 1].name, "link2"
        )
    # Panda with primitive collision geometry, for the self-collision barrier.
    model = pin.buildModelFromUrdf(str(panda_collision_urdf))
    collision_model = pin.buildGeomFromUrdf(
        model,
        str(panda_collision_urdf),
        pin.GeometryType.COLLISION,
        package_dirs=[str(erd_robots_dir().parents[1])],
    )
    collision_model.addAllCollisionPairs()
    pin.removeCollisionPairs(model, collision_model, str(panda_dir / "srdf" / "panda.srdf"))
    robots["panda_collision"] = Robot(
        "panda_collision",
        model,
        list(range(7)),
        "panda_hand_tcp",
        "panda_link2",
        collision_model=collision_model,
    )
    return robots


ROBOTS = _build_robots()
EXACT_SOLVERS = [s for s in ("box", "daqp", "quadprog", "clarabel") if s in available_solvers()]
APPROX_SOLVERS = [s for s in ("osqp", "proxqp") if s in available_solvers()]


# --------------------------------------------------------------------------- scenarios


class ScaledErrorFrameTask(FrameTask):
    """A FrameTask subclass overriding ``compute_error``: must go through the fallback."""

    def compute_error(self, configuration: Any) -> np.ndarray:
        return 0.5 * super().compute_error(configuration)


class SumVelocityLimit(Limit):
    """An unknown limit: ``|dq_0 + dq_1| <= dt * bound`` (general rows, fallback path)."""

    def __init__(self, nv: int, bound: float) -> None:
        self.nv = nv
        self.bound = bound

    def compute_qp_inequalities(self, configuration: Any, dt: float) -> Any:
        row = np.zeros(self.nv)
        row[:2] = 1.0
        return np.vstack([row, -row]), np.full(2, dt * self.bound)


class HalvedConfigurationLimit(ConfigurationLimit):
    """A ConfigurationLimit subclass overriding its inequalities: must not become a box."""

    def compute_qp_inequalities(self, configuration: Any, dt: float) -> Any:
        G, h = super().compute_qp_inequalities(configuration, dt)
        return G, 0.5 * h


class LooserPositionBarrier(PositionBarrier):
    """A barrier subclass overriding ``compute_qp_inequalities``: must use its own methods."""

    def compute_qp_inequalities(self, configuration: Any, dt: float = 1e-3) -> Any:
        G, h = super().compute_qp_inequalities(configuration, dt)
        return G, 2.0 * h


def _random_pose(robot: Robot, rng: np.random.Generator) -> pin.SE3:
    configuration = robot.configuration(robot.random_q(rng, margin=0.1))
    pose = configuration.get_transform_frame_to_world(robot.ee)
    pose.translation += rng.normal(scale=0.02, size=3)
    return pose


def make_tasks(robot: Robot, configuration: Any, rng: np.random.Generator) -> list[Any]:
    """A random mix of tasks, always with a posture or damping term (strictly convex QP)."""
    tasks: list[Any] = []
    scalar = bool(rng.integers(2))
    position_cost: Any = float(rng.uniform(0.5, 2.0)) if scalar else rng.uniform(0.1, 2.0, 3)
    orientation_cost: Any = float(rng.uniform(0.1, 1.0)) if scalar else rng.uniform(0.1, 1.0, 3)
    frame = FrameTask(
        robot.ee,
        position_cost=position_cost,
        orientation_cost=orientation_cost,
        lm_damping=float(rng.choice([0.0, 1e-3, 1.0])),
        gain=float(rng.choice([1.0, 0.7])),
    )
    frame.set_target(_random_pose(robot, rng))
    tasks.append(frame)
    posture = PostureTask(
        cost=float(rng.uniform(1e-3, 1e-1)), lm_damping=float(rng.choice([0.0, 0.5]))
    )
    posture.gain = float(rng.choice([1.0, 0.5]))
    posture.set_target(robot.random_q(rng))
    tasks.append(posture)
    root_nv = robot.model.nv - posture.compute_jacobian(configuration).shape[0]
    if rng.random() < 0.3:  # a per-joint cost vector
        posture.cost = rng.uniform(1e-3, 1e-1, robot.model.nv - root_nv)
    if rng.random() < 0.5:
        tasks.append(DampingTask(cost=float(rng.uniform(1e-3, 1e-1))))
    if root_nv == 0 and rng.random() < 0.3:  # pink's error has size nv: fixed base only
        low_acceleration = LowAccelerationTask(cost=float(rng.uniform(1e-3, 1e-1)))
        low_acceleration.set_last_integration(rng.normal(scale=0.2, size=robot.model.nv), DT)
        tasks.append(low_acceleration)
    if rng.random() < 0.3:
        joint_velocity = JointVelocityTask(cost=float(rng.uniform(1e-3, 1e-1)))
        joint_velocity.set_target(rng.normal(scale=0.3, size=robot.model.nv - root_nv), DT)
        tasks.append(joint_velocity)
    if rng.random() < 0.5:
        relative = RelativeFrameTask(
            robot.ee,
            robot.root,
            position_cost=float(rng.uniform(0.1, 1.0)),
            orientation_cost=rng.uniform(0.1, 1.0, 3),
            lm_damping=float(rng.choice([0.0, 0.1])),
        )
        relative.set_target(
            configuration.get_transform(robot.ee, robot.root)
            * pin.exp6(pin.Motion(rng.normal(scale=0.05, size=6)))
        )
        tasks.append(relative)
    if rng.random() < 0.4:  # unknown task: pink's own objective (fallback)
        com = ComTask(cost=float(rng.uniform(0.1, 1.0)))
        com.set_target(pin.centerOfMass(robot.model, robot.model.createData(), configuration.q))
        com.target_com = com.target_com + rng.normal(scale=0.01, size=3)
        tasks.append(com)
    if robot.coupled is not None and rng.random() < 0.4:
        tasks.append(JointCouplingTask(list(robot.coupled), [1.0, -1.0], 0.1, configuration))
    if rng.random() < 0.3:  # subclass overriding compute_error: fallback
        scaled = ScaledErrorFrameTask(robot.ee, position_cost=1.0, orientation_cost=0.5)
        scaled.set_target(_random_pose(robot, rng))
        tasks.append(scaled)
    return tasks


def make_limits(robot: Robot, rng: np.random.Generator) -> list[Any]:
    model = robot.model
    limits: list[Any] = []
    if rng.random() < 0.85:
        limits.append(ConfigurationLimit(model, config_limit_gain=float(rng.uniform(0.2, 1.0))))
    if rng.random() < 0.85:
        limits.append(VelocityLimit(model))
    if rng.random() < 0.4:
        acceleration = AccelerationLimit(model, np.full(model.nv, float(rng.uniform(5.0, 50.0))))
        v_prev = rng.uniform(-0.3, 0.3, model.nv) * np.minimum(model.velocityLimit, 1.0)
        acceleration.set_last_integration(v_prev, DT)
        limits.append(acceleration)
    if rng.random() < 0.2:
        limits.append(SumVelocityLimit(model.nv, 1.5))
    if model.existJointName("root_joint") and rng.random() < 0.6:
        limits.append(FloatingBaseVelocityLimit(model, None, 0.5, 1.0))
    if rng.random() < 0.15:
        limits.append(HalvedConfigurationLimit(model))
    return limits


def make_barriers(robot: Robot, configuration: Any, rng: np.random.Generator) -> list[Any]:
    barriers: list[Any] = []
    if rng.random() < 0.4:
        position = configuration.get_transform_frame_to_world(robot.ee).translation
        barriers.append(
            PositionBarrier(
                robot.ee,
                indices=[0, 2],
                p_min=position[[0, 2]] - rng.uniform(0.01, 0.2, 2),
                p_max=position[[0, 2]] + rng.uniform(0.01, 0.2, 2),
                gain=float(rng.uniform(0.5, 5.0)),
                safe_displacement_gain=float(rng.choice([0.0, 0.5])),
            )
        )
    if rng.random() < 0.3:  # custom gain function (h / (1 + |h|)) and safe displacement
        barriers.append(BodySphericalBarrier((robot.ee, robot.root), d_min=0.02, gain=2.0))
    if rng.random() < 0.2:  # subclass overriding its inequalities: fallback path
        position = configuration.get_transform_frame_to_world(robot.ee).translation
        barriers.append(LooserPositionBarrier(robot.ee, indices=[1], p_max=position[[1]] + 0.1))
    if robot.collision_model is not None:
        n_pairs = int(rng.choice([1, 5, len(robot.collision_model.collisionPairs)]))
        barriers.append(
            SelfCollisionBarrier(
                n_collision_pairs=n_pairs,
                gain=float(rng.uniform(0.5, 2.0)),
                safe_displacement_gain=float(rng.choice([0.0, 1.0])),
                d_min=0.01,
            )
        )
    return barriers


def tangent(qp: CompiledQP, v: np.ndarray) -> np.ndarray:
    """The velocity of the QP variables spread over the tangent space (zero where held): the
    shape pink's ``solve_ik`` returns."""
    full = np.zeros(qp.model.nv)
    full[qp.controlled_v_indices] = v
    return full


def both_or_neither(
    fast: Callable[[], np.ndarray], reference: Callable[[], np.ndarray]
) -> tuple[np.ndarray, np.ndarray] | None:
    """Run both; if the reference finds no solution the fast path must fail too."""
    try:
        v_ref = reference()
    except QPSolveError:
        with pytest.raises(QPSolveError):
            fast()
        return None
    return fast(), v_ref


def _cases(robot_names: list[str], n: int) -> list[tuple[str, int]]:
    return [(name, seed) for name in robot_names for seed in range(n)]


ALL_ROBOTS = list(ROBOTS)


# --------------------------------------------------------------------------- assembly


def _pink_box_and_rows(
    G: np.ndarray, h: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split restricted pink rows into simple bounds (one +-1 entry) and general rows."""
    lb = np.full(n, -np.inf)
    ub = np.full(n, np.inf)
    general = []
    for row, value in zip(G, h):
        nonzero = np.flatnonzero(row)
        if nonzero.size == 1 and abs(row[nonzero[0]]) == 1.0:
            j = nonzero[0]
            if row[j] > 0:
                ub[j] = min(ub[j], value)
            else:
                lb[j] = max(lb[j], -value)
        else:
            general.append(np.append(row, value))
    rows = np.array(general).reshape(-1, n + 1)
    return lb, ub, rows[:, :n], rows[:, n]


def assert_same_rows(G: np.ndarray, h: np.ndarray, G_ref: np.ndarray, h_ref: np.ndarray) -> None:
    """The rows ``[G h]`` equal the rows ``[G_ref h_ref]`` up to order (1e-12 relative)."""
    ours = np.column_stack([G, h]) if G.shape[0] else np.zeros((0, G.shape[1] + 1))
    theirs = np.column_stack([G_ref, h_ref]) if G_ref.shape[0] else np.zeros_like(ours[:0])
    assert ours.shape == theirs.shape
    unmatched = list(range(theirs.shape[0]))
    for row in ours:
        scale = 1.0 + np.abs(row).max()
        distances = [np.abs(theirs[j] - row).max() / scale for j in unmatched]
        best = int(np.argmin(distances))
        assert distances[best] < 1e-12, f"row {row} has no match (closest {distances[best]})"
        unmatched.pop(best)


@pytest.mark.parametrize(("robot_name", "seed"), _cases(ALL_ROBOTS, 8))
def test_assembled_problem_equals_pink_build_ik(robot_name: str, seed: int) -> None:
    robot = ROBOTS[robot_name]
    rng = np.random.default_rng(1000 + seed)
    configuration = robot.configuration(robot.random_q(rng))
    tasks = make_tasks(robot, configuration, rng)
    limits = make_limits(robot, rng)
    barriers = make_barriers(robot, configuration, rng)
    damping = float(rng.choice([1e-12, 1e-3]))
    qp = compile_qp(
        robot.model,
        robot.controlled,
        tasks=tasks,
        limits=limits,
        barriers=barriers,
        damping=damping,
    )
    problem = qp.build(configuration, DT)
    pink_problem = pink.build_ik(
        configuration, tasks, DT, damping=damping, limits=limits, barriers=barriers
    )
    c = np.asarray(robot.controlled)
    np.testing.assert_allclose(problem.H, pink_problem.P[np.ix_(c, c)], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(problem.c, pink_problem.q[c], rtol=1e-11, atol=1e-13)
    n = c.size
    if pink_problem.G is None:
        assert problem.G.shape == (0, n)
        assert np.all(np.isinf(problem.lb)) and np.all(np.isinf(problem.ub))
        return
    G = pink_problem.G[:, c]
    involved = np.any(G != 0.0, axis=1) | ~np.any(pink_problem.G != 0.0, axis=1)
    lb, ub, G_rows, h_rows = _pink_box_and_rows(G[involved], pink_problem.h[involved], n)
    # Same split on our rows (limits of unknown classes stay rows), then the same feasible set.
    our_lb, our_ub, our_G, our_h = _pink_box_and_rows(problem.G, problem.h, n)
    np.testing.assert_allclose(np.maximum(problem.lb, our_lb), lb, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.minimum(problem.ub, our_ub), ub, rtol=1e-12, atol=1e-15)
    assert_same_rows(our_G, our_h, G_rows, h_rows)
    # The views are read-only.
    with pytest.raises(ValueError):
        problem.H[0, 0] = 1.0


# --------------------------------------------------------------------------- the fused case

#: Robots on which frame + posture + configuration/velocity limits is assembled in one pass
#: (the controlled coordinates are bounded posture rows, in model order). A floating base, an
#: unbounded joint or a permuted subset (panda_perm) take the generic path.
FUSED_ROBOTS = ["panda_arm", "panda_all", "panda_mimic", "ur10"]


def _fused_case(robot: Robot, rng: np.random.Generator) -> tuple[Any, list[Any], list[Any]]:
    """Frame + posture tasks with random parameters and pink's two default limits."""
    configuration = robot.configuration(robot.random_q(rng))
    scalar = bool(rng.integers(2))
    frame = FrameTask(
        robot.ee,
        position_cost=float(rng.uniform(0.5, 2.0)) if scalar else rng.uniform(0.1, 2.0, 3),
        orientation_cost=float(rng.uniform(0.1, 1.0)) if scalar else rng.uniform(0.1, 1.0, 3),
        gain=float(rng.choice([1.0, 0.3])),
    )
    frame.set_target(_random_pose(robot, rng))
    tasks: list[Any] = [frame]
    if rng.random() < 0.8:
        posture = PostureTask(cost=float(rng.uniform(1e-3, 1e-1)), gain=float(rng.choice([1, 0.5])))
        posture.set_target(robot.random_q(rng))
        tasks.append(posture)
    model = robot.model
    gain = float(rng.uniform(0.2, 1.0))
    return configuration, tasks, [ConfigurationLimit(model, gain), VelocityLimit(model)]


def _daqp_reference(robot: Robot, configuration: Any, tasks: Any, limits: Any) -> np.ndarray:
    """pink's build_ik + DAQP on the controlled joints (the reference velocity)."""
    return reference_solve_ik(
        configuration,
        tasks,
        DT,
        controlled_v_indices=robot.controlled,
        solver="daqp",
        limits=limits,
    )


@pytest.mark.parametrize(("robot_name", "seed"), _cases(FUSED_ROBOTS, 6))
def test_fused_problem_equals_pink_build_ik(robot_name: str, seed: int) -> None:
    robot = ROBOTS[robot_name]
    rng = np.random.default_rng(3000 + seed)
    configuration, tasks, limits = _fused_case(robot, rng)
    damping = float(rng.choice([1e-12, 1e-3]))
    qp = compile_qp(robot.model, robot.controlled, tasks=tasks, limits=limits, damping=damping)
    assert qp.fused  # this test is about the one-pass assembly
    for _ in range(2):  # the second tick reuses the compiled pass
        problem = qp.build(configuration, DT)
        pink_problem = pink.build_ik(configuration, tasks, DT, damping=damping, limits=limits)
        c = np.asarray(robot.controlled)
        np.testing.assert_allclose(problem.H, pink_problem.P[np.ix_(c, c)], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(problem.c, pink_problem.q[c], rtol=1e-11, atol=1e-13)
        G = pink_problem.G[:, c]
        involved = np.any(G != 0.0, axis=1)
        lb, ub, G_rows, _ = _pink_box_and_rows(G[involved], pink_problem.h[involved], c.size)
        assert G_rows.shape[0] == 0 and problem.G.shape == (0, c.size)
        np.testing.assert_allclose(problem.lb, lb, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(problem.ub, ub, rtol=1e-12, atol=1e-15)
        configuration.update(robot.random_q(rng))


@pytest.mark.parametrize("solver", EXACT_SOLVERS + APPROX_SOLVERS)
@pytest.mark.parametrize(("robot_name", "seed"), _cases(["panda_arm", "ur10"], 3))
def test_fused_solution_equals_reference(robot_name: str, seed: int, solver: str) -> None:
    robot = ROBOTS[robot_name]
    rng = np.random.default_rng(4000 + seed)
    configuration, tasks, limits = _fused_case(robot, rng)
    qp = compile_qp(robot.model, robot.controlled, tasks=tasks, limits=limits, solver=solver)
    v = tangent(qp, qp.solve(configuration, DT))
    v_ref = _daqp_reference(robot, configuration, tasks, limits)
    tol = {
        "clarabel": CLARABEL_TOL,
        "box": EXACT_TOL,
        "daqp": EXACT_TOL,
        "quadprog": EXACT_TOL,
    }.get(solver)
    np.testing.assert_allclose(v, v_ref, rtol=0.0, atol=EXACT_TOL if tol is None else tol)


@pytest.mark.parametrize("solver", APPROX_SOLVERS)
def test_clip_to_bounds_makes_the_box_exact(solver: str) -> None:
    """An unpolished first-order solution meets the box only to its tolerance; the compiled
    QP's velocity meets it exactly (clipped) and stays as close to the exact solution."""
    robot = ROBOTS["panda_arm"]
    model = robot.model
    rng = np.random.default_rng(5)
    configuration, tasks, limits = _fused_case(robot, rng)
    q = configuration.q.copy()
    q[1] = model.upperPositionLimit[1] - 1e-5  # a bound that binds
    configuration.update(q)
    options = {"polish": False}
    qp = compile_qp(
        model, robot.controlled, tasks=tasks, limits=limits, solver=solver, solver_options=options
    )
    problem = qp.build(configuration, DT).copy()
    chain = SolverChain(qp.n, qp.controlled_v_indices, [solver], options)
    x = chain.solve_problem(problem)  # the solver's own solution, not clipped
    v = qp.solve(configuration, DT)
    # x / dt is monotone in x: the box holds exactly on the velocity scale too
    assert np.all(v >= problem.lb / DT) and np.all(v <= problem.ub / DT)
    v_ref = _daqp_reference(robot, configuration, tasks, limits)[robot.controlled]
    assert np.abs(v - v_ref).max() <= np.abs(x / DT - v_ref).max() + 1e-12


def test_fused_pass_leaves_ticks_it_does_not_cover_to_the_generic_assembly() -> None:
    """Levenberg-Marquardt damping or a per-joint posture cost: that tick is assembled the
    generic way (same problem as pink); the next plain tick is fused again."""
    robot = ROBOTS["panda_arm"]
    rng = np.random.default_rng(7)
    configuration, tasks, limits = _fused_case(robot, rng)
    frame = tasks[0]
    posture = PostureTask(cost=0.05)
    posture.set_target(robot.random_q(rng))
    tasks = [frame, posture]
    qp = compile_qp(robot.model, robot.controlled, tasks=tasks, limits=limits)
    c = np.asarray(robot.controlled)

    def check() -> None:
        problem = qp.build(configuration, DT)
        reference = pink.build_ik(configuration, tasks, DT, damping=1e-12, limits=limits)
        np.testing.assert_allclose(problem.H, reference.P[np.ix_(c, c)], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(problem.c, reference.q[c], rtol=1e-11, atol=1e-13)

    check()
    frame.lm_damping = 0.5
    check()
    frame.lm_damping = 0.0
    posture.cost = rng.uniform(0.01, 0.1, robot.model.nv)
    check()
    posture.cost = 0.05
    frame.set_position_cost([1.0, 0.5, 2.0])  # in place: read again
    check()
    no_target = [FrameTask(robot.ee, 1.0, 1.0), posture]
    with pytest.raises(pink.exceptions.TargetNotSet):
        compile_qp(robot.model, robot.controlled, tasks=no_target, limits=limits).build(
            configuration, DT
        )


@pytest.mark.parametrize("solver", EXACT_SOLVERS + APPROX_SOLVERS)
@pytest.mark.parametrize("side", ["upper", "lower"])
def test_fused_start_outside_limits_recovers(solver: str, side: str) -> None:
    """Far outside the range the box is empty: the joint returns at its velocity limit."""
    robot = ROBOTS["panda_arm"]
    model = robot.model
    rng = np.random.default_rng(11)
    configuration, tasks, limits = _fused_case(robot, rng)
    q = configuration.q.copy()
    q[3] = (
        model.upperPositionLimit[3] + 0.5 if side == "upper" else model.lowerPositionLimit[3] - 0.5
    )
    configuration.update(q)
    qp = compile_qp(model, robot.controlled, tasks=tasks, limits=limits, solver=solver)
    v = tangent(qp, qp.solve(configuration, DT))
    expected = -model.velocityLimit[3] if side == "upper" else model.velocityLimit[3]
    assert v[3] == pytest.approx(expected, rel=1e-6)
    strict = compile_qp(
        model,
        robot.controlled,
        tasks=tasks,
        limits=limits,
        solver=solver,
        recover_outside_range=False,
    )
    with pytest.raises(QPSolveError):
        strict.solve(configuration, DT)


# --------------------------------------------------------------------------- solutions


@pytest.mark.parametrize("solver", EXACT_SOLVERS)
@pytest.mark.parametrize(("robot_name", "seed"), _cases(ALL_ROBOTS, 8))
def test_fast_path_equals_reference_exact_solvers(robot_name: str, seed: int, solver: str) -> None:
    robot = ROBOTS[robot_name]
    rng = np.random.default_rng(seed)
    configuration = robot.configuration(robot.random_q(rng))
    tasks = make_tasks(robot, configuration, rng)
    limits = make_limits(robot, rng)
    barriers = make_barriers(robot, configuration, rng)
    qp = compile_qp(
        robot.model,
        robot.controlled,
        tasks=tasks,
        limits=limits,
        barriers=barriers,
        solver=solver,
    )
    tol = CLARABEL_TOL if solver == "clarabel" else EXACT_TOL
    for _ in range(2):  # second call: the compiled terms and persistent solvers
        result = both_or_neither(
            lambda: tangent(qp, qp.solve(configuration, DT)),
            lambda: reference_solve_ik(
                configuration,
                tasks,
                DT,
                controlled_v_indices=robot.controlled,
                solver="daqp",
                limits=limits,
                barriers=barriers,
            ),
        )
        if result is None:
            return
        v, v_ref = result
        assert v.shape == (robot.model.nv,)
        held = np.setdiff1d(np.arange(robot.model.nv), robot.controlled)
        assert np.all(v[held] == 0.0)
        np.testing.assert_allclose(v, v_ref, rtol=0.0, atol=tol)
        configuration.update(robot.random_q(rng))


@pytest.mark.parametrize("polish", [False, True])
@pytest.mark.parametrize("solver", APPROX_SOLVERS)
@pytest.mark.parametrize(
    ("robot_name", "seed"), _cases(["panda_arm", "ur10", "panda_mimic", "panda_all"], 5)
)
def test_approximate_solvers_close_and_inside_limits(
    robot_name: str, seed: int, solver: str, polish: bool
) -> None:
    """OSQP / ProxQP: within 1e-4 rad/s raw, exact once polished, never past a joint limit."""
    robot = ROBOTS[robot_name]
    rng = np.random.default_rng(100 + seed)
    q = robot.random_q(rng)
    if seed % 2:  # start a hair away from an upper limit: the box margin is tiny there
        j = int(rng.integers(min(robot.model.nq, 6)))
        q[j] = robot.model.upperPositionLimit[j] - 1e-6
    configuration = robot.configuration(q)
    tasks = make_tasks(robot, configuration, rng)
    limits = [ConfigurationLimit(robot.model), VelocityLimit(robot.model)]
    qp = compile_qp(
        robot.model,
        robot.controlled,
        tasks=tasks,
        limits=limits,
        solver=solver,
        solver_options={"polish": polish},
    )
    assert not qp.exact
    v = tangent(qp, qp.solve(configuration, DT))
    v_ref = reference_solve_ik(
        configuration,
        tasks,
        DT,
        controlled_v_indices=robot.controlled,
        solver="daqp",
        limits=limits,
    )
    np.testing.assert_allclose(v, v_ref, rtol=0.0, atol=EXACT_TOL if polish else APPROX_TOL)
    q_next = pin.integrate(robot.model, configuration.q, v * DT)
    lower, upper = robot.model.lowerPositionLimit, robot.model.upperPositionLimit
    assert np.all(q_next >= lower - 1e-12) and np.all(q_next <= upper + 1e-12)


@pytest.mark.parametrize("solver", [s for s in EXACT_SOLVERS if s != "box"])  # qpsolvers names
@pytest.mark.parametrize(
    ("robot_name", "seed"), _cases(["panda_all", "ur10", "panda_mimic", "mimic_gripper"], 4)
)
def test_reference_equals_pink_solve_ik_when_all_controlled(
    robot_name: str, seed: int, solver: str
) -> None:
    if robot_name not in ROBOTS:
        pytest.skip(f"{robot_name} not available")
    robot = ROBOTS[robot_name]
    assert robot.controlled == list(range(robot.model.nv))
    rng = np.random.default_rng(200 + seed)
    configuration = robot.configuration(robot.random_q(rng))
    tasks = make_tasks(robot, configuration, rng)
    limits = make_limits(robot, rng)
    barriers = make_barriers(robot, configuration, rng)
    options = qpsolvers_options(solver, None)  # the same solver settings on both sides
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            v_pink = pink.solve_ik(
                configuration,
                tasks,
                DT,
                solver=solver,
                limits=limits,
                barriers=barriers,
                safety_break=False,
                **options,
            )
        except pink.exceptions.NoSolutionFound:
            v_pink = None
        try:
            v_ref = reference_solve_ik(
                configuration,
                tasks,
                DT,
                controlled_v_indices=robot.controlled,
                solver=solver,
                limits=limits,
                barriers=barriers,
                solver_options=options,
            )
        except QPSolveError:
            v_ref = None
    if v_pink is None or v_ref is None:
        assert v_pink is None and v_ref is None  # both infeasible
        return
    np.testing.assert_allclose(v_ref, v_pink, rtol=0.0, atol=1e-12)


def test_velocity_bounds_are_intersected() -> None:
    robot = ROBOTS["panda_arm"]
    rng = np.random.default_rng(7)
    configuration = robot.configuration(robot.random_q(rng))
    tasks = make_tasks(robot, configuration, rng)
    limits = [ConfigurationLimit(robot.model), VelocityLimit(robot.model)]
    n = len(robot.controlled)
    v_upper = np.full(n, 0.05)
    v_lower = np.full(n, -0.05)
    v_lower[0] = -np.inf
    for solver in EXACT_SOLVERS:
        qp = compile_qp(robot.model, robot.controlled, tasks=tasks, limits=limits, solver=solver)
        v = tangent(qp, qp.solve(configuration, DT, v_lower, v_upper))
        v_ref = reference_solve_ik(
            configuration,
            tasks,
            DT,
            controlled_v_indices=robot.controlled,
            solver="daqp",
            limits=limits,
            v_lower=v_lower,
            v_upper=v_upper,
        )
        tol = CLARABEL_TOL if solver == "clarabel" else EXACT_TOL
        np.testing.assert_allclose(v, v_ref, rtol=0.0, atol=tol)
        assert np.all(v[robot.controlled] <= v_upper + 1e-9)
        assert np.all(v[robot.controlled] >= v_lower - 1e-9)


def test_tracking_run_follows_pink_joint_path() -> None:
    """2000 ticks of a moving target: the compiled QP (default solver) and pink.solve_ik/daqp,
    same joint path."""
    robot = ROBOTS["panda_all"]
    model = robot.model
    q0 = np.array([0.0, -0.785398, 0.0, -2.35619, 0.0, 1.5707, 0.785398, 0.02, 0.02])
    ours = robot.configuration(q0)
    theirs = robot.configuration(q0)
    frame = FrameTask(robot.ee, position_cost=1.0, orientation_cost=1.0)
    posture = PostureTask(cost=1e-3)
    posture.set_target(q0)
    tasks = [frame, posture]
    limits = [model.configuration_limit, model.velocity_limit]
    qp = compile_qp(model, robot.controlled, tasks=tasks, limits=limits)
    start = ours.get_transform_frame_to_world(robot.ee)
    max_difference = 0.0
    for k in range(2000):
        t = k * DT
        omega = 2.0 * np.pi * 0.25
        target = start.copy()
        target.translation = start.translation + [
            0.0,
            0.1 * np.sin(omega * t),
            0.1 * (1.0 - np.cos(omega * t)),
        ]
        target.rotation = start.rotation @ pin.rpy.rpyToMatrix(
            0.3 * np.sin(2.0 * np.pi * 0.2 * t), 0.0, 0.0
        )
        frame.set_target(target)
        v_pink = pink.solve_ik(theirs, tasks, DT, solver="daqp", limits=limits)
        v_ours = tangent(qp, qp.solve(ours, DT))
        theirs.integrate_inplace(v_pink, DT)
        ours.integrate_inplace(v_ours, DT)
        max_difference = max(max_difference, float(np.abs(ours.q - theirs.q).max()))
    assert max_difference <= 1e-9
    # and the task was actually tracked
    error = frame.compute_error(ours)
    assert np.linalg.norm(error[:3]) < 1e-3


# --------------------------------------------------------------------------- failures


def _panda_problem() -> tuple[Robot, Any, list[Any], list[Any]]:
    robot = ROBOTS["panda_arm"]
    rng = np.random.default_rng(3)
    configuration = robot.configuration(robot.random_q(rng))
    tasks = make_tasks(robot, configuration, rng)
    limits = [ConfigurationLimit(robot.model), VelocityLimit(robot.model)]
    return robot, configuration, tasks, limits


@pytest.mark.parametrize("solver", sorted(available_solvers()))
def test_crossed_velocity_bounds_raise_with_reason(solver: str) -> None:
    robot, configuration, tasks, limits = _panda_problem()
    n = len(robot.controlled)
    qp = compile_qp(robot.model, robot.controlled, tasks=tasks, limits=limits, solver=solver)
    v_lower = np.full(n, -0.1)
    v_upper = np.full(n, 0.1)
    v_lower[2] = 0.2
    with pytest.raises(QPSolveError, match="lower bound above upper bound") as info:
        qp.solve(configuration, DT, v_lower, v_upper)
    assert "2" in info.value.reason
    # The object still works afterwards.
    v = qp.solve(configuration, DT)
    assert np.all(np.isfinite(v))


def test_nan_velocity_bound_raises() -> None:
    robot, configuration, tasks, limits = _panda_problem()
    qp = compile_qp(robot.model, robot.controlled, tasks=tasks, limits=limits)
    v_upper = np.full(len(robot.controlled), 1.0)
    v_upper[1] = np.nan
    with pytest.raises(QPSolveError, match="NaN"):
        qp.solve(configuration, DT, upper=v_upper)


@pytest.mark.parametrize("solver", sorted(available_solvers()))
def test_limit_and_barrier_conflict_is_infeasible(solver: str) -> None:
    """A position barrier demanding a large move at once, velocities capped: no solution."""
    robot, configuration, tasks, _ = _panda_problem()
    position = configuration.get_transform_frame_to_world(robot.ee).translation
    barrier = PositionBarrier(robot.ee, indices=[2], p_min=position[[2]] + 0.05, gain=1.0)
    n = len(robot.controlled)
    qp = compile_qp(robot.model, robot.controlled, tasks=tasks, barriers=[barrier], solver=solver)
    with pytest.raises(QPSolveError) as info:
        qp.solve(configuration, DT, np.full(n, -0.01), np.full(n, 0.01))
    assert info.value.reason
    with pytest.raises(QPSolveError):
        reference_solve_ik(
            configuration,
            tasks,
            DT,
            controlled_v_indices=robot.controlled,
            solver="daqp",
            barriers=[barrier],
            v_lower=np.full(n, -0.01),
            v_upper=np.full(n, 0.01),
        )


def test_start_outside_limits_reports_infeasible_bounds_without_recovery() -> None:
    robot = ROBOTS["panda_arm"]
    q = np.array([0.0, -0.785398, 0.0, -2.35619, 0.0, 1.5707, 0.785398, 0.02, 0.02])
    q[3] = robot.model.upperPositionLimit[3] + 0.5  # far above joint 4's upper limit
    configuration = robot.configuration(q)
    posture = PostureTask(cost=1.0)
    posture.set_target(q)
    limits = [ConfigurationLimit(robot.model), VelocityLimit(robot.model)]
    qp = compile_qp(
        robot.model, robot.controlled, tasks=[posture], limits=limits, recover_outside_range=False
    )
    with pytest.raises(QPSolveError, match="lower bound above upper bound"):
        qp.solve(configuration, DT)


@pytest.mark.parametrize("side", ["upper", "lower"])
def test_start_outside_limits_recovers_at_the_velocity_limit(side) -> None:
    """Default: the joint outside its range moves back at its velocity limit, others hold."""
    robot = ROBOTS["panda_arm"]
    q = np.array([0.0, -0.785398, 0.0, -2.35619, 0.0, 1.5707, 0.785398, 0.02, 0.02])
    model = robot.model
    if side == "upper":
        q[3] = model.upperPositionLimit[3] + 0.5
    else:
        q[3] = model.lowerPositionLimit[3] - 0.5
    configuration = robot.configuration(q)
    posture = PostureTask(cost=1.0)
    posture.set_target(q)
    limits = [ConfigurationLimit(model), VelocityLimit(model)]
    qp = compile_qp(model, robot.controlled, tasks=[posture], limits=limits)
    v = tangent(qp, qp.solve(configuration, DT))
    expected = -model.velocityLimit[3] if side == "upper" else model.velocityLimit[3]
    assert v[3] == pytest.approx(expected, rel=1e-9)
    # user bounds take part in the recovery too
    n = len(robot.controlled)
    slow = tangent(qp, qp.solve(configuration, DT, np.full(n, -0.5), np.full(n, 0.5)))
    assert slow[3] == pytest.approx(np.sign(expected) * 0.5, rel=1e-9)


def test_constructor_validates_arguments() -> None:
    model = ROBOTS["panda_arm"].model
    if "proxqp" in available_solvers():  # options are checked before the first tick
        with pytest.raises(ValueError, match="ProxQP options"):
            compile_qp(
                model,
                range(7),
                tasks=[],
                solver="proxqp",
                solver_options={"eps_absolute": 1e-9},
            )
    with pytest.raises(ValueError, match="installed solvers"):
        compile_qp(model, range(7), tasks=[], solver="no_such_solver")
    with pytest.raises(ValueError, match="damping"):
        compile_qp(model, range(7), tasks=[], damping=-1.0)
    with pytest.raises(ValueError, match="damping"):
        compile_qp(model, range(7), tasks=[], damping=float("nan"))
    with pytest.raises(ValueError, match="unique"):
        compile_qp(model, [0, 1, 1], tasks=[])
    with pytest.raises(ValueError, match=r"\[0, nv=9\)"):
        compile_qp(model, [0, 9], tasks=[])
    with pytest.raises(ValueError, match="empty"):
        compile_qp(model, [], tasks=[])
    with pytest.raises(ValueError, match="integers"):
        compile_qp(model, [0.5, 1.0], tasks=[])  # type: ignore[list-item]
    qp = compile_qp(model, np.arange(7), tasks=[])
    assert qp.n == 7 and qp.solvers == ["box"] and qp.exact
    with pytest.raises(ValueError):
        qp.controlled_v_indices[0] = 3  # read-only


def test_solve_validates_arguments() -> None:
    robot, configuration, tasks, limits = _panda_problem()
    qp = compile_qp(robot.model, robot.controlled, tasks=tasks, limits=limits)
    assert qp.last_problem is None  # nothing written before the first tick
    with pytest.raises(ValueError, match="dt"):
        qp.solve(configuration, 0.0)
    with pytest.raises(ValueError, match="dt"):
        qp.solve(configuration, float("nan"))
    with pytest.raises(ValueError, match="upper"):
        qp.solve(configuration, DT, upper=np.ones(3))
    other = ROBOTS["ur10"]
    with pytest.raises(ValueError, match="nv"):
        qp.solve(other.configuration(pin.neutral(other.model)), DT)


def test_task_without_target_raises_pink_error() -> None:
    robot, configuration, _, limits = _panda_problem()
    no_target = [FrameTask(robot.ee, 1.0, 1.0)]
    qp = compile_qp(robot.model, robot.controlled, tasks=no_target, limits=limits)
    with pytest.raises(pink.exceptions.TargetNotSet):
        qp.solve(configuration, DT)
    with pytest.raises(pink.exceptions.FrameNotFound):
        task = FrameTask("no_such_frame", 1.0, 1.0)
        task.set_target(pin.SE3.Identity())
        compile_qp(robot.model, robot.controlled, tasks=[task]).solve(configuration, DT)


# --------------------------------------------------------------------------- assemble/solve


def test_solve_problem_with_equality_rows_matches_qpsolvers() -> None:
    """A cascade can add equality rows to a built problem and solve it with its solvers."""
    import qpsolvers  # noqa: PLC0415

    from pinkctl.qp import QPProblem  # noqa: PLC0415

    robot, configuration, tasks, limits = _panda_problem()
    for solver in sorted(available_solvers()):
        qp = compile_qp(robot.model, robot.controlled, tasks=tasks, limits=limits)
        problem = qp.build(configuration, DT)
        chain = SolverChain(qp.n, qp.controlled_v_indices, [solver])
        x_plain = chain.solve_problem(problem)
        A = np.zeros((1, qp.n))
        A[0, :2] = 1.0
        b = np.array([float(A[0] @ x_plain) * 0.5])
        constrained = QPProblem(
            H=problem.H,
            c=problem.c,
            G=problem.G,
            h=problem.h,
            A=A,
            b=b,
            lb=problem.lb,
            ub=problem.ub,
        )
        x = chain.solve_problem(constrained)
        expected = qpsolvers.solve_qp(
            np.array(problem.H),
            np.array(problem.c),
            A=A,
            b=b,
            lb=np.array(problem.lb),
            ub=np.array(problem.ub),
            solver="daqp",
        )
        assert expected is not None
        tol = 1e-9 if solver in ("box", "daqp", "quadprog") else 1e-6
        np.testing.assert_allclose(x, expected, rtol=0.0, atol=tol)
        assert abs(float(A[0] @ x) - b[0]) < 1e-7


def test_last_problem_and_primal_residual() -> None:
    robot, configuration, tasks, limits = _panda_problem()
    qp = compile_qp(robot.model, robot.controlled, tasks=tasks, limits=limits)
    assert qp.last_problem is None
    v = qp.solve(configuration, DT)
    problem = qp.last_problem
    assert problem is not None
    x = v * DT
    assert problem.max_violation(x) < 1e-12
    kept = problem.copy()
    configuration.update(robot.random_q(np.random.default_rng(4)))
    qp.solve(configuration, DT)
    latest = qp.last_problem
    assert latest is not None
    assert not np.array_equal(kept.c, latest.c)  # views follow, copies stay
    assert np.array_equal(problem.c, latest.c)


def test_repeated_task_counts_twice() -> None:
    robot, configuration, tasks, limits = _panda_problem()
    frame = tasks[0]
    twice = [frame, frame, tasks[1]]
    problem = compile_qp(robot.model, robot.controlled, tasks=twice, limits=limits).build(
        configuration, DT
    )
    reference = pink.build_ik(configuration, [frame, frame, tasks[1]], DT, limits=limits)
    c = robot.controlled
    np.testing.assert_allclose(problem.H, reference.P[np.ix_(c, c)], rtol=1e-12, atol=1e-12)


def test_parameters_are_read_every_tick() -> None:
    """Costs changed in place, gains and limit parameters are picked up without a cache reset."""
    robot, configuration, tasks, _ = _panda_problem()
    frame, posture = tasks[0], tasks[1]
    limits = [ConfigurationLimit(robot.model), VelocityLimit(robot.model)]
    qp = compile_qp(robot.model, robot.controlled, tasks=[frame, posture], limits=limits)
    c = robot.controlled

    def check() -> None:
        problem = qp.build(configuration, DT)
        reference = pink.build_ik(configuration, [frame, posture], DT, limits=limits)
        np.testing.assert_allclose(problem.H, reference.P[np.ix_(c, c)], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(problem.c, reference.q[c], rtol=1e-11, atol=1e-13)
        _, ub, _, _ = _pink_box_and_rows(reference.G[:, c], reference.h, len(c))
        np.testing.assert_allclose(problem.ub, ub, rtol=1e-12)

    check()
    frame.set_position_cost([0.1, 2.0, 3.0])  # in place on the cost vector
    frame.gain = 0.3
    posture.cost = 0.2
    limits[0].config_limit_gain = 0.9
    limits[1].velocity_limit[2] = 0.1  # in place
    check()
    frame.cost = 2.0  # a float cost
    check()


# --------------------------------------------------------------------------- bundled robots


def _bundled(name: str) -> Any:
    try:
        from pinkctl import load_pink_supported_robot  # noqa: PLC0415

        return load_pink_supported_robot(name, build_collision_model=True)
    except Exception as exc:  # not written yet / not available: skip, not fail
        pytest.skip(f"bundled robot {name!r} unavailable: {exc}")


@pytest.mark.parametrize("name", ["franka", "ur10", "so101"])
def test_bundled_robots_equivalence(name: str) -> None:
    """The bundled robots (controlled arm joints, gripper held), with self-collision."""
    robot = _bundled(name)
    model = robot.model
    controlled = sorted(
        model.joints[model.getJointId(joint)].idx_v for joint in robot.controlled_joint_names
    )
    frame_name = robot.tool_frame or model.frames[model.nframes - 1].name
    rng = np.random.default_rng(11)
    collision_model = robot.collision_model
    if collision_model is not None and len(collision_model.collisionPairs) == 0:
        collision_model = None
    wrapped = Robot(name, model, controlled, frame_name, frame_name, collision_model)
    for solver in EXACT_SOLVERS:
        for _ in range(4):
            q = robot.q0.copy() if rng.random() < 0.25 else wrapped.random_q(rng)
            configuration = wrapped.configuration(q)
            frame = FrameTask(frame_name, position_cost=1.0, orientation_cost=0.5, lm_damping=1e-3)
            frame.set_target(_random_pose(wrapped, rng))
            posture = PostureTask(cost=1e-2)
            posture.set_target(robot.q0)
            tasks = [frame, posture]
            limits = [ConfigurationLimit(model), VelocityLimit(model)]
            barriers: list[Any] = []
            if collision_model is not None:
                n_pairs = min(3, len(collision_model.collisionPairs))
                barriers.append(SelfCollisionBarrier(n_collision_pairs=n_pairs, d_min=0.01))
            qp = compile_qp(
                model, controlled, tasks=tasks, limits=limits, barriers=barriers, solver=solver
            )
            result = both_or_neither(
                lambda qp=qp, configuration=configuration: tangent(qp, qp.solve(configuration, DT)),
                partial(
                    reference_solve_ik,
                    configuration,
                    tasks,
                    DT,
                    controlled_v_indices=controlled,
                    solver="daqp",
                    limits=limits,
                    barriers=barriers,
                ),
            )
            if result is not None:
                tol = CLARABEL_TOL if solver == "clarabel" else EXACT_TOL
                np.testing.assert_allclose(result[0], result[1], rtol=0.0, atol=tol)


# --------------------------------------------------------------------------- solver names


@pytest.fixture
def daqp_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the calls of ``daqp.solve`` made by solvers created from now on."""
    import daqp  # noqa: PLC0415

    calls: list[int] = []
    original = daqp.solve

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(daqp, "solve", spy)
    return calls


def test_box_solves_a_box_only_tick_without_daqp(daqp_calls: list[int]) -> None:
    """``"box"`` (the default) runs pinkctl's box QP on a problem whose only constraints are
    bounds (DAQP is not called), DAQP when the native kernel is off; same solution."""
    from pinkctl._native import native_available  # noqa: PLC0415

    robot, configuration, tasks, limits = _panda_problem()
    qp = compile_qp(robot.model, robot.controlled, tasks=tasks, limits=limits)
    assert qp.solvers == ["box"] and not qp.has_rows
    for _ in range(3):
        v = tangent(qp, qp.solve(configuration, DT))
        configuration.update(robot.random_q(np.random.default_rng(len(daqp_calls))))
    native = native_available()[0]
    assert qp.last_solver == ("box" if native else "daqp")
    assert (len(daqp_calls) == 0) == native
    v_ref = _daqp_reference(robot, configuration, tasks, limits)
    np.testing.assert_allclose(tangent(qp, qp.solve(configuration, DT)), v_ref, atol=EXACT_TOL)
    assert v.shape == (robot.model.nv,)


def test_daqp_always_calls_daqp(daqp_calls: list[int]) -> None:
    robot, configuration, tasks, limits = _panda_problem()
    qp = compile_qp(robot.model, robot.controlled, tasks=tasks, limits=limits, solver="daqp")
    for k in range(3):
        qp.solve(configuration, DT)
        assert len(daqp_calls) == k + 1 and qp.last_solver == "daqp"


def test_box_hands_a_problem_with_rows_to_daqp(daqp_calls: list[int]) -> None:
    """Inequality rows (a pink limit that is not a simple bound, a barrier): ``"box"`` solves
    them with DAQP, to pink's solution."""
    robot, configuration, tasks, limits = _panda_problem()
    position = configuration.get_transform_frame_to_world(robot.ee).translation
    barrier = PositionBarrier(robot.ee, indices=[2], p_max=position[[2]] + 0.05, gain=1.0)
    rows = [*limits, SumVelocityLimit(robot.model.nv, 1.5)]
    for extra_limits, barriers in ((rows, []), (limits, [barrier])):
        qp = compile_qp(
            robot.model, robot.controlled, tasks=tasks, limits=extra_limits, barriers=barriers
        )
        assert qp.has_rows and qp.solvers == ["box"]
        before = len(daqp_calls)
        v = tangent(qp, qp.solve(configuration, DT))
        assert qp.last_solver == "daqp" and len(daqp_calls) == before + 1
        v_ref = reference_solve_ik(
            configuration,
            tasks,
            DT,
            controlled_v_indices=robot.controlled,
            solver="daqp",
            limits=extra_limits,
            barriers=barriers,
        )
        np.testing.assert_allclose(v, v_ref, rtol=0.0, atol=EXACT_TOL)


def test_the_fallback_takes_over_and_says_so() -> None:
    """A solver that fails (OSQP stopped after one iteration) hands the tick to the fallback
    inside the one ``solve`` call; ``last_solver`` names it."""
    robot, configuration, tasks, limits = _panda_problem()
    crippled = {"max_iter": 1, "polish": False}
    qp = compile_qp(
        robot.model,
        robot.controlled,
        tasks=tasks,
        limits=limits,
        solver="osqp",
        fallback_solver="daqp",
        solver_options=crippled,
    )
    v = tangent(qp, qp.solve(configuration, DT))
    assert qp.last_solver == "daqp" and qp.solvers == ["osqp", "daqp"]
    np.testing.assert_allclose(v, _daqp_reference(robot, configuration, tasks, limits), atol=1e-9)
    alone = compile_qp(
        robot.model,
        robot.controlled,
        tasks=tasks,
        limits=limits,
        solver="osqp",
        solver_options=crippled,
    )
    with pytest.raises(QPSolveError, match="osqp"):
        alone.solve(configuration, DT)
