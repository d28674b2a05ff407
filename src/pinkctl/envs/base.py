"""CartesianIKEnv: the gymnasium machinery shared by pinkctl's environments.

A task subclass builds its robot and scene, then calls :meth:`CartesianIKEnv._setup`; it
implements :meth:`~CartesianIKEnv._reset_task` (place objects with ``self.np_random``),
:meth:`~CartesianIKEnv._environment_points` and :meth:`~CartesianIKEnv._evaluate`. The base
class owns the simulation, the :class:`~pinkctl.envs.arm.CartesianArm`, the spaces, the
observation, rendering and the step loop.

The robot stands at a placement (``base_position``, ``base_yaw``; see
:mod:`pinkctl.envs.placement`): the task is laid out in its base frame and moved with it.
``frame`` says whether the observation and the action deltas are in world or base axes.

Observation (a dict; float32 unless said otherwise; metres, radians; positions in ``frame``):

* ``agent_pos``: the arm's joint positions, then (with a gripper) the measured gripper
  opening in [0, 1] (0 closed, 1 open);
* ``tcp_pose``: position and quaternion (w, x, y, z) of the action point;
* ``tcp_vel``: its linear [m/s] and angular [rad/s] velocity;
* ``environment_state``: the task's points (block, goal), or with ``image_obs``
  ``pixels`` = ``{"front": (height, width, 3) uint8}`` in its place.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from numpy.typing import ArrayLike

from pinkctl import MujocoSimulation, PinkRobot

from .._validation import boolean, choice, real_array
from ..errors import InputError
from ..world import World
from .arm import CartesianArm
from .mujoco_env import MujocoGymEnv, check_seed
from .placement import Placement
from .rendering import RENDER_MODES, GymRenderingSpec
from .scene import narrow_ik_limits
from .seed_arm import MujocoIKArm

__all__ = ["CartesianIKEnv"]

IMAGE_CAMERA = "front"


def unbounded(size: int) -> spaces.Box:
    """A float32 observation box of ``size`` values without bounds."""
    return spaces.Box(-np.inf, np.inf, (size,), dtype=np.float32)


class CartesianIKEnv(MujocoGymEnv):
    """Base class: a robot in MuJoCo whose action point moves by Cartesian position actions.

    Action: ``[dx, dy, dz]`` in [-1, 1] (times ``action_scale`` metres, in ``frame``'s axes),
    followed with a gripper by ``grasp`` in [0, 1], an absolute opening (0 closed, 1 open).
    An action is an array of exactly the action space's shape (``(4,)``, or ``(3,)`` without
    a gripper) of a real numeric dtype (any float or integer type), as gymnasium's
    ``Box.contains`` reads shapes and dtypes: other shapes (``(1, 4)``, ``(4, 1)``,
    ``(2, 2)``), booleans, strings, complex numbers and NaN or infinite values raise
    :class:`~pinkctl.errors.InputError` (a ``ValueError``) naming ``action``. Finite values
    outside the space are clipped into it.

    ``step()`` before the first ``reset()`` raises ``gymnasium.error.ResetNeeded``, as
    ``gymnasium.make``'s order-enforcing wrapper does.
    """

    def __init__(
        self,
        *,
        seed: int | None,
        control_dt: float,
        physics_dt: float,
        render_spec: GymRenderingSpec,
        render_mode: str | None,
        image_obs: bool,
        reward_type: str,
        frame: str = "world",
        base_position: ArrayLike = (0.0, 0.0, 0.0),
        base_yaw: float = 0.0,
    ) -> None:
        super().__init__(None, seed, control_dt, physics_dt, render_spec)
        self.image_obs = boolean(image_obs, "image_obs")
        mode = render_spec.mode if render_mode is None else render_mode
        self.render_mode = choice(mode, "render_mode", RENDER_MODES)
        self.reward_type = choice(reward_type, "reward_type", ("sparse", "dense"))
        #: Where the robot's base stands, and the frame of observations and actions.
        self.placement = Placement(base_position, base_yaw, frame)
        self._needs_reset = True

    @property
    def frame(self) -> str:
        """``"world"`` or ``"base"``: the frame of the observation and of the action deltas."""
        return self.placement.frame

    # ------------------------------------------------------------------ construction
    def _setup(
        self,
        robot: PinkRobot,
        sim: MujocoSimulation,
        *,
        point: str,
        orientation: str,
        action_scale: float,
        cartesian_bounds: ArrayLike,
        gripper: bool,
        environment_dim: int,
        orientation_cost: float = 0.2,
        gripper_range: tuple[float, float] | None = None,
        gripper_speed: float | None = None,
        ik_method: str = "pinkctl",
        world: World | None = None,
        collision_margin: float = 0.01,
    ) -> None:
        """Adopt the simulation (built with :func:`~pinkctl.envs.scene.build_simulation` and
        this env's placement), build the arm (pinkctl's QP, or with another ``ik_method`` the
        seed's MuJoCo IK: :class:`~pinkctl.envs.seed_arm.MujocoIKArm`) and the spaces (called
        by the subclass once). ``world`` and ``collision_margin``: what the arm's controller
        avoids (:class:`~pinkctl.envs.arm.CartesianArm`)."""
        self.robot = robot
        narrow_ik_limits(robot)
        self.sim = sim
        self._attach(sim.model, sim.data)
        gripper_joint = robot.gripper_joint_names[0] if gripper else None
        seed_ik: dict[str, Any] = {} if ik_method == "pinkctl" else {"ik_method": ik_method}
        self.arm = (MujocoIKArm if seed_ik else CartesianArm)(
            sim,
            robot,
            point=point,
            control_dt=self.control_dt,
            physics_dt=self.physics_dt,
            action_scale=action_scale,
            bounds=cartesian_bounds,
            orientation=orientation,
            orientation_cost=orientation_cost,
            gripper_joint=gripper_joint,
            gripper_range=gripper_range,
            gripper_speed=gripper_speed,
            placement=self.placement,
            world=world,
            collision_margin=collision_margin,
            **seed_ik,
        )
        n_agent = len(robot.controlled_joint_names) + (1 if gripper else 0)
        observation: dict[str, spaces.Space[Any]] = {
            "agent_pos": unbounded(n_agent),
            "tcp_pose": unbounded(7),
            "tcp_vel": unbounded(6),
        }
        if self.image_obs:
            observation["pixels"] = self._pixels_space()
        else:
            observation["environment_state"] = unbounded(environment_dim)
        self.observation_space = spaces.Dict(observation)
        low = [-1.0, -1.0, -1.0] + ([0.0] if gripper else [])
        high = [1.0, 1.0, 1.0] + ([1.0] if gripper else [])
        self.action_space = spaces.Box(
            np.array(low, dtype=np.float32), np.array(high, dtype=np.float32), dtype=np.float32
        )
        self._gripper = gripper

    def _pixels_space(self) -> spaces.Dict:
        """``pixels``: the ``front`` camera's (height, width, 3) uint8 frames."""
        spec = self.render_spec
        return spaces.Dict({"front": spaces.Box(0, 255, (spec.height, spec.width, 3), np.uint8)})

    # ------------------------------------------------------------------ task hooks
    def _reset_task(self) -> None:
        """Place the task's objects (the arm is at home; ``self.np_random`` is seeded)."""
        raise NotImplementedError

    def _after_physics(self) -> None:
        """Bookkeeping after each control step, before the observation (default: none)."""

    def _environment_points(self) -> np.ndarray:
        """The task's points (k, 3) [m], base frame: ``environment_state`` is their
        concatenation in the observation frame."""
        raise NotImplementedError

    def _evaluate(self) -> tuple[float, bool, bool]:
        """``(reward, success, terminated)`` of the current state."""
        raise NotImplementedError

    # ------------------------------------------------------------------ gymnasium API
    def floor_height(self) -> float | None:
        """Height of the scene's floor plane (the geom ``"floor"``) above the robot's base
        [m], None without one."""
        model = self.sim.model
        geom = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
        if geom < 0:
            return None
        return float(model.geom_pos[geom][2] - self.placement.position[2])

    @property
    def ik_point_pos(self) -> np.ndarray:
        """World position [m] of the point the action moves."""
        return self.placement.to_world(self.arm.point_position())

    @property
    def ik_target(self) -> np.ndarray:
        """The action point's current target [m], world frame (what the deltas accumulate
        into; the arm keeps it in the base frame)."""
        return self.placement.to_world(self.arm.target)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Arm at home, task objects placed; returns ``(observation, info)``.

        Args:
            seed: Re-seeds the environment's generator: a non-negative integer, or None to
                continue its sequence.
            options: None or an empty dict (these environments take no reset options).

        Raises:
            ValueError: (:class:`~pinkctl.errors.InputError`) a negative or non-integer
                ``seed``, or ``options`` that are not empty.
        """
        seed = check_seed(seed)
        if options is not None and (not isinstance(options, dict) or options):
            raise InputError(
                f"options: {type(self).__name__} takes no reset options, got {options!r}"
            )
        super().reset(seed=seed)
        self._reset_task()
        self.arm.reset()
        self._needs_reset = False
        return self._observation(), {}

    def _check_action(self, action: ArrayLike) -> np.ndarray:
        box = self.action_space
        assert isinstance(box, spaces.Box)
        values = real_array(action, "action", box.shape)
        return np.clip(values, box.low, box.high)

    def _require_reset(self, what: str) -> None:
        if self._needs_reset:
            raise ResetNeeded(
                f"{type(self).__name__}.{what}() was called before reset(): call env.reset() first"
            )

    def _apply(self, action: ArrayLike) -> None:
        """Check ``action`` (nothing moves if it is rejected), then one control step."""
        values = self._check_action(action)
        opening = float(values[3]) if self._gripper else None
        self.arm.apply(self.placement.action_to_base(values[:3]), opening)

    def step(self, action: ArrayLike) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """One control step: ``control_dt`` of simulated time, one IK solve.

        Raises:
            gymnasium.error.ResetNeeded: Before the first :meth:`reset`.
            ValueError: (:class:`~pinkctl.errors.InputError`) an action that is not an array
                of the action space's shape and a real numeric dtype, or not finite (the
                environment is left as it was).
        """
        self._require_reset("step")
        self._apply(action)
        self._after_physics()
        observation = self._observation()
        reward, success, terminated = self._evaluate()
        info = {"is_success": success, "succeed": success}
        if self.render_mode == "human":
            self.render()
        return observation, float(reward), bool(terminated), False, info

    def _environment_state(self) -> np.ndarray:
        """``environment_state``: the task's points in the observation frame, concatenated."""
        points = np.asarray(self._environment_points(), dtype=float).reshape(-1, 3)
        return self.placement.observed_point(points).reshape(-1)

    def _tcp(self) -> dict[str, np.ndarray]:
        """``tcp_pose`` and ``tcp_vel`` of the action point, in the observation frame."""
        arm, placement = self.arm, self.placement
        rotation = placement.observed_rotation(arm.point_rotation())
        quaternion = np.empty(4)
        mujoco.mju_mat2Quat(quaternion, np.ascontiguousarray(rotation).reshape(-1))
        position = placement.observed_point(arm.point_position())
        velocity = arm.point_velocity()
        linear = placement.observed_vector(velocity[:3])
        angular = placement.observed_vector(velocity[3:])
        return {
            "tcp_pose": np.concatenate([position, quaternion]).astype(np.float32),
            "tcp_vel": np.concatenate([linear, angular]).astype(np.float32),
        }

    def _observation(self) -> dict[str, Any]:
        arm = self.arm
        agent = arm.joint_positions()
        if self._gripper:
            agent = np.append(agent, arm.gripper_opening())
        observation: dict[str, Any] = {"agent_pos": agent.astype(np.float32), **self._tcp()}
        if self.image_obs:
            observation["pixels"] = {"front": self._front_frame()}
        else:
            observation["environment_state"] = self._environment_state().astype(np.float32)
        return observation

    def _front_frame(self) -> np.ndarray:
        """The ``"front"`` camera's frame at ``render_spec``'s size (image observations)."""
        assert self._camera is not None
        return self._camera.frame(IMAGE_CAMERA)

    def close(self) -> None:
        """Release the renderer, the viewer and the simulation's renderers."""
        super().close()
        sim = getattr(self, "sim", None)
        if sim is not None:
            sim.close()
