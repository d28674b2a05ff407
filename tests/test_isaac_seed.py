"""The Isaac Sim PINK extension's API rows that no other test file covers (docs/isaac.md):
signatures, the default solver, ``tool_frame=None`` and the ``impl.utils`` module path."""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import numpy as np
import pinocchio as pin
import pytest

from pinkctl import (
    ChainedController,
    FigureEightTrajectory,
    JointState,
    PinkIKController,
    PinkRobot,
    RobotState,
    SpatialState,
    TrajectoryFollower,
    load_pink_robot,
    load_pink_supported_robot,
)

DT = 0.005


@pytest.fixture(scope="module")
def franka() -> PinkRobot:
    return load_pink_supported_robot("franka")


def _parameters(function) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(function).parameters.values() if p.name != "self"]


def test_load_pink_robot_signature() -> None:
    """load_pink_robot(urdf_path, package_dirs=None, srdf_path=None,
    build_collision_model=False): the seed's parameters first, in order, positional."""
    seed = [("urdf_path", None), ("package_dirs", None), ("srdf_path", None)]
    seed.append(("build_collision_model", False))
    parameters = _parameters(load_pink_robot)[: len(seed)]
    assert [(p.name, p.default) for p in parameters[1:]] == seed[1:]
    assert parameters[0].name == "urdf_path"
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in parameters)


def test_load_pink_robot_loads_a_urdf_with_its_collision_model(franka: PinkRobot) -> None:
    """The seed's example: load_pink_robot(urdf_path=..., build_collision_model=True)."""
    robot = load_pink_robot(urdf_path=franka.urdf_path, build_collision_model=True)
    assert robot.model.nq == franka.model.nq
    assert robot.collision_model is not None and robot.collision_data is not None


def test_pink_robot_fields(franka: PinkRobot) -> None:
    """PinkRobot(directory, model, data, controlled_joint_names, collision_model,
    collision_data, q0): the seed's dataclass fields, in its order, first."""
    names = [field.name for field in dataclasses.fields(PinkRobot)][:7]
    assert names == [
        "directory",
        "model",
        "data",
        "controlled_joint_names",
        "collision_model",
        "collision_data",
        "q0",
    ]
    assert franka.directory.is_dir() and franka.q0.shape == (franka.model.nq,)
    assert franka.collision_model is None  # build_collision_model=False


SEED_CONTROLLER = [
    ("tool_frame", None),
    ("position_cost", 1.0),
    ("orientation_cost", 1.0),
    ("posture_cost", 0.001),
    ("damping", 1e-12),
    ("gain", 1.0),
    ("lm_damping", 0.0),
    ("solver", "box"),  # the seed's default is "osqp": see test_solver_default
    ("extra_tasks", None),
    ("extra_limits", None),
    ("extra_barriers", None),
    ("pre_step_callback", None),
    ("dt", inspect.Parameter.empty),
]


def test_pink_ik_controller_signature() -> None:
    """PinkIKController(pink_robot, robot_joint_space, robot_site_space, *, tool_frame, ...,
    dt): the seed's names, order and defaults (the solver's aside), dt a required keyword;
    pinkctl's own options follow, keyword-only."""
    parameters = _parameters(PinkIKController.__init__)
    positional = ["pink_robot", "robot_joint_space", "robot_site_space"]
    assert [p.name for p in parameters[:3]] == positional
    keywords = parameters[3 : 3 + len(SEED_CONTROLLER)]
    assert [(p.name, p.default) for p in keywords] == SEED_CONTROLLER
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[3:])


def _kinematic_run(robot: PinkRobot, solver: str, ticks: int) -> np.ndarray:
    """Commands of a kinematic loop (each command is the next measurement) toward a target
    moving on a 10 cm circle, with the seed's defaults but ``solver``."""
    names = list(robot.model.names[1:])
    frame = robot.tool_frame
    assert frame is not None
    controller = PinkIKController(robot, names, [frame], solver=solver, dt=DT)
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    home = data.oMf[robot.model.getFrameId(frame)]
    quaternion = pin.Quaternion(home.rotation)
    orientation = np.array([[quaternion.w, quaternion.x, quaternion.y, quaternion.z]])
    positions = {
        n: float(robot.q0[robot.model.joints[robot.model.getJointId(n)].idx_q]) for n in names
    }

    def estimate() -> RobotState:
        values = np.array([positions[n] for n in names])
        return RobotState(joints=JointState.from_name(names, positions=(names, values)))

    assert controller.reset(estimate(), None, 0.0), controller.last_error
    commands = []
    for k in range(ticks):
        phase = 2.0 * np.pi * 0.25 * k * DT
        offset = 0.1 * np.array([0.0, np.sin(phase), 1.0 - np.cos(phase)])
        target = RobotState(
            sites=SpatialState.from_name(
                [frame],
                positions=([frame], (home.translation + offset)[None, :]),
                orientations=([frame], orientation),
            )
        )
        out = controller.forward(estimate(), target, k * DT)
        assert out is not None, controller.last_error
        positions.update(zip(out.joints.position_names, out.joints.positions))
        commands.append(out.joints.positions.copy())
    return np.array(commands)


def test_solver_default(franka: PinkRobot) -> None:
    """pinkctl's default solver is "box" (its exact box QP, DAQP when rows bind) where the
    seed's is OSQP; DAQP and OSQP still work by name and, polished by pinkctl, command the
    same joints along a whole run."""
    default = inspect.signature(PinkIKController.__init__).parameters["solver"].default
    assert default == "box"
    box = _kinematic_run(franka, "box", 200)
    daqp = _kinematic_run(franka, "daqp", 200)
    osqp = _kinematic_run(franka, "osqp", 200)
    assert np.ptp(daqp, axis=0).max() > 0.05  # [rad] the run moves the arm
    assert np.max(np.abs(daqp - osqp)) < 1e-6
    assert np.max(np.abs(box - daqp)) < 1e-6


def test_tool_frame_none(franka: PinkRobot) -> None:
    """tool_frame=None: the robot's configured tool frame (the seed: the model's last frame,
    which pinkctl falls back to when the robot has none configured)."""
    names = list(franka.model.names[1:])
    controller = PinkIKController(franka, names, [franka.tool_frame], dt=DT)
    assert controller.get_frame_task().frame == franka.tool_frame == "panda_hand_tcp"
    bare = dataclasses.replace(franka, tool_frame=None)
    last = franka.model.frames[franka.model.nframes - 1].name
    controller = PinkIKController(bare, names, [last], dt=DT)
    assert controller.get_frame_task().frame == last


def test_ChainedController_and_TrajectoryFollower_take_the_controller(franka: PinkRobot) -> None:
    """Integration: a TrajectoryFollower chained into the controller (ChainedController, the
    demo's loop) drives the tool along a Cartesian trajectory."""
    names = list(franka.model.names[1:])
    frame = franka.tool_frame
    assert frame is not None
    data = franka.model.createData()
    pin.framesForwardKinematics(franka.model, data, franka.q0)
    home = data.oMf[franka.model.getFrameId(frame)].copy()
    quaternion = pin.Quaternion(home.rotation)
    trajectory = FigureEightTrajectory(
        frame,
        home.translation,
        half_width=0.05,
        period=2.0,
        orientation=[quaternion.w, quaternion.x, quaternion.y, quaternion.z],
    )
    follower = TrajectoryFollower()
    follower.set_trajectory(trajectory)
    chain = ChainedController([follower, PinkIKController(franka, names, [frame], dt=DT)])
    q = franka.q0.copy()

    def estimate() -> RobotState:
        values = np.array([q[franka.model.joints[franka.model.getJointId(n)].idx_q] for n in names])
        return RobotState(joints=JointState.from_name(names, positions=(names, values)))

    assert chain.reset(estimate(), None, 0.0)
    for k in range(1, 101):
        out = chain.forward(estimate(), None, k * DT)
        assert out is not None
        for name, value in zip(out.joints.position_names, out.joints.positions):
            q[franka.model.joints[franka.model.getJointId(name)].idx_q] = value
    pin.framesForwardKinematics(franka.model, data, q)
    reached = data.oMf[franka.model.getFrameId(frame)].translation
    expected = trajectory.get_target_state(100 * DT).sites.get_position(frame)
    assert np.linalg.norm(reached - home.translation) > 0.01  # it moved along the figure
    assert np.linalg.norm(reached - expected) < 0.005


# ---------------------------------------------------------------------------- impl.utils
def test_impl_utils_module_path() -> None:
    """``from ...impl.utils import <name>``: the four utilities under the seed's names, the
    very functions of pinkctl.core."""
    utils = importlib.import_module("pinkctl.impl.utils")
    poses = importlib.import_module("pinkctl.core.poses")
    joints = importlib.import_module("pinkctl.core.joints")
    assert utils.isaac_sim_position_quaternion_to_se3 is poses.pose_to_se3
    assert utils.se3_to_isaac_sim_position_quaternion is poses.se3_to_pose
    assert utils.map_joint_positions_to_pinocchio is joints.joint_positions_to_configuration
    assert utils.map_pinocchio_velocity_to_joint_state is joints.velocity_to_joint_state
    assert sorted(utils.__all__) == sorted(
        [
            "isaac_sim_position_quaternion_to_se3",
            "se3_to_isaac_sim_position_quaternion",
            "map_joint_positions_to_pinocchio",
            "map_pinocchio_velocity_to_joint_state",
        ]
    )


def test_impl_utils_isaac_sim_position_quaternion_to_se3() -> None:
    """(position, quaternion (w, x, y, z)) -> SE3 and back; ValueError on wrong sizes."""
    from pinkctl.impl.utils import (
        isaac_sim_position_quaternion_to_se3,
        se3_to_isaac_sim_position_quaternion,
    )

    half = np.sqrt(0.5)
    transform = isaac_sim_position_quaternion_to_se3([0.1, 0.2, 0.3], [half, 0.0, 0.0, half])
    np.testing.assert_allclose(transform.translation, [0.1, 0.2, 0.3])
    np.testing.assert_allclose(transform.rotation @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], atol=1e-12)
    position, quaternion = se3_to_isaac_sim_position_quaternion(transform)
    assert position.shape == (3,) and quaternion.shape == (4,)
    np.testing.assert_allclose(quaternion, [half, 0.0, 0.0, half])
    with pytest.raises(ValueError):
        isaac_sim_position_quaternion_to_se3([0.0, 0.0], [1.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError):
        isaac_sim_position_quaternion_to_se3([0.0, 0.0, 0.0], [1.0, 0.0, 0.0])


def test_impl_utils_map_joint_positions_to_pinocchio(franka: PinkRobot) -> None:
    """Named positions into q (model.nq); joints not named keep q_current."""
    from pinkctl.impl.utils import map_joint_positions_to_pinocchio

    model = franka.model
    q = map_joint_positions_to_pinocchio(
        ["panda_joint2", "panda_joint4"], np.array([0.3, -1.0]), model, franka.q0
    )
    assert q.shape == (model.nq,)
    for name, value in (("panda_joint2", 0.3), ("panda_joint4", -1.0)):
        assert q[model.joints[model.getJointId(name)].idx_q] == value
    first = model.joints[model.getJointId("panda_joint1")].idx_q
    assert q[first] == franka.q0[first]
    with pytest.raises(ValueError):
        map_joint_positions_to_pinocchio(["panda_joint2"], np.array([0.3, 0.1]), model)


def test_impl_utils_map_pinocchio_velocity_to_joint_state(franka: PinkRobot) -> None:
    """A tangent velocity integrated over dt into positions and velocities of the controlled
    joints, in the robot's joint space order."""
    from pinkctl.impl.utils import map_pinocchio_velocity_to_joint_state

    model = franka.model
    controlled = franka.controlled_joint_names
    velocity = np.zeros(model.nv)
    index = model.joints[model.getJointId("panda_joint3")].idx_v
    velocity[index] = 0.5
    current = np.array([franka.q0[model.joints[model.getJointId(n)].idx_q] for n in controlled])
    state = map_pinocchio_velocity_to_joint_state(
        velocity, model, controlled, list(model.names[1:]), 0.1, franka.q0, current
    )
    positions = state.get_positions(controlled)
    k = controlled.index("panda_joint3")
    assert positions[k] == pytest.approx(current[k] + 0.05)
    np.testing.assert_array_equal(np.delete(positions, k), np.delete(current, k))
    assert state.get_velocities(["panda_joint3"])[0] == 0.5
    with pytest.raises(ValueError):
        map_pinocchio_velocity_to_joint_state(
            velocity[:-1], model, controlled, controlled, 0.1, franka.q0, current
        )


def _tick_toward(controller: PinkIKController, franka: PinkRobot, offset) -> np.ndarray:
    """One tick from home toward the tool's home pose moved by ``offset`` [m] and turned 0.2
    rad about world z: the joint velocity command."""
    names = list(franka.joint_names)
    positions = np.array([franka.home_positions()[n] for n in names])
    estimate = RobotState(joints=JointState.from_name(names, positions=(names, positions)))
    assert controller.reset(estimate, None, 0.0)
    frame = controller.get_frame_task().frame
    home = controller.configuration.get_transform_frame_to_world(frame)  # type: ignore[union-attr]
    turned = pin.utils.rpyToMatrix(0.0, 0.0, 0.2) @ home.rotation
    w, x, y, z = pin.Quaternion(turned).coeffs()[[3, 0, 1, 2]]
    setpoint = RobotState(
        sites=SpatialState.from_name(
            [frame],
            positions=([frame], (home.translation + offset).reshape(1, 3)),
            orientations=([frame], np.array([[w, x, y, z]])),
        )
    )
    out = controller.forward(estimate, setpoint, DT)
    assert out is not None and out.joints.velocities is not None
    return out.joints.velocities


def test_position_cost_and_orientation_cost_scalar_or_three_values(franka: PinkRobot) -> None:
    """[cost]/[m] and [cost]/[rad], one value for all three axes or one per axis; a zero axis
    is left free (the tool may move along it)."""
    names = list(franka.joint_names)
    frame = [franka.tool_frame]
    scalar = PinkIKController(franka, names, frame, dt=DT, position_cost=2.0, orientation_cost=0.5)
    task = scalar.get_frame_task()
    np.testing.assert_array_equal(task.cost, [2.0, 2.0, 2.0, 0.5, 0.5, 0.5])
    per_axis = PinkIKController(
        franka, names, frame, dt=DT, position_cost=[1.0, 1.0, 0.0], orientation_cost=[0, 0, 0]
    )
    np.testing.assert_array_equal(per_axis.get_frame_task().cost, [1, 1, 0, 0, 0, 0])
    # a 2 cm step along z is free with a zero z cost: the command does not chase it
    kept = _tick_toward(scalar, franka, [0.0, 0.0, 0.02])
    free = _tick_toward(per_axis, franka, [0.0, 0.0, 0.02])
    assert np.linalg.norm(free) < 0.05 * np.linalg.norm(kept)
    with pytest.raises(ValueError, match="position_cost"):
        PinkIKController(franka, names, frame, dt=DT, position_cost=[1.0, 1.0])


def test_posture_cost_0_or_None_means_no_posture_task(franka: PinkRobot) -> None:
    names = list(franka.joint_names)
    frame = [franka.tool_frame]
    with_posture = PinkIKController(franka, names, frame, dt=DT, posture_cost=1e-3)
    posture = with_posture.get_posture_task()
    assert posture is not None and posture in with_posture.tasks
    np.testing.assert_array_equal(posture.cost, 1e-3)
    for cost in (0.0, None):
        controller = PinkIKController(franka, names, frame, dt=DT, posture_cost=cost)
        assert controller.get_posture_task() is None
        assert len(controller.tasks) == 1  # the frame task alone


def test_get_frame_task_and_get_posture_task_are_the_tasks_the_tick_solves(
    franka: PinkRobot,
) -> None:
    """The returned pink tasks are live: a cost changed on them changes the next tick."""
    names = list(franka.joint_names)
    controller = PinkIKController(franka, names, [franka.tool_frame], dt=DT)
    frame_task, posture_task = controller.get_frame_task(), controller.get_posture_task()
    assert frame_task is controller.tasks[0] and posture_task is controller.tasks[1]
    before = _tick_toward(controller, franka, [0.0, 0.0, 0.02])
    frame_task.set_orientation_cost(0.0)  # pink's own setter
    after = _tick_toward(controller, franka, [0.0, 0.0, 0.02])
    assert np.abs(after - before).max() > 1e-3  # the 0.2 rad turn no longer asked for
