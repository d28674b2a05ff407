"""SO101PickCubeEnv: lift a block off the table with the SO-101 (``pinkctl/SO101PickCube-v0``).

The scene is :class:`~pinkctl.envs.so101_scene.SO101PickScene`. At each reset the block gets
a new edge length and colour, and a yaw uniform in [-45, 45] degrees; it sits at
:data:`FIXED_BLOCK_XY`, or with ``random_block_position`` anywhere in
:data:`SAMPLING_BOUNDS` (uniform).

* Success: the block's centre has risen :data:`LIFT_SUCCESS_HEIGHT` above where it started
  *and* the grasp point between the jaws is within :data:`NEAR_BLOCK_DISTANCE` of it.
* Reward: ``"sparse"``: 1 on success, else 0. ``"dense"``:
  ``0.3 exp(-20 d) + 0.7 clip(rise / LIFT_SUCCESS_HEIGHT, 0, 1)`` with ``d`` the grasp point's
  distance to the block's centre [m] and ``rise`` the block's rise [m].
* Termination: on success, or when the block leaves the sampling box widened by
  :data:`OUT_OF_BOUNDS_MARGIN`. Truncation: 100 steps (10 s) through the registered id.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
from numpy.typing import ArrayLike

from pinkctl import load_pink_supported_robot

from ..errors import InputError
from .base import CartesianIKEnv
from .rendering import GymRenderingSpec
from .so101_scene import GRASP_POINT, GRIPPER_LINK, GRIPPER_SPEED, PAD_GAP, SO101PickScene

__all__ = [
    "CARTESIAN_BOUNDS",
    "PickCubeArguments",
    "TOP_DOWN_BOUNDS",
    "FIXED_BLOCK_XY",
    "FIXED_JAW_CLEARANCE",
    "HOME_POSITION",
    "LIFT_SUCCESS_HEIGHT",
    "SAMPLING_BOUNDS",
    "SO101PickCubeEnv",
]

HOME_POSITION = {  # [rad] the SO-101's home (robot.toml): gripper pointing down-forward
    "shoulder_pan": 0.0,
    "shoulder_lift": -0.6,
    "elbow_flex": 0.6,
    "wrist_flex": 1.2,
    "wrist_roll": 0.0,
    "gripper": 0.0,
}
# (2, 3) boxes the action point's target is clipped to [m]. Their floors keep the jaws off the
# table (the tool frame is 7 mm, the grasp point 16 mm above the lowest point of the jaws);
# with the jaws kept vertical the SO-101 reaches no higher than about 9 cm, nor as far out.
CARTESIAN_BOUNDS = np.array([[0.08, -0.22, 0.008], [0.36, 0.22, 0.20]])
TOP_DOWN_BOUNDS = np.array([[0.12, -0.15, 0.016], [0.30, 0.15, 0.09]])
FIXED_BLOCK_XY = np.array([0.22, 0.0])  # [m]
SAMPLING_BOUNDS = np.array([[0.16, -0.10], [0.26, 0.10]])  # [m] block (and goal) x, y
OUT_OF_BOUNDS_MARGIN = 0.05  # [m]
LIFT_SUCCESS_HEIGHT = 0.04  # [m]
NEAR_BLOCK_DISTANCE = 0.03  # [m]
MAX_BLOCK_YAW = np.pi / 4  # [rad]
FIXED_JAW_CLEARANCE = PAD_GAP / 2.0  # [m] grasp point to the fixed pad's face


class PickCubeArguments(TypedDict, total=False):
    """Keywords of :class:`SO101PickCubeEnv` that a derived task passes on as they are."""

    seed: int | None
    control_dt: float
    physics_dt: float
    render_spec: GymRenderingSpec
    render_mode: str | None
    image_obs: bool
    random_block_position: bool
    action_scale: float
    cartesian_bounds: ArrayLike | None


class SO101PickCubeEnv(CartesianIKEnv):
    """SO-101 picking up a block (see the module docstring for the task).

    Args:
        seed: Seed of the environment's generator (block size, colour, yaw, position);
            ``reset(seed=...)`` re-seeds it.
        control_dt: Simulated time per ``step()`` [s] (0.1 s: 10 Hz); one IK solve each.
        physics_dt: MuJoCo step [s]; ``floor(control_dt / physics_dt)`` substeps per step.
        render_spec: Frame size and camera of ``render()`` and of image observations.
        render_mode: ``"rgb_array"`` or ``"human"``; None: ``render_spec.mode``.
        image_obs: Observe ``pixels.front`` (the front camera) instead of
            ``environment_state``.
        reward_type: ``"sparse"`` or ``"dense"``.
        random_block_position: Draw the block's position at each reset instead of
            :data:`FIXED_BLOCK_XY`.
        action_scale: Metres per unit of ``dx, dy, dz`` (not of ``grasp``), > 0. The default
            1 m lets one action cross the workspace: keep |actions| small, or lower it.
        cartesian_bounds: (2, 3) box [m] the action point's target is clipped to; None:
            :data:`CARTESIAN_BOUNDS`, or :data:`TOP_DOWN_BOUNDS` with ``top_down_ik``.
        top_down_ik: Move the grasp point between the jaws with the gripper pointing straight
            down (the rotation about the vertical left to the IK), instead of the tool frame
            ``gripper_frame_link`` by position only.
        jaw_pads: Make the fingertip pads collide (flat faces instead of the jaws' round
            primitives).

    Raises:
        ValueError: On any malformed argument (the message names it).
    """

    def __init__(
        self,
        *,
        seed: int | None = 0,
        control_dt: float = 0.1,
        physics_dt: float = 0.002,
        render_spec: GymRenderingSpec = GymRenderingSpec(),  # noqa: B008 (frozen)
        render_mode: str | None = None,
        image_obs: bool = False,
        reward_type: str = "sparse",
        random_block_position: bool = False,
        action_scale: float = 1.0,
        cartesian_bounds: ArrayLike | None = None,
        top_down_ik: bool = False,
        jaw_pads: bool = False,
    ) -> None:
        super().__init__(
            seed=seed,
            control_dt=control_dt,
            physics_dt=physics_dt,
            render_spec=render_spec,
            render_mode=render_mode,
            image_obs=image_obs,
            reward_type=reward_type,
        )
        for name, flag in (
            ("random_block_position", random_block_position),
            ("top_down_ik", top_down_ik),
            ("jaw_pads", jaw_pads),
        ):
            if not isinstance(flag, bool):
                raise InputError(f"{name} must be a bool, got {flag!r}")
        self.random_block_position = random_block_position
        self.top_down_ik = top_down_ik
        self.jaw_pads = jaw_pads
        robot = load_pink_supported_robot("so101")
        self.scene = SO101PickScene(robot, jaw_pads=jaw_pads, goal_marker=self._has_goal())
        if cartesian_bounds is None:
            cartesian_bounds = TOP_DOWN_BOUNDS if top_down_ik else CARTESIAN_BOUNDS
        assert robot.tool_frame is not None
        self._setup(
            robot,
            spec_callback=self.scene.callback(),
            point=GRASP_POINT if top_down_ik else robot.tool_frame,
            orientation="down" if top_down_ik else "free",
            action_scale=action_scale,
            cartesian_bounds=cartesian_bounds,
            gripper=True,
            gripper_speed=GRIPPER_SPEED,
            environment_dim=6 if self._has_goal() else 3,
        )
        self.block = self.scene.block
        self._grasp_site = self.sim.model.site(GRASP_POINT).id
        self._gripper_body = self.sim.model.body(GRIPPER_LINK).id
        self._z_init = 0.0

    @staticmethod
    def _has_goal() -> bool:
        return False

    # ------------------------------------------------------------------ state
    @property
    def block_pos(self) -> np.ndarray:
        """World position of the block's centre [m]."""
        return self.block.position(self.sim.model, self.sim.data)

    @property
    def block_half_size(self) -> float:
        """Half the block's edge length [m] (drawn at each reset)."""
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
        return float(self.block_pos[2] - self._z_init)

    def _sample_xy(self) -> np.ndarray:
        return self.np_random.uniform(SAMPLING_BOUNDS[0], SAMPLING_BOUNDS[1])

    # ------------------------------------------------------------------ task
    def _place_block(self, xy: np.ndarray) -> None:
        """New look, arm at home, block at rest at ``xy``, kinematics refreshed."""
        model, data = self.sim.model, self.sim.data
        look = self.block.draw(self.np_random)
        yaw = float(self.np_random.uniform(-MAX_BLOCK_YAW, MAX_BLOCK_YAW))
        self.block.apply_look(model, data, look)
        self.sim.reset(HOME_POSITION)
        self.block.place(model, data, np.array([xy[0], xy[1], look.edge / 2.0]), yaw)
        self.sim.forward()
        self._z_init = float(self.block_pos[2])

    def _reset_task(self) -> None:
        xy = self._sample_xy() if self.random_block_position else FIXED_BLOCK_XY
        self._place_block(xy)

    def _environment_state(self) -> np.ndarray:
        return self.block_pos

    def is_lifted(self) -> bool:
        """Whether the block has risen :data:`LIFT_SUCCESS_HEIGHT` and the jaws are at it."""
        near = np.linalg.norm(self.grasp_point_pos - self.block_pos) <= NEAR_BLOCK_DISTANCE
        return bool(self.block_rise >= LIFT_SUCCESS_HEIGHT and near)

    def _block_out_of_bounds(self) -> bool:
        xy = self.block_pos[:2]
        low = SAMPLING_BOUNDS[0] - OUT_OF_BOUNDS_MARGIN
        high = SAMPLING_BOUNDS[1] + OUT_OF_BOUNDS_MARGIN
        return bool(np.any(xy < low) or np.any(xy > high))

    def _evaluate(self) -> tuple[float, bool, bool]:
        success = self.is_lifted()
        if self.reward_type == "sparse":
            reward = float(success)
        else:
            distance = float(np.linalg.norm(self.grasp_point_pos - self.block_pos))
            lift = float(np.clip(self.block_rise / LIFT_SUCCESS_HEIGHT, 0.0, 1.0))
            reward = 0.3 * float(np.exp(-20.0 * distance)) + 0.7 * lift
        return reward, success, success or self._block_out_of_bounds()
