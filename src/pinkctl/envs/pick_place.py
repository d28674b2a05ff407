"""Carry the block to a goal on the table: the seed's ``SO101PickPlaceGymEnv`` and pinkctl's
registered ``pinkctl/SO101PickPlace-v0`` (:class:`SO101PickPlaceEnv`).

The scene and the block are the pick-cube ones, with a green disc marking the goal. Block and
goal sit at fixed places, or with ``random_block_position`` both anywhere in
:data:`~pinkctl.envs.pick_cube.SAMPLING_BOUNDS`, at least :data:`MIN_GOAL_DISTANCE` apart
(base frame).

* Success: the block has been *carried*: its centre rose :data:`MIN_CARRY_RISE` above its
  start at some step of the episode (pushing it to the goal does not count), and it now rests
  on the table (centre within :data:`REST_TOLERANCE` of its starting height) with its centre
  within :data:`PLACE_TOLERANCE` of the goal, horizontally.
* Reward: 1 on success, else 0 (sparse only).
* Termination: on success, or when the block leaves :data:`WORKSPACE_XY`. Truncation:
  200 steps (20 s) through the registered id.

``environment_state`` is the block's centre followed by the goal (metres, in ``frame``).
By default the IK keeps the gripper pointing down and the action moves the grasp point
between the jaws, and the jaw pads collide: without them the block turns in the jaws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .pick_cube import FIXED_BLOCK_XY, PINKCTL_OPTIONS, SO101PickCubeGymEnv, TaskArguments
from .rendering import GymRenderingSpec

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "FIXED_GOAL_XY",
    "MIN_CARRY_RISE",
    "MIN_GOAL_DISTANCE",
    "PLACE_TOLERANCE",
    "SO101PickPlaceEnv",
    "SO101PickPlaceGymEnv",
    "WORKSPACE_XY",
]

FIXED_GOAL_XY = np.array([0.20, -0.08])  # [m] base frame
MIN_GOAL_DISTANCE = 0.06  # [m] between block and goal when both are drawn
MIN_CARRY_RISE = 0.02  # [m]
PLACE_TOLERANCE = 0.02  # [m] horizontal distance of the block's centre to the goal
REST_TOLERANCE = 0.005  # [m]
WORKSPACE_XY = np.array([[0.0, -0.30], [0.45, 0.30]])  # [m] base frame
GOAL_DISC_HEIGHT = 0.0005  # [m] the disc's centre above the table


class SO101PickPlaceGymEnv(SO101PickCubeGymEnv):
    """SO-101 moving a block to a goal (see the module docstring for the task).

    Takes the seed's arguments of :class:`~pinkctl.envs.pick_cube.SO101PickCubeGymEnv`
    except ``reward_type`` (always sparse), with ``top_down_ik`` and ``jaw_pads`` True by
    default; ``random_block_position`` draws the goal too. pinkctl's keyword-only options are
    the pick-cube ones.
    """

    def __init__(
        self,
        seed: int | None = 0,
        control_dt: float = 0.1,
        physics_dt: float = 0.002,
        render_spec: GymRenderingSpec = GymRenderingSpec(),  # noqa: B008 (frozen)
        render_mode: str | None = "rgb_array",
        image_obs: bool = False,
        random_block_position: bool = False,
        action_scale: float = 1.0,
        top_down_ik: bool = True,
        jaw_pads: bool = True,
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
        super().__init__(
            seed,
            control_dt,
            physics_dt,
            render_spec,
            render_mode,
            image_obs,
            "sparse",
            random_block_position,
            action_scale,
            top_down_ik,
            jaw_pads,
            cartesian_bounds=cartesian_bounds,
            random_block_look=random_block_look,
            observation_layout=observation_layout,
            grasp_mode=grasp_mode,
            ik_method=ik_method,
            frame=frame,
            base_position=base_position,
            base_yaw=base_yaw,
        )
        self._goal = np.array([*FIXED_GOAL_XY, 0.0])
        self._goal_mocap = int(self.sim.model.body("goal").mocapid[0])
        self.was_carried = False

    @staticmethod
    def _environment_dim() -> int:
        return 6

    @property
    def goal_pos(self) -> np.ndarray:
        """Where the block's centre should come to rest [m], world frame."""
        return self.placement.to_world(self._goal)

    def _reset_task(self) -> None:
        if self.random_block_position:
            block_xy = self._sample_xy()
            goal_xy = self._sample_xy()
            while np.linalg.norm(goal_xy - block_xy) < MIN_GOAL_DISTANCE:
                goal_xy = self._sample_xy()
        else:
            block_xy, goal_xy = FIXED_BLOCK_XY, FIXED_GOAL_XY
        self._place_block(block_xy)
        self._goal = np.array([goal_xy[0], goal_xy[1], self._z_init])
        disc = [goal_xy[0], goal_xy[1], GOAL_DISC_HEIGHT]
        self.sim.data.mocap_pos[self._goal_mocap] = self.placement.to_world(disc)
        self.sim.forward()
        self.was_carried = False

    def _after_physics(self) -> None:
        self.was_carried = self.was_carried or self.block_rise > MIN_CARRY_RISE

    def _environment_points(self) -> np.ndarray:
        return np.stack([self._block_base(), self._goal])

    def is_placed(self) -> bool:
        """Whether the block was carried and now rests at the goal."""
        block = self._block_base()
        at_goal = np.linalg.norm(block[:2] - self._goal[:2]) <= PLACE_TOLERANCE
        resting = abs(block[2] - self._z_init) <= REST_TOLERANCE
        return bool(self.was_carried and at_goal and resting)

    def _is_success(self) -> bool:
        """Whether the task is done (the seed's hook): :meth:`is_placed`."""
        return self.is_placed()

    def _evaluate(self) -> tuple[float, bool, bool]:
        success = bool(self._is_success())  # the seed's reward: success, not _compute_reward
        xy = self._block_base()[:2]
        outside = bool(np.any(xy < WORKSPACE_XY[0]) or np.any(xy > WORKSPACE_XY[1]))
        return float(success), success, success or outside


class SO101PickPlaceEnv(SO101PickPlaceGymEnv):
    """:class:`SO101PickPlaceGymEnv` with pinkctl's defaults
    (:data:`~pinkctl.envs.pick_cube.PINKCTL_OPTIONS`, as :class:`~pinkctl.envs.pick_cube.
    SO101PickCubeEnv`). The entry point of ``pinkctl/SO101PickPlace-v0``; every keyword of
    :class:`SO101PickPlaceGymEnv` is accepted (and overrides a preset)."""

    def __init__(self, **kwargs: Unpack[TaskArguments]) -> None:
        super().__init__(**{**PINKCTL_OPTIONS, **kwargs})
