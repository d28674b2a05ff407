"""Gymnasium environments driven by pinkctl's IK (``pip install "pinkctl[envs]"``).

Importing this package registers:

* ``pinkctl/SO101PickCube-v0``: :class:`SO101PickCubeEnv`, lift a block (100 steps);
* ``pinkctl/SO101PickPlace-v0``: :class:`SO101PickPlaceEnv`, carry it to a goal (200 steps);
* ``pinkctl/Reach-v0``: :class:`ReachEnv`, bring the tool to a goal with any bundled robot
  (``gymnasium.make("pinkctl/Reach-v0", robot="franka")``, 50 steps).

The lerobot SO-101 package's classes are here under their names, with its arguments,
defaults and behaviour: :class:`MujocoGymEnv`, :class:`SO101GymEnv`,
:class:`SO101PickCubeGymEnv`, :class:`SO101PickPlaceGymEnv`; the registered SO-101 ids are
the same tasks with pinkctl's richer defaults (:data:`~pinkctl.envs.pick_cube.PINKCTL_OPTIONS`).

Every environment acts through Cartesian position deltas of an action point (plus an
absolute gripper opening for the SO-101 tasks) turned into servo targets by a
:class:`~pinkctl.PinkIKController` once per control step (``control_dt``, 10 Hz by default)
while MuJoCo runs the servos at ``physics_dt`` (500 Hz). Every environment takes a robot
placement (``base_position``, ``base_yaw``) and observes in the world or the robot's base
frame (``frame``). ``import pinkctl`` does not need gymnasium; this package does.
"""

from __future__ import annotations

try:
    import gymnasium as gym
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError("pinkctl.envs needs gymnasium: pip install 'pinkctl[envs]'") from exc

from .arm import CartesianArm
from .base import CartesianIKEnv
from .experts import PickCubeExpert, PickPlaceExpert, ReachExpert, make_expert
from .gripper import ctrl_to_normalized, normalized_to_ctrl
from .mujoco_env import MujocoGymEnv
from .pick_cube import SO101PickCubeEnv, SO101PickCubeGymEnv
from .pick_place import SO101PickPlaceEnv, SO101PickPlaceGymEnv
from .placement import Placement
from .reach import ReachEnv
from .rendering import GymRenderingSpec
from .rollout import Episode, rollout
from .seed_arm import MujocoIKArm
from .so101_env import SO101GymEnv
from .so101_scene import write_pick_scene
from .wrappers import SevenDofToFourDofAdapter

__all__ = [
    "ENV_IDS",
    "CartesianArm",
    "CartesianIKEnv",
    "Episode",
    "GymRenderingSpec",
    "MujocoGymEnv",
    "MujocoIKArm",
    "PickCubeExpert",
    "PickPlaceExpert",
    "Placement",
    "ReachEnv",
    "ReachExpert",
    "SO101GymEnv",
    "SO101PickCubeEnv",
    "SO101PickCubeGymEnv",
    "SO101PickPlaceEnv",
    "SO101PickPlaceGymEnv",
    "SevenDofToFourDofAdapter",
    "ctrl_to_normalized",
    "make_expert",
    "normalized_to_ctrl",
    "register_envs",
    "rollout",
    "write_pick_scene",
]

#: Registered ids, their classes and episode lengths (control steps).
ENV_IDS: dict[str, tuple[str, int]] = {
    "pinkctl/SO101PickCube-v0": ("pinkctl.envs.pick_cube:SO101PickCubeEnv", 100),
    "pinkctl/SO101PickPlace-v0": ("pinkctl.envs.pick_place:SO101PickPlaceEnv", 200),
    "pinkctl/Reach-v0": ("pinkctl.envs.reach:ReachEnv", 50),
}


def register_envs() -> None:
    """Register :data:`ENV_IDS` with gymnasium (ids already registered are left alone)."""
    for env_id, (entry_point, steps) in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, max_episode_steps=steps)


register_envs()
