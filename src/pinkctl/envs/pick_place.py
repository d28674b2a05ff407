"""SO101PickPlaceEnv: carry the block to a goal on the table (``pinkctl/SO101PickPlace-v0``).

The scene and the block are the pick-cube ones, with a green disc marking the goal. Block and
goal sit at fixed places, or with ``random_block_position`` both anywhere in
:data:`~pinkctl.envs.pick_cube.SAMPLING_BOUNDS`, at least :data:`MIN_GOAL_DISTANCE` apart.

* Success: the block has been *carried*: its centre rose :data:`MIN_CARRY_RISE` above its
  start at some step of the episode (pushing it to the goal does not count), and it now rests
  on the table (centre within :data:`REST_TOLERANCE` of its starting height) with its centre
  within :data:`PLACE_TOLERANCE` of the goal, horizontally.
* Reward: 1 on success, else 0 (sparse only).
* Termination: on success, or when the block leaves :data:`WORKSPACE_XY`. Truncation:
  200 steps (20 s) through the registered id.

``environment_state`` is the block's centre followed by the goal (both world frame, metres).
By default the IK keeps the gripper pointing down and the action moves the grasp point
between the jaws, and the jaw pads collide: without them the block turns in the jaws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .pick_cube import FIXED_BLOCK_XY, PickCubeArguments, SO101PickCubeEnv

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "FIXED_GOAL_XY",
    "MIN_CARRY_RISE",
    "MIN_GOAL_DISTANCE",
    "PLACE_TOLERANCE",
    "SO101PickPlaceEnv",
    "WORKSPACE_XY",
]

FIXED_GOAL_XY = np.array([0.20, -0.08])  # [m]
MIN_GOAL_DISTANCE = 0.06  # [m] between block and goal when both are drawn
MIN_CARRY_RISE = 0.02  # [m]
PLACE_TOLERANCE = 0.02  # [m] horizontal distance of the block's centre to the goal
REST_TOLERANCE = 0.005  # [m]
WORKSPACE_XY = np.array([[0.0, -0.30], [0.45, 0.30]])  # [m]


class SO101PickPlaceEnv(SO101PickCubeEnv):
    """SO-101 moving a block to a goal (see the module docstring for the task).

    Takes the arguments of :class:`~pinkctl.envs.pick_cube.SO101PickCubeEnv` except
    ``reward_type`` (always sparse); ``top_down_ik`` and ``jaw_pads`` default to True, and
    ``random_block_position`` draws the goal too.
    """

    def __init__(
        self,
        *,
        top_down_ik: bool = True,
        jaw_pads: bool = True,
        **kwargs: Unpack[PickCubeArguments],
    ) -> None:
        super().__init__(reward_type="sparse", top_down_ik=top_down_ik, jaw_pads=jaw_pads, **kwargs)
        self._goal = np.array([*FIXED_GOAL_XY, 0.0])
        self._goal_mocap = int(self.sim.model.body("goal").mocapid[0])
        self.was_carried = False

    @staticmethod
    def _has_goal() -> bool:
        return True

    @property
    def goal_pos(self) -> np.ndarray:
        """Where the block's centre should come to rest [m], world frame."""
        return self._goal.copy()

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
        self.sim.data.mocap_pos[self._goal_mocap] = [goal_xy[0], goal_xy[1], 0.0005]
        self.sim.forward()
        self.was_carried = False

    def _after_physics(self) -> None:
        self.was_carried = self.was_carried or self.block_rise > MIN_CARRY_RISE

    def _environment_state(self) -> np.ndarray:
        return np.concatenate([self.block_pos, self._goal])

    def is_placed(self) -> bool:
        """Whether the block was carried and now rests at the goal."""
        block = self.block_pos
        at_goal = np.linalg.norm(block[:2] - self._goal[:2]) <= PLACE_TOLERANCE
        resting = abs(block[2] - self._z_init) <= REST_TOLERANCE
        return bool(self.was_carried and at_goal and resting)

    def _evaluate(self) -> tuple[float, bool, bool]:
        success = self.is_placed()
        xy = self.block_pos[:2]
        outside = bool(np.any(xy < WORKSPACE_XY[0]) or np.any(xy > WORKSPACE_XY[1]))
        return float(success), success, success or outside
