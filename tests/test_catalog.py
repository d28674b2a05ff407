"""Every catalog robot with no user glue: loads, simulates, holds still, follows targets,
solves IK (descriptions from ``example-robot-data``, the ``robots`` extra).

Panda, UR5, Kinova, SO-ARM101 and TIAGo run every check in CI; the others run the cheap ones
in CI and the closed loop and the 500-target IK behind the ``slow`` marker.
"""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from pinkctl import (
    ControllerStatus,
    MujocoSimulation,
    PinkIKController,
    RobotState,
    SpatialState,
    load_pink_supported_robot,
    supported_robots,
)
from pinkctl.ik import IKSolver

CATALOG = [
    "panda",
    "ur3",
    "ur5",
    "ur10_erd",
    "kinova",
    "xarm7",
    "so_arm101",
    "z1",
    "tiago",
    "talos",
    "g1",
]
IN_CI = {"panda", "ur5", "kinova", "so_arm101", "tiago"}


def _param(name: str):  # the slow robots' expensive checks sit behind the marker
    return name if name in IN_CI else pytest.param(name, marks=pytest.mark.slow)


@pytest.fixture(scope="module")
def loaded():
    cache: dict = {}

    def get(name):
        if name not in cache:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                robot = load_pink_supported_robot(name)
                cache[name] = (robot, MujocoSimulation.from_robot(robot))
        return cache[name]

    return get


def _joint_index(robot, name):
    return robot.model.joints[robot.model.getJointId(name)]


def _random_q(robot, rng, names, *, around=None, spread=np.pi, margin=0.0):
    """A configuration with ``names`` random (within limits less ``margin``), others home."""
    model = robot.model
    q = robot.q0.copy() if around is None else around.copy()
    for name in names:
        joint = _joint_index(robot, name)
        if joint.nq == 1:
            lo = float(model.lowerPositionLimit[joint.idx_q]) + margin
            hi = float(model.upperPositionLimit[joint.idx_q]) - margin
            center = q[joint.idx_q]
            q[joint.idx_q] = rng.uniform(max(lo, center - spread), min(hi, center + spread))
        else:
            angle = np.arctan2(q[joint.idx_q + 1], q[joint.idx_q]) + rng.uniform(-spread, spread)
            q[joint.idx_q : joint.idx_q + 2] = np.cos(angle), np.sin(angle)
    return q


def _scalar_values(robot, q):
    out = {}
    for name in robot.joint_names:
        joint = _joint_index(robot, name)
        if joint.nq == 1:
            out[name] = float(q[joint.idx_q])
        else:
            out[name] = float(np.arctan2(q[joint.idx_q + 1], q[joint.idx_q]))
    return out


@pytest.mark.parametrize(
    "name",
    [n if n != "g1" else pytest.param(n, marks=pytest.mark.slow) for n in supported_robots()],
)
def test_catalog_robot_loads_and_simulates_without_a_warning(name):
    """Nothing a user cannot act on: the inertia repairs a catalog description needs (talos 5,
    tiago 6, so_arm101 1) are declared in its robot.toml (``inertia_repairs``) and silent, and
    the contacts at its configured home are part of its configuration; every declared repair
    is one the description needs."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = load_pink_supported_robot(name)
        MujocoSimulation.from_robot(robot).close()
    declared = robot.config.get("inertia_repairs", [])
    repaired = [note.split("'")[1] for note in robot.notes if note.startswith("inertia of link")]
    assert sorted(repaired) == sorted(declared)


@pytest.mark.parametrize("name", CATALOG)
def test_catalog_robot_loads_and_fk_matches_mujoco(loaded, name):
    """Pinocchio and MuJoCo agree on the tool frame over 50 random configurations."""
    robot, sim = loaded(name)
    model, data = robot.model, robot.model.createData()
    frame = robot.tool_frame
    fid = model.getFrameId(frame)
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(50):
        q = _random_q(robot, rng, robot.joint_names)
        pin.framesForwardKinematics(model, data, q)
        sim.reset(_scalar_values(robot, q))
        worst = max(
            worst, float(np.linalg.norm(sim.get_site_pose(frame)[0] - data.oMf[fid].translation))
        )
    sim.reset()
    assert worst <= 1e-9


@pytest.mark.parametrize("name", CATALOG)
def test_catalog_robot_holds_still_at_home(loaded, name):
    """5 s at home: the tool drifts at most 0.5 mm, every joint stays in its range (1 mrad)."""
    robot, sim = loaded(name)
    sim.reset()
    model = robot.model
    start = sim.get_site_pose(robot.tool_frame)[0]
    worst = 0.0
    for _ in range(25):
        sim.step(int(round(0.2 / sim.timestep)))
        for name_, value in zip(sim.joint_names, sim.get_joint_positions()):
            joint = _joint_index(robot, name_)
            if joint.nq == 1:
                lo, hi = (
                    model.lowerPositionLimit[joint.idx_q],
                    model.upperPositionLimit[joint.idx_q],
                )
                worst = max(worst, lo - value, value - hi)
    assert np.linalg.norm(sim.get_site_pose(robot.tool_frame)[0] - start) <= 5e-4
    assert worst <= 1e-3
    sim.reset()


def _collision_free(sim, robot, q):
    probe = mujoco.MjData(sim.model)
    probe.qpos[:] = sim.data.qpos
    for name, value in _scalar_values(robot, q).items():
        probe.qpos[sim.model.joint(name).qposadr[0]] = value
    mujoco.mj_forward(sim.model, probe)
    return probe.ncon == 0


@pytest.mark.parametrize("name", [_param(n) for n in CATALOG])
def test_catalog_robot_closed_loop_reaches_targets(loaded, name):
    """20 collision-free targets near home, one after the other, default controller in MuJoCo:
    each reached to 0.1 mm / 1 mrad (position only for 5-DoF arms) within 4 s, no tick
    without output, every command inside the position and velocity limits."""
    robot, sim = loaded(name)
    sim.reset()
    model, data = robot.model, robot.model.createData()
    frame = robot.tool_frame
    fid = model.getFrameId(frame)
    arm = robot.controlled_joint_names
    position_only = len(arm) < 6
    controller = PinkIKController(
        robot,
        sim.joint_names,
        sim.site_names,
        dt=sim.timestep,
        orientation_cost=0.0 if position_only else 1.0,
    )
    assert controller.reset(sim.get_robot_state(), None, 0.0)
    rng = np.random.default_rng(1)
    # continuous joints have no range: +-inf for them
    bounded = [_joint_index(robot, n).nq == 1 for n in arm]
    idx = [_joint_index(robot, n).idx_q for n in arm]
    lower = np.where(bounded, model.lowerPositionLimit[idx], -np.inf)
    upper = np.where(bounded, model.upperPositionLimit[idx], np.inf)
    velocity = np.array([robot.velocity_limits[n] for n in arm])
    previous = sim.get_joint_positions(arm)
    t = 0.0
    for _ in range(20):
        q = _target_configuration(sim, robot, controller, rng, arm)
        pin.framesForwardKinematics(model, data, q)
        goal = data.oMf[fid].copy()
        quat = pin.Quaternion(goal.rotation)
        setpoint = RobotState(
            sites=SpatialState.from_name(
                [frame],
                positions=([frame], goal.translation.reshape(1, 3)),
                orientations=([frame], np.array([[quat.w, quat.x, quat.y, quat.z]])),
            )
        )
        reached = False
        for _ in range(int(round(4.0 / sim.timestep))):
            out = controller.forward(sim.get_robot_state(), setpoint, t)
            t += sim.timestep
            # BLOCKED: collision avoidance slows the arm near a margin on the way
            assert out is not None and controller.status is not ControllerStatus.BRAKING
            command = out.joints.get_positions(arm)
            assert np.all(command >= lower - 1e-12) and np.all(command <= upper + 1e-12)
            assert np.all(np.abs(command - previous) <= velocity * sim.timestep * (1 + 1e-9))
            previous = command
            sim.apply(out)
            sim.step()
            position, orientation = sim.get_site_pose(frame)
            err_p = np.linalg.norm(position - goal.translation)
            w, x, y, z = orientation
            rotation = pin.Quaternion(w, x, y, z).toRotationMatrix()
            err_o = np.linalg.norm(pin.log3(goal.rotation.T @ rotation))
            if err_p <= 1e-4 and (position_only or err_o <= 1e-3):
                reached = True
                break
        assert reached, (err_p, err_o)
    sim.reset()


def _target_configuration(sim, robot, controller, rng, arm, draws=200):
    """A configuration near home, free in MuJoCo and outside each pair's own margin (the
    controller's: pairs close at home keep half their home clearance) with 5 mm to spare,
    or at least as far as at home (two links 0.1 mm apart at home): the first of at most
    ``draws`` (bounded and deterministic whatever the geometry)."""
    avoid = controller.collision
    if avoid is not None:
        home = np.array([d.distance for d in avoid.scene.distances(robot.q0)])
        margins = np.minimum(avoid.limit.pair_margins()[0] + 5e-3, home - 1e-9)
    for _ in range(draws):
        q = _random_q(robot, rng, arm, spread=0.3, margin=0.05)
        if not _collision_free(sim, robot, q):
            continue
        if avoid is None:
            return q
        distances = np.array([d.distance for d in avoid.scene.distances(q)])
        if np.all(distances >= margins):
            return q
    pytest.fail(f"no target configuration of {robot.name} in {draws} draws")


def _trac_ik_targets(robot, solver, n, seed):
    rng = np.random.default_rng(seed)
    model, data = robot.model, robot.model.createData()
    fid = model.getFrameId(robot.tool_frame)
    targets = []
    while len(targets) < n:
        q = _random_q(robot, rng, solver.joint_names)
        if solver.collision is not None and not solver.collision.accepts(q):
            continue  # the collision-free search has no answer there
        pin.framesForwardKinematics(model, data, q)
        targets.append(data.oMf[fid].copy())
    return targets


@pytest.mark.parametrize("name", [_param(n) for n in CATALOG])
def test_catalog_robot_find_ik_on_trac_ik_protocol(loaded, name):
    """500 targets (FK of uniform collision-free configurations), nominal seed, 1e-5 per
    axis, an iteration and restart budget (not a wall-clock one): at least 99 % solved."""
    robot, _ = loaded(name)
    position_only = len(robot.controlled_joint_names) < 6
    solver = IKSolver(robot, position_only=position_only)
    nominal = solver.subset.middle(robot.q0)
    targets = _trac_ik_targets(robot, solver, 500, seed=3)
    solved = sum(
        solver.find(target, seed=nominal, time_budget_ms=None, max_restarts=50).success
        for target in targets
    )
    assert solved >= 495, solved
