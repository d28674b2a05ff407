"""CartesianIKEnv: the gymnasium machinery shared by pinkctl's environments.

A task subclass builds its robot and scene, then calls :meth:`CartesianIKEnv._setup`; it
implements :meth:`~CartesianIKEnv._reset_task` (place objects with ``self.np_random``),
:meth:`~CartesianIKEnv._environment_state` and :meth:`~CartesianIKEnv._evaluate`. The base
class owns the simulation, the :class:`~pinkctl.envs.arm.CartesianArm`, the spaces, the
observation, rendering and the step loop.

Observation (a dict; float32 unless said otherwise; world frame, metres, radians):

* ``agent_pos``: the arm's joint positions, then (with a gripper) the measured gripper
  opening in [0, 1] (0 closed, 1 open);
* ``tcp_pose``: position and quaternion (w, x, y, z) of the action point;
* ``tcp_vel``: its linear [m/s] and angular [rad/s] velocity;
* ``environment_state``: the task's state (block, goal), or with ``image_obs``
  ``pixels`` = ``{"front": (height, width, 3) uint8}`` in its place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from numpy.typing import ArrayLike

from pinkctl import MujocoSimulation, PinkRobot

from .._validation import integer, real_array
from ..errors import InputError
from ._checks import one_of
from .arm import CartesianArm, substeps
from .rendering import RENDER_MODES, GymRenderingSpec, SceneCamera
from .scene import narrow_ik_limits, stiffen_joint_limits

__all__ = ["CartesianIKEnv"]

IMAGE_CAMERA = "front"


def _check_seed(seed: Any) -> int | None:
    """``seed`` as a non-negative int (what ``numpy.random.SeedSequence`` takes), or None."""
    return None if seed is None else integer(seed, "seed", low=0)


class CartesianIKEnv(gym.Env[dict[str, Any], np.ndarray]):
    """Base class: a robot in MuJoCo whose action point moves by Cartesian position actions.

    Action: ``[dx, dy, dz]`` in [-1, 1] (times ``action_scale`` metres), followed with a
    gripper by ``grasp`` in [0, 1], an absolute opening (0 closed, 1 open). An action is an
    array of exactly the action space's shape (``(4,)``, or ``(3,)`` without a gripper) of a
    real numeric dtype (any float or integer type), as gymnasium's ``Box.contains`` reads
    shapes and dtypes: other shapes (``(1, 4)``, ``(4, 1)``, ``(2, 2)``), booleans, strings,
    complex numbers and NaN or infinite values raise :class:`~pinkctl.errors.InputError` (a
    ``ValueError``) naming ``action``. Finite values outside the space are clipped into it.

    ``step()`` before the first ``reset()`` raises ``gymnasium.error.ResetNeeded``, as
    ``gymnasium.make``'s order-enforcing wrapper does.
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 10}

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
    ) -> None:
        super().__init__()
        seed = _check_seed(seed)
        if not isinstance(render_spec, GymRenderingSpec):
            raise InputError(f"render_spec must be a GymRenderingSpec, got {render_spec!r}")
        if not isinstance(image_obs, bool):
            raise InputError(f"image_obs must be a bool, got {image_obs!r}")
        self.n_substeps = substeps(control_dt, physics_dt)
        self.control_dt = float(control_dt)
        self.physics_dt = float(physics_dt)
        self.render_spec = render_spec
        mode = render_spec.mode if render_mode is None else render_mode
        self.render_mode = one_of(mode, "render_mode", RENDER_MODES)
        self.image_obs = image_obs
        self.reward_type = one_of(reward_type, "reward_type", ("sparse", "dense"))
        self.metadata = {**self.metadata, "render_fps": int(round(1.0 / self.control_dt))}
        self._np_random, _ = seeding.np_random(seed)
        self._needs_reset = True

    # ------------------------------------------------------------------ construction
    def _setup(
        self,
        robot: PinkRobot,
        *,
        spec_callback: Callable[[mujoco.MjSpec], None],
        point: str,
        orientation: str,
        action_scale: float,
        cartesian_bounds: ArrayLike,
        gripper: bool,
        environment_dim: int,
        floor: bool = False,
        orientation_cost: float = 0.2,
        gripper_speed: float | None = None,
    ) -> None:
        """Build the simulation, the arm and the spaces (called by the subclass once).

        ``floor``: add pinkctl's floor (below the robot's lowest point at home, or at the
        robot's configured height) instead of leaving the ground to ``spec_callback``.
        """
        self.robot = robot
        narrow_ik_limits(robot)

        def build(spec: mujoco.MjSpec) -> None:
            stiffen_joint_limits(spec)
            spec_callback(spec)

        self.sim = MujocoSimulation.from_robot(
            robot,
            timestep=self.physics_dt,
            floor=floor,
            target_marker=False,
            spec_callback=build,
        )
        # no shadow maps: a software renderer (llvmpipe) spends ~200 ms on MuJoCo's 4096^2
        # shadow maps per frame and 10-20 ms on the frame itself
        self.sim.model.light_castshadow[:] = 0
        gripper_joint = robot.gripper_joint_names[0] if gripper else None
        self.arm = CartesianArm(
            self.sim,
            robot,
            point=point,
            control_dt=self.control_dt,
            physics_dt=self.physics_dt,
            action_scale=action_scale,
            bounds=cartesian_bounds,
            orientation=orientation,
            orientation_cost=orientation_cost,
            gripper_joint=gripper_joint,
            gripper_speed=gripper_speed,
        )
        spec = self.render_spec
        self._camera = SceneCamera(
            self.sim.model, self.sim.data, width=spec.width, height=spec.height
        )
        n_agent = len(robot.controlled_joint_names) + (1 if gripper else 0)
        observation: dict[str, spaces.Space[Any]] = {
            "agent_pos": spaces.Box(-np.inf, np.inf, (n_agent,), dtype=np.float32),
            "tcp_pose": spaces.Box(-np.inf, np.inf, (7,), dtype=np.float32),
            "tcp_vel": spaces.Box(-np.inf, np.inf, (6,), dtype=np.float32),
        }
        if self.image_obs:
            frame = spaces.Box(0, 255, (spec.height, spec.width, 3), dtype=np.uint8)
            observation["pixels"] = spaces.Dict({"front": frame})
        else:
            observation["environment_state"] = spaces.Box(
                -np.inf, np.inf, (environment_dim,), dtype=np.float32
            )
        self.observation_space = spaces.Dict(observation)
        low = [-1.0, -1.0, -1.0] + ([0.0] if gripper else [])
        high = [1.0, 1.0, 1.0] + ([1.0] if gripper else [])
        self.action_space = spaces.Box(
            np.array(low, dtype=np.float32), np.array(high, dtype=np.float32), dtype=np.float32
        )
        self._gripper = gripper

    # ------------------------------------------------------------------ task hooks
    def _reset_task(self) -> None:
        """Place the task's objects (the arm is at home; ``self.np_random`` is seeded)."""
        raise NotImplementedError

    def _after_physics(self) -> None:
        """Bookkeeping after each control step, before the observation (default: none)."""

    def _environment_state(self) -> np.ndarray:
        """The task's state vector (``environment_state``)."""
        raise NotImplementedError

    def _evaluate(self) -> tuple[float, bool, bool]:
        """``(reward, success, terminated)`` of the current state."""
        raise NotImplementedError

    # ------------------------------------------------------------------ gymnasium API
    def floor_height(self) -> float | None:
        """Height of the scene's floor plane (the geom ``"floor"``) [m], None without one."""
        model = self.sim.model
        geom = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
        return float(model.geom_pos[geom][2]) if geom >= 0 else None

    @property
    def ik_point_pos(self) -> np.ndarray:
        """World position [m] of the point the action moves."""
        return self.arm.point_position()

    @property
    def ik_target(self) -> np.ndarray:
        """The action point's current target [m] (what the deltas accumulate into)."""
        return self.arm.target

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
        seed = _check_seed(seed)
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

    def step(self, action: ArrayLike) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """One control step: ``control_dt`` of simulated time, one IK solve.

        Raises:
            gymnasium.error.ResetNeeded: Before the first :meth:`reset`.
            ValueError: (:class:`~pinkctl.errors.InputError`) an action that is not an array
                of the action space's shape and a real numeric dtype, or not finite (the
                environment is left as it was).
        """
        if self._needs_reset:
            raise ResetNeeded(
                f"{type(self).__name__}.step() was called before reset(): call env.reset() first"
            )
        values = self._check_action(action)
        opening = float(values[3]) if self._gripper else None
        self.arm.apply(values[:3], opening)
        self._after_physics()
        observation = self._observation()
        reward, success, terminated = self._evaluate()
        info = {"is_success": success, "succeed": success}
        if self.render_mode == "human":
            self.render()
        return observation, float(reward), bool(terminated), False, info

    def _observation(self) -> dict[str, Any]:
        arm = self.arm
        agent = arm.joint_positions()
        if self._gripper:
            agent = np.append(agent, arm.gripper_opening())
        observation: dict[str, Any] = {
            "agent_pos": agent.astype(np.float32),
            "tcp_pose": arm.point_pose().astype(np.float32),
            "tcp_vel": arm.point_velocity().astype(np.float32),
        }
        if self.image_obs:
            observation["pixels"] = {"front": self._camera.frame(IMAGE_CAMERA)}
        else:
            observation["environment_state"] = self._environment_state().astype(np.float32)
        return observation

    def render(self) -> np.ndarray | None:  # type: ignore[override]
        """An RGB frame from ``render_spec.camera_id`` (``"rgb_array"``), or draw it in the
        viewer window and return None (``"human"``)."""
        if self.render_mode == "human":
            self._camera.show()
            return None
        return self._camera.frame(self.render_spec.camera_id)

    def close(self) -> None:
        """Release the renderer, the viewer and the simulation's renderers."""
        camera = getattr(self, "_camera", None)
        if camera is not None:
            camera.close()
        sim = getattr(self, "sim", None)
        if sim is not None:
            sim.close()
