"""Scripted expert policies for the environments (demonstrations, tests, baselines).

An expert reads the environment's privileged state (block, goal, grasp point, the action
point's target) through ``env.unwrapped`` and returns actions in the env's action space.
Motions approach each waypoint geometrically: the position delta is
``clip(0.6 * (waypoint - target), -max_step, max_step)`` [m] (divided by ``action_scale``,
turned into the env's action frame), so the target glides into the waypoint without ever
sending an exact zero (which would make the env hold where the point *is*, see
:class:`~pinkctl.envs.arm.CartesianArm`).

Usage::

    policy = make_expert(env)   # or PickCubeExpert(env), ...
    observation, info = env.reset(seed=0)
    policy.reset()
    action = policy(observation)
"""

from __future__ import annotations

import enum
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ..errors import InputError
from .pick_cube import FIXED_JAW_CLEARANCE, LIFT_SUCCESS_HEIGHT, SO101PickCubeGymEnv
from .pick_place import SO101PickPlaceGymEnv
from .reach import ReachEnv

__all__ = ["PickCubeExpert", "PickPlaceExpert", "ReachExpert", "make_expert"]

APPROACH_GAIN = 0.6
OPEN = 0.55  # gripper opening while approaching: wider than a 3 cm block turned 45 degrees
CLOSED = 0.0
GRASP_MIN_HEIGHT = 0.018  # [m] lowest grasp point height: the jaws clear the table
HOVER = 0.045  # [m] above the grasp height while approaching
LIFT_RISE = LIFT_SUCCESS_HEIGHT + 0.012  # [m] how far the grasp point rises to lift
JAW_MARGIN = 0.003  # [m] between the fixed jaw and the block's nearest corner
REACHED = 0.004  # [m] a waypoint is reached when the grasp point is this close
CLOSE_STEPS = 5  # control steps with the jaws closing before lifting
RELEASE_STEPS = 4
PHASE_TIMEOUT = 30  # control steps; then the phase ends anyway (or the grasp is retried)


class _CartesianExpert:
    """Shared motion helper: position deltas that glide the action point into a waypoint."""

    def __init__(self, env: gym.Env[Any, Any], env_type: type, *, max_step: float) -> None:
        unwrapped = env.unwrapped
        if not isinstance(unwrapped, env_type):
            raise InputError(f"{type(self).__name__} needs a {env_type.__name__}, got {unwrapped}")
        if not max_step > 0.0:
            raise InputError(f"max_step must be positive [m], got {max_step!r}")
        self.env: Any = unwrapped
        self.max_step = float(max_step)

    def _delta_to(self, point_goal: np.ndarray) -> np.ndarray:
        """Raw action delta moving the action point's target toward ``point_goal`` [m]
        (world frame), in the env's action axes (``frame``): clipped there, so the policy
        does not depend on where the robot stands when the env observes its base frame."""
        env = self.env
        error = env.placement.action_from_world(point_goal - env.ik_target)
        step = np.clip(APPROACH_GAIN * error, -self.max_step, self.max_step)
        return step / env.arm.action_scale


class ReachExpert(_CartesianExpert):
    """Moves the tool straight to the goal of a :class:`~pinkctl.envs.reach.ReachEnv`.

    Args:
        env: The environment (wrappers allowed).
        max_step: Largest target move per control step [m].
    """

    def __init__(self, env: gym.Env[Any, Any], *, max_step: float = 0.05) -> None:
        super().__init__(env, ReachEnv, max_step=max_step)

    def reset(self) -> None:
        """Nothing to forget between episodes."""

    def __call__(self, observation: Any = None) -> np.ndarray:
        delta = self._delta_to(self.env.goal_pos)
        return np.clip(delta, -1.0, 1.0).astype(np.float32)


class Phase(enum.Enum):
    """Phases of the pick experts, in order."""

    APPROACH = enum.auto()
    DESCEND = enum.auto()
    CLOSE = enum.auto()
    LIFT = enum.auto()
    TRANSPORT = enum.auto()
    LOWER = enum.auto()
    RELEASE = enum.auto()
    RETREAT = enum.auto()


class PickCubeExpert(_CartesianExpert):
    """Top-down grasp of the block of :class:`~pinkctl.envs.pick_cube.SO101PickCubeGymEnv`.

    Phases: approach above the block with the jaws open, descend, close, lift. The grasp
    point between the jaws is steered (through the tool frame's target when the env moves
    the tool frame). A block that falls back out of the jaws is grasped again.

    Args:
        env: The environment (wrappers allowed).
        max_step: Largest target move per control step [m].
    """

    def __init__(self, env: gym.Env[Any, Any], *, max_step: float = 0.02) -> None:
        super().__init__(env, self._env_type(), max_step=max_step)
        self.phase = Phase.APPROACH
        self._ticks = 0
        self._grasp_offset = np.zeros(3)
        self._carry_height = 0.0

    @staticmethod
    def _env_type() -> type:
        return SO101PickCubeGymEnv

    def reset(self) -> None:
        """Start a new episode at the approach phase."""
        self._enter(Phase.APPROACH)

    def _enter(self, phase: Phase) -> None:
        self.phase = phase
        self._ticks = 0

    def _grasp_height(self) -> float:
        env = self.env
        table = float(env.placement.position[2])  # the table top is the base's height
        return max(float(env.block_pos[2]), table + GRASP_MIN_HEIGHT)

    def _grasp_centre(self) -> np.ndarray:
        """Where to put the grasp point to close on the block: its centre, moved toward the
        fixed jaw until that jaw clears the block's corners (the block's half width
        along the jaws is taken at its largest, a corner: sqrt(2) times half the edge)."""
        env = self.env
        axis = env.jaw_axis
        axis[2] = 0.0
        axis /= max(float(np.linalg.norm(axis)), 1e-9)
        half_width = np.sqrt(2.0) * env.block_half_size
        shift = max(0.0, half_width + JAW_MARGIN - FIXED_JAW_CLEARANCE)
        return env.block_pos - shift * axis

    def _waypoint(self) -> np.ndarray:
        """Where the grasp point should go in the current phase [m]."""
        env = self.env
        block = self._grasp_centre()
        if self.phase is Phase.APPROACH:
            return np.array([block[0], block[1], self._grasp_height() + HOVER])
        if self.phase in (Phase.DESCEND, Phase.CLOSE):
            return np.array([block[0], block[1], self._grasp_height()])
        grasp = env.grasp_point_pos
        return np.array([grasp[0], grasp[1], self._carry_height])

    def _opening(self) -> float:
        return OPEN if self.phase in (Phase.APPROACH, Phase.DESCEND) else CLOSED

    #: The phase that follows each phase left when the grasp point reaches its waypoint
    #: (or the phase times out).
    _ON_REACHED: ClassVar[dict[Phase, Phase]] = {
        Phase.APPROACH: Phase.DESCEND,
        Phase.DESCEND: Phase.CLOSE,
    }

    def _advance(self) -> None:
        """Phase transitions: a dropped block starts over, a reached waypoint (or a timeout)
        moves on (:attr:`_ON_REACHED`), closing and releasing last a number of steps."""
        env = self.env
        self._ticks += 1
        if self.phase in (Phase.LIFT, Phase.TRANSPORT) and self._dropped():
            self._enter(Phase.APPROACH)
        elif self.phase in self._ON_REACHED and self._reached(env):
            self._enter(self._ON_REACHED[self.phase])
        elif self.phase is Phase.CLOSE and self._ticks >= CLOSE_STEPS:
            self._lift(env)
        elif self.phase is Phase.RELEASE and self._ticks >= RELEASE_STEPS:
            self._enter(Phase.RETREAT)

    def _reached(self, env: SO101PickCubeGymEnv) -> bool:
        """Whether the grasp point is at its waypoint, or the phase has timed out."""
        error = float(np.linalg.norm(env.grasp_point_pos - self._waypoint()))
        return error < REACHED or self._ticks > PHASE_TIMEOUT

    def _lift(self, env: SO101PickCubeGymEnv) -> None:
        """Lift the grasped block: remember where it sits in the jaws and how high to carry
        it."""
        self._grasp_offset = env.grasp_point_pos - env.block_pos
        self._carry_height = float(env.grasp_point_pos[2]) + LIFT_RISE
        self._enter(Phase.LIFT)

    def _dropped(self) -> bool:
        """Whether the block is no longer between the jaws."""
        env = self.env
        return bool(np.linalg.norm(env.grasp_point_pos - env.block_pos) > 0.03)

    def __call__(self, observation: Any = None) -> np.ndarray:
        self._advance()
        env = self.env
        # the action point's goal: the grasp point's waypoint, shifted by where the action
        # point sits relative to the grasp point now (zero when the action moves the grasp
        # point itself)
        goal = self._waypoint() + (env.ik_point_pos - env.grasp_point_pos)
        delta = np.clip(self._delta_to(goal), -1.0, 1.0)
        return np.append(delta, self._opening()).astype(np.float32)


class PickPlaceExpert(PickCubeExpert):
    """Pick the block of :class:`~pinkctl.envs.pick_place.SO101PickPlaceGymEnv`, carry it above
    the goal, lower it until it rests at the goal's height, open, and rise.

    Args:
        env: The environment (wrappers allowed).
        max_step: Largest target move per control step [m].
    """

    _ON_REACHED: ClassVar[dict[Phase, Phase]] = {
        Phase.APPROACH: Phase.DESCEND,
        Phase.DESCEND: Phase.CLOSE,
        Phase.LIFT: Phase.TRANSPORT,
        Phase.TRANSPORT: Phase.LOWER,
        Phase.LOWER: Phase.RELEASE,
    }

    @staticmethod
    def _env_type() -> type:
        return SO101PickPlaceGymEnv

    def _waypoint(self) -> np.ndarray:
        env = self.env
        goal = env.goal_pos
        if self.phase in (Phase.TRANSPORT, Phase.RETREAT):
            return np.array([goal[0], goal[1], self._carry_height])
        if self.phase in (Phase.LOWER, Phase.RELEASE):
            return goal + self._grasp_offset + np.array([0.0, 0.0, 0.001])
        return super()._waypoint()

    def _opening(self) -> float:
        if self.phase in (Phase.RELEASE, Phase.RETREAT):
            return OPEN
        return super()._opening()


def make_expert(env: gym.Env[Any, Any], **kwargs: Any) -> ReachExpert | PickCubeExpert:
    """The expert of ``env``'s task (pick-place, pick-cube or reach).

    Raises:
        ValueError: If ``env`` is none of pinkctl's environments.
    """
    unwrapped = env.unwrapped
    if isinstance(unwrapped, SO101PickPlaceGymEnv):
        return PickPlaceExpert(env, **kwargs)
    if isinstance(unwrapped, SO101PickCubeGymEnv):
        return PickCubeExpert(env, **kwargs)
    if isinstance(unwrapped, ReachEnv):
        return ReachExpert(env, **kwargs)
    raise InputError(f"no expert for {type(unwrapped).__name__}")
