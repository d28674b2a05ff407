"""Lift a block off the table with the SO-101: the seed's ``SO101PickCubeGymEnv`` and
pinkctl's registered ``pinkctl/SO101PickCube-v0`` (:class:`SO101PickCubeEnv`).

The scene is :class:`~pinkctl.envs.so101_scene.SO101PickScene`. The block sits at
:data:`FIXED_BLOCK_XY`, or with ``random_block_position`` anywhere in :data:`SAMPLING_BOUNDS`
(uniform), base frame. Its look is the same at every reset (a 25 mm red cube, turned by 0)
unless ``random_block_look`` draws an edge length in [2, 3] cm, a colour and a yaw uniform in
[-45, 45] degrees at each reset.

* Success: the block's centre has risen :data:`LIFT_SUCCESS_HEIGHT` above where it started
  *and* the grasp point between the jaws is within :data:`NEAR_BLOCK_DISTANCE` of it.
* Reward: ``"sparse"``: 1 on success, else 0. ``"dense"``:
  ``0.3 exp(-20 d) + 0.7 clip(rise / LIFT_SUCCESS_HEIGHT, 0, 1)`` with ``d`` the grasp point's
  distance to the block's centre [m] and ``rise`` the block's rise [m].
* Termination: on success, or when the block leaves the sampling box widened by
  :data:`OUT_OF_BOUNDS_MARGIN`. Truncation: 100 steps (10 s) through the registered id.

:class:`SO101PickCubeEnv` is the same task with pinkctl's richer defaults
(:data:`PINKCTL_OPTIONS`: a randomised look, a rate-limited jaw, pinkctl's observation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
from numpy.typing import ArrayLike

from .._validation import boolean, choice
from .rendering import GymRenderingSpec
from .so101_env import CARTESIAN_BOUNDS, HOME_POSITION, TOP_DOWN_BOUNDS, SO101GymEnv
from .so101_scene import GRASP_POINT, GRIPPER_LINK, PAD_GAP

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "CARTESIAN_BOUNDS",
    "FIXED_BLOCK_XY",
    "FIXED_JAW_CLEARANCE",
    "HOME_POSITION",
    "LIFT_SUCCESS_HEIGHT",
    "PINKCTL_OPTIONS",
    "PickCubeArguments",
    "SAMPLING_BOUNDS",
    "SO101PickCubeEnv",
    "SO101PickCubeGymEnv",
    "TOP_DOWN_BOUNDS",
    "TaskArguments",
]

FIXED_BLOCK_XY = np.array([0.22, 0.0])  # [m] base frame
SAMPLING_BOUNDS = np.array([[0.16, -0.10], [0.26, 0.10]])  # [m] block (and goal) x, y
OUT_OF_BOUNDS_MARGIN = 0.05  # [m]
LIFT_SUCCESS_HEIGHT = 0.04  # [m]
NEAR_BLOCK_DISTANCE = 0.03  # [m]
MAX_BLOCK_YAW = np.pi / 4  # [rad]
FIXED_JAW_CLEARANCE = PAD_GAP / 2.0  # [m] grasp point to the fixed pad's face
#: pinkctl's richer defaults of :class:`SO101PickCubeEnv` (and the registered ids).
PINKCTL_OPTIONS: dict[str, Any] = {
    "render_mode": None,
    "random_block_look": True,
    "observation_layout": "pinkctl",
    "grasp_mode": "rate_limited",
}


class TaskArguments(TypedDict, total=False):
    """Keywords of the SO-101 tasks, but ``reward_type`` (pinkctl's presets pass them on)."""

    seed: int | None
    control_dt: float
    physics_dt: float
    render_spec: GymRenderingSpec
    render_mode: str | None
    image_obs: bool
    random_block_position: bool
    action_scale: float
    top_down_ik: bool
    jaw_pads: bool
    cartesian_bounds: ArrayLike | None
    random_block_look: bool
    observation_layout: str
    grasp_mode: str
    ik_method: str
    frame: str
    base_position: ArrayLike
    base_yaw: float


class PickCubeArguments(TaskArguments, total=False):
    """Keywords of :class:`SO101PickCubeGymEnv`."""

    reward_type: str


class SO101PickCubeGymEnv(SO101GymEnv):
    """SO-101 picking up a block (see the module docstring for the task).

    The seed's arguments keep their names, order, defaults and meaning; pinkctl's own are
    keyword-only after them.

    Args:
        seed: Seed of the environment's generator (block position, and the look with
            ``random_block_look``); ``reset(seed=...)`` re-seeds it.
        control_dt: Simulated time per ``step()`` [s] (0.1 s: 10 Hz); one IK solve each.
        physics_dt: MuJoCo step [s]; ``floor(control_dt / physics_dt)`` substeps per step.
        render_spec: Frame size and camera of ``render()`` (``"front"`` unless it names
            another) and of image observations.
        render_mode: ``"rgb_array"`` or ``"human"``; None: ``render_spec.mode``.
        image_obs: Observe ``pixels.front`` (the front camera) instead of
            ``environment_state``.
        reward_type: ``"sparse"`` or ``"dense"``.
        random_block_position: Draw the block's position at each reset instead of
            :data:`FIXED_BLOCK_XY`.
        action_scale: Metres per unit of ``dx, dy, dz`` (not of ``grasp``), > 0. The default
            1 m lets one action cross the workspace: keep |actions| small, or lower it.
        top_down_ik: Move the grasp point between the jaws with the gripper pointing straight
            down, instead of the tool frame ``gripper_frame_link`` by position only.
        jaw_pads: Make the fingertip pads collide.
        cartesian_bounds: (2, 3) box [m] the target is clipped to (base frame); None:
            :data:`CARTESIAN_BOUNDS`, or :data:`TOP_DOWN_BOUNDS` with ``top_down_ik``.
        random_block_look: Draw the block's edge, colour and yaw at each reset.
        observation_layout: ``"seed"`` or ``"pinkctl"`` (see
            :class:`~pinkctl.envs.so101_env.SO101GymEnv`).
        grasp_mode: ``"direct"`` or ``"rate_limited"``.
        ik_method: ``"pinkctl"``, or the seed's ``"levenberg_marquardt"`` or
            ``"pseudoinverse"`` on the MuJoCo model (see
            :class:`~pinkctl.envs.so101_env.SO101GymEnv`).
        frame: ``"world"`` or ``"base"``: axes of the observation and the action deltas.
        base_position: Where the robot's base stands in the world [m].
        base_yaw: The base's rotation about the world's vertical [rad].

    Raises:
        ValueError: On any malformed argument (the message names it).
    """

    def __init__(
        self,
        seed: int | None = 0,
        control_dt: float = 0.1,
        physics_dt: float = 0.002,
        render_spec: GymRenderingSpec = GymRenderingSpec(),  # noqa: B008 (frozen)
        render_mode: str | None = "rgb_array",
        image_obs: bool = False,
        reward_type: str = "sparse",
        random_block_position: bool = False,
        action_scale: float = 1.0,
        top_down_ik: bool = False,
        jaw_pads: bool = False,
        *,
        cartesian_bounds: ArrayLike | None = None,
        random_block_look: bool = False,
        observation_layout: str = "seed",
        grasp_mode: str = "direct",
        ik_method: str = "pinkctl",
        frame: str = "world",
        base_position: ArrayLike = (0.0, 0.0, 0.0),
        base_yaw: float = 0.0,
    ) -> None:
        reward_type = choice(reward_type, "reward_type", ("sparse", "dense"))
        boolean(random_block_position, "random_block_position")
        boolean(random_block_look, "random_block_look")
        super().__init__(
            None,
            seed,
            control_dt,
            physics_dt,
            render_spec,
            render_mode,
            image_obs,
            HOME_POSITION,
            cartesian_bounds,
            action_scale,
            top_down_ik,
            jaw_pads,
            observation_layout=observation_layout,
            grasp_mode=grasp_mode,
            ik_method=ik_method,
            frame=frame,
            base_position=base_position,
            base_yaw=base_yaw,
        )
        self.reward_type = reward_type
        self.random_block_position = random_block_position
        self.random_block_look = random_block_look
        self.block = self.scene.block
        self._grasp_site = self.sim.model.site(GRASP_POINT).id
        self._gripper_body = self.sim.model.body(GRIPPER_LINK).id
        self._z_init = 0.0
        self._task_space(self._environment_dim())

    @staticmethod
    def _environment_dim() -> int:
        return 3

    # ------------------------------------------------------------------ state
    @property
    def block_pos(self) -> np.ndarray:
        """World position of the block's centre [m]."""
        return self.block.position(self.sim.model, self.sim.data)

    @property
    def block_half_size(self) -> float:
        """Half the block's edge length [m]."""
        return self.block.half_size(self.sim.model)

    @property
    def grasp_point_pos(self) -> np.ndarray:
        """World position of the grasp point between the jaws [m] (in every mode)."""
        return self.sim.data.site_xpos[self._grasp_site].copy()

    @property
    def jaw_axis(self) -> np.ndarray:
        """Unit world vector from the fixed jaw toward the moving jaw (the x axis of
        ``gripper_link``); the fixed pad's face is :data:`FIXED_JAW_CLEARANCE` from the grasp
        point along it, on the negative side."""
        return self.sim.data.xmat[self._gripper_body].reshape(3, 3)[:, 0].copy()

    @property
    def block_rise(self) -> float:
        """How far the block's centre is above where it started [m]."""
        return float(self.block_pos[2] - self.placement.position[2] - self._z_init)

    def _block_base(self) -> np.ndarray:
        """The block's centre in the base frame [m]."""
        return self.placement.to_base(self.block_pos)

    def _sample_xy(self) -> np.ndarray:
        return self.np_random.uniform(SAMPLING_BOUNDS[0], SAMPLING_BOUNDS[1])

    # ------------------------------------------------------------------ task
    def _place_block(self, xy: np.ndarray) -> None:
        """Block look (fixed or drawn), arm at home, block at rest at ``xy`` (base frame),
        the goal disc parked, kinematics refreshed."""
        model, data = self.sim.model, self.sim.data
        if self.random_block_look:
            look = self.block.draw(self.np_random)
            yaw = float(self.np_random.uniform(-MAX_BLOCK_YAW, MAX_BLOCK_YAW))
        else:
            look, yaw = self.block.fixed_look(), 0.0
        self.block.apply_look(model, data, look)
        self.sim.reset()
        self._home_robot()
        centre = self.placement.to_world([xy[0], xy[1], look.edge / 2.0])
        self.block.place(model, data, centre, yaw + self.placement.yaw)
        self.sim.forward()
        self._z_init = float(self._block_base()[2])

    def _reset_task(self) -> None:
        xy = self._sample_xy() if self.random_block_position else FIXED_BLOCK_XY
        self._place_block(xy)

    def _environment_points(self) -> np.ndarray:
        return self._block_base()

    def is_lifted(self) -> bool:
        """Whether the block has risen :data:`LIFT_SUCCESS_HEIGHT` and the jaws are at it."""
        near = np.linalg.norm(self.grasp_point_pos - self.block_pos) <= NEAR_BLOCK_DISTANCE
        return bool(self.block_rise >= LIFT_SUCCESS_HEIGHT and near)

    def _block_out_of_bounds(self) -> bool:
        xy = self._block_base()[:2]
        low = SAMPLING_BOUNDS[0] - OUT_OF_BOUNDS_MARGIN
        high = SAMPLING_BOUNDS[1] + OUT_OF_BOUNDS_MARGIN
        return bool(np.any(xy < low) or np.any(xy > high))

    # ------------------------------------------------------------------ the seed's hooks
    # step() and reset() go through these, under the seed's names, so that a subclass
    # written against the seed (a reward of its own, say) changes what they return.
    def _compute_observation(self) -> dict[str, Any]:
        """The observation of ``observation_layout`` (the seed's hook)."""
        return super()._observation()

    def _observation(self) -> dict[str, Any]:
        return self._compute_observation()

    def _compute_reward(self) -> float:
        """``reward_type``'s reward of the current state (the seed's hook)."""
        if self.reward_type == "sparse":
            return float(self.is_lifted())
        distance = float(np.linalg.norm(self.grasp_point_pos - self.block_pos))
        lift = float(np.clip(self.block_rise / LIFT_SUCCESS_HEIGHT, 0.0, 1.0))
        return 0.3 * float(np.exp(-20.0 * distance)) + 0.7 * lift

    def _is_success(self) -> bool:
        """Whether the task is done (the seed's hook): :meth:`is_lifted`."""
        return self.is_lifted()

    def _evaluate(self) -> tuple[float, bool, bool]:
        reward = self._compute_reward()
        success = bool(self._is_success())
        return float(reward), success, success or self._block_out_of_bounds()


class SO101PickCubeEnv(SO101PickCubeGymEnv):
    """:class:`SO101PickCubeGymEnv` with pinkctl's defaults (:data:`PINKCTL_OPTIONS`): the
    block's look drawn at every reset, a rate-limited jaw servo, pinkctl's observation
    (joints and measured opening, ``tcp_pose``, ``tcp_vel``), ``render_mode`` from
    ``render_spec``. The entry point of ``pinkctl/SO101PickCube-v0``; every keyword of
    :class:`SO101PickCubeGymEnv` is accepted (and overrides a preset)."""

    def __init__(self, **kwargs: Unpack[PickCubeArguments]) -> None:
        super().__init__(**{**PINKCTL_OPTIONS, **kwargs})
