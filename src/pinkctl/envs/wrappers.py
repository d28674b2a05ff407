"""SevenDofToFourDofAdapter: run 7-dim Cartesian action code on the 4-dim SO-101 tasks.

Teleoperation and human-in-the-loop tools written for 6-DoF arms send
``[dx, dy, dz, drx, dry, drz, grasp]``. The SO-101 tasks take ``[dx, dy, dz, grasp]``: a
5-joint arm cannot follow an arbitrary orientation, so its IK moves a point (by position only,
or with the approach axis held down). The adapter drops the three rotation deltas and passes
the rest on unchanged, so ``grasp`` keeps the wrapped env's meaning (an absolute opening,
0 closed, 1 open).
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .._validation import real_array
from ..errors import InputError

__all__ = ["SevenDofToFourDofAdapter"]

KEPT_SLOTS = np.array([0, 1, 2, 6])  # dx, dy, dz, grasp; 3-5 (drx, dry, drz) are dropped


class SevenDofToFourDofAdapter(gym.ActionWrapper[Any, np.ndarray, np.ndarray]):
    """Accept 7-dim actions on an env with a 4-dim ``Box`` action space.

    The 7-dim space is the wrapped one with three [-1, 1] rotation slots inserted after
    ``dz``. Construction warns once (``UserWarning``) that rotations are ignored, so code
    ported from a 6-DoF arm learns why the gripper never turns; new code should use the
    4-dim actions directly.

    Args:
        env: An environment whose action space is a 4-dim :class:`gymnasium.spaces.Box`.

    Raises:
        ValueError: If ``env`` is not a gymnasium environment or its action space is not a
            4-dim ``Box``.
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        if not isinstance(env, gym.Env):
            raise InputError(f"env must be a gymnasium.Env, got {type(env).__name__}")
        native = env.action_space
        if not isinstance(native, spaces.Box) or native.shape != (4,):
            raise InputError(
                f"SevenDofToFourDofAdapter wraps an env with a 4-dim Box action space, got {native}"
            )
        super().__init__(env)
        warnings.warn(
            "SevenDofToFourDofAdapter ignores the rotation deltas (drx, dry, drz) of 7-dim "
            "actions: the wrapped env moves a point, it takes no orientation commands",
            UserWarning,
            stacklevel=2,
        )
        low = np.insert(native.low, 3, [-1.0, -1.0, -1.0]).astype(np.float32)
        high = np.insert(native.high, 3, [1.0, 1.0, 1.0]).astype(np.float32)
        self.action_space = spaces.Box(low=low, high=high, dtype=np.float32)

    def action(self, action: np.ndarray) -> np.ndarray:
        """``[dx, dy, dz, drx, dry, drz, grasp]`` -> ``[dx, dy, dz, grasp]``.

        Raises:
            ValueError: (:class:`~pinkctl.errors.InputError`) ``action`` is not a (7,) array of
                finite real numbers (the wrapped env's rule, see
                :class:`~pinkctl.envs.CartesianIKEnv`).
        """
        values = real_array(action, "action (7-dim)", (7,))
        return values[KEPT_SLOTS].astype(np.float32)
