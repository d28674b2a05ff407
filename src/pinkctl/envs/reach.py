"""ReachEnv: bring the tool to a goal, with any bundled robot (``pinkctl/Reach-v0``).

The robot (keyword ``robot``, any name of :func:`pinkctl.supported_robots`) stands on
pinkctl's floor (just below its lowest point at home, see :class:`~pinkctl.MujocoSimulation`);
its tool frame is the action point. Arms with six or more joints keep the tool's home
orientation (softly: :data:`HOLD_ORIENTATION_COST`); smaller ones (the 5-DoF SO-101) move it
by position only. The IK does not avoid self-collision: the goal check below keeps the goals
whose IK pose is collision-free, not every path to them.

Sizes scale with the robot's *reach* ``R``: the largest distance of a frame of the home pose
from the base (SO-101 0.28 m, Franka 0.76 m, UR10 1.02 m).

* Goals: uniform in a box centred on the tool's home position, half-size ``0.3 R`` per axis,
  no lower than ``0.1 R`` above the floor and at least ``0.1 R`` from the start; a draw is
  kept only if a local IK solve from home reaches it (with the held orientation where there
  is one) to a pose without self-collision, so every goal is reachable without passing a
  singularity.
* Success: the tool within ``success_threshold`` of the goal. Reward: ``"dense"`` (default)
  minus that distance [m]; ``"sparse"``: 1 on success, else 0.
* Termination: on success. Truncation: 50 steps (5 s) through the registered id.

``environment_state`` is the goal (metres, in ``frame``); with ``image_obs`` the goal is a
green sphere in the ``pixels.front`` image. Goals, bounds and the camera are laid out in the
robot's base frame and move with its placement (``base_position``, ``base_yaw``).
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
import pinocchio as pin

from pinkctl import IKSolver, PinkRobot, load_pink_supported_robot, supported_robots

from .._validation import choice, positive_number
from ..errors import InputError
from .base import CartesianIKEnv
from .rendering import GymRenderingSpec
from .scene import add_front_camera, add_goal_marker, build_simulation

__all__ = ["ReachEnv", "robot_reach"]

GOAL_HALF_SIZE = 0.30  # times the reach
GOAL_MIN_HEIGHT = 0.10  # times the reach
GOAL_MIN_DISTANCE = 0.10  # times the reach
BOUNDS_MARGIN = 0.10  # times the reach: the target box is the goal box widened by this
MAX_GOAL_DRAWS = 200
FULL_POSE_JOINTS = 6
# [cost]/[rad] against 1 [cost]/[m]: the held orientation is soft, so an arm at a joint limit
# gives up some orientation rather than stopping centimetres short of the goal
HOLD_ORIENTATION_COST = 0.02


def robot_reach(robot: PinkRobot) -> float:
    """Largest distance of a frame from the world origin at the home pose [m]."""
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    return float(max(np.linalg.norm(frame.translation) for frame in data.oMf))


def _tool_home(robot: PinkRobot, name: str) -> tuple[str, pin.SE3]:
    """The robot's tool frame and its pose at home (world frame).

    Raises:
        InputError: A robot without a tool frame.
    """
    tool = robot.tool_frame
    if tool is None:
        raise InputError(f"robot {name!r} has no tool frame")
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    return tool, data.oMf[robot.model.getFrameId(tool)].copy()


class ReachEnv(CartesianIKEnv):
    """Reach a goal with the tool of any bundled robot (see the module docstring).

    Args:
        robot: Name of a bundled robot (:func:`pinkctl.supported_robots`).
        seed: Seed of the environment's generator (the goals).
        control_dt: Simulated time per ``step()`` [s]; one IK solve each.
        physics_dt: MuJoCo step [s]; ``floor(control_dt / physics_dt)`` substeps per step.
        render_spec: Frame size and camera of ``render()`` and of image observations.
        render_mode: ``"rgb_array"`` or ``"human"``; None: ``render_spec.mode``.
        image_obs: Observe ``pixels.front`` instead of ``environment_state``.
        reward_type: ``"dense"`` or ``"sparse"``.
        action_scale: Metres per unit of action, > 0 (default 5 cm per step).
        cartesian_bounds: (2, 3) box [m] the tool target is clipped to; None: the goal box
            widened by ``0.1 R`` on each side.
        success_threshold: Distance of the tool to the goal that counts as reached [m], > 0.
        frame: ``"world"`` or ``"base"``: axes of the observation and the action deltas.
        base_position: Where the robot's base stands in the world [m].
        base_yaw: The base's rotation about the world's vertical [rad].

    Raises:
        ValueError: On an unknown robot or any malformed argument.
    """

    def __init__(
        self,
        *,
        robot: str = "so101",
        seed: int | None = 0,
        control_dt: float = 0.1,
        physics_dt: float = 0.002,
        render_spec: GymRenderingSpec = GymRenderingSpec(),  # noqa: B008 (frozen)
        render_mode: str | None = None,
        image_obs: bool = False,
        reward_type: str = "dense",
        action_scale: float = 0.05,
        cartesian_bounds: Any = None,
        success_threshold: float = 0.01,
        frame: str = "world",
        base_position: Any = (0.0, 0.0, 0.0),
        base_yaw: float = 0.0,
    ) -> None:
        super().__init__(
            seed=seed,
            control_dt=control_dt,
            physics_dt=physics_dt,
            render_spec=render_spec,
            render_mode=render_mode,
            image_obs=image_obs,
            reward_type=reward_type,
            frame=frame,
            base_position=base_position,
            base_yaw=base_yaw,
        )
        available = supported_robots()
        choice(robot, "robot", available)
        self.success_threshold = positive_number(success_threshold, "success_threshold")
        pink_robot = load_pink_supported_robot(robot)
        tool, home = _tool_home(pink_robot, robot)
        self.robot_name = robot
        self.reach = robot_reach(pink_robot)
        self.home_position = home.translation.copy()
        self.hold_orientation = len(pink_robot.controlled_joint_names) >= FULL_POSE_JOINTS
        reach = self.reach
        half = GOAL_HALF_SIZE * reach
        self.goal_box = np.array([self.home_position - half, self.home_position + half])
        default_bounds = cartesian_bounds is None
        if default_bounds:  # raised above the floor once the scene (and its floor) exists
            cartesian_bounds = self._widened(self.goal_box)
        self._home_pose = home.copy()
        sim = build_simulation(
            pink_robot,
            self._build_scene,
            physics_dt=self.physics_dt,
            floor=True,
            placement=self.placement,
        )
        self._setup(
            pink_robot,
            sim,
            point=tool,
            orientation="hold" if self.hold_orientation else "free",
            action_scale=action_scale,
            cartesian_bounds=cartesian_bounds,
            gripper=False,
            environment_dim=3,
            orientation_cost=HOLD_ORIENTATION_COST,
        )
        self._raise_goals(default_bounds)
        # after _setup: the goals must be reachable within the IK's (narrowed) joint ranges
        self._ik = IKSolver(
            pink_robot,
            frame=tool,
            position_only=not self.hold_orientation,
            position_tolerance=1e-4,
            orientation_tolerance=1e-3,
        )
        self._goal_mocap = int(self.sim.model.body("goal").mocapid[0])
        self._scratch = mujoco.MjData(self.sim.model)  # goal checks never touch sim.data
        self._home_penetrations = 0
        self._goal = self.home_position.copy()

    def _raise_goals(self, default_bounds: bool) -> None:
        """Lift the goal box above the scene's floor (by :data:`GOAL_MIN_HEIGHT` of the
        reach), and the default target bounds with it."""
        reach = self.reach
        floor = self.floor_height()
        if floor is not None:
            low = floor + GOAL_MIN_HEIGHT * reach
            self.goal_box[0, 2] = max(self.goal_box[0, 2], low)
            self.goal_box[1, 2] = max(self.goal_box[1, 2], low + GOAL_HALF_SIZE * reach)
        if default_bounds:
            self.arm.bounds = self._widened(self.goal_box)

    def _widened(self, box: np.ndarray) -> np.ndarray:
        """The goal box widened by :data:`BOUNDS_MARGIN` times the reach on each side."""
        return box + np.array([[-1.0], [1.0]]) * BOUNDS_MARGIN * self.reach

    def _build_scene(self, spec: mujoco.MjSpec) -> None:
        reach = self.reach
        centre = self.goal_box.mean(axis=0)
        eye = centre + reach * np.array([1.6, 0.0, 0.7])
        add_front_camera(spec, eye, centre)
        add_goal_marker(spec, "goal", shape="sphere", size=0.03 * reach, rgba=(0.1, 0.8, 0.2, 0.6))

    @property
    def goal_pos(self) -> np.ndarray:
        """The goal [m], world frame."""
        return self.placement.to_world(self._goal)

    def tool_distance(self) -> float:
        """Distance of the tool to the goal [m]."""
        return float(np.linalg.norm(self.arm.point_position() - self._goal))

    def _penetrations(self, positions: dict[str, float] | None = None) -> int:
        """Contacts with penetration at the home pose with ``positions`` changed."""
        model, data = self.sim.model, self._scratch
        data.qpos[:] = self.sim.data.qpos
        for name, value in (positions or {}).items():
            data.qpos[model.joint(name).qposadr[0]] = value
        mujoco.mj_forward(model, data)
        return int(np.count_nonzero(data.contact.dist[: data.ncon] < 0.0))

    def _reachable(self, goal: np.ndarray) -> bool:
        """Whether a local IK solve from home reaches ``goal`` in a pose without more
        penetrating contacts than home has (no arm folded onto itself or into the floor)."""
        target: Any = goal
        if self.hold_orientation:
            target = pin.SE3(self._home_pose.rotation, goal)
        result = self._ik.solve(target, seed=self.robot.q0)
        if not result.success:
            return False
        return self._penetrations(result.positions) <= self._home_penetrations

    def _reset_task(self) -> None:
        self.sim.reset()
        self._home_penetrations = self._penetrations()
        low, high = self.goal_box
        minimum = GOAL_MIN_DISTANCE * self.reach
        for _ in range(MAX_GOAL_DRAWS):
            goal = self.np_random.uniform(low, high)
            if np.linalg.norm(goal - self.home_position) >= minimum and self._reachable(goal):
                break
        else:  # pragma: no cover - a robot whose home box is mostly unreachable
            raise RuntimeError(f"no reachable goal in {MAX_GOAL_DRAWS} draws for {self.robot_name}")
        self._goal = goal
        self.sim.data.mocap_pos[self._goal_mocap] = self.placement.to_world(goal)
        self.sim.forward()

    def _environment_points(self) -> np.ndarray:
        return self._goal

    def _evaluate(self) -> tuple[float, bool, bool]:
        distance = self.tool_distance()
        success = distance <= self.success_threshold
        reward = float(success) if self.reward_type == "sparse" else -distance
        return reward, success, success
