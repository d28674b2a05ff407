"""Episodes: run a policy in an environment and keep every array of the run (.npz)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from .._validation import integer

__all__ = ["Episode", "rollout"]


def _flatten(observation: dict[str, Any], prefix: str = "") -> dict[str, np.ndarray]:
    """``{"pixels": {"front": a}}`` -> ``{"pixels.front": a}``."""
    flat: dict[str, np.ndarray] = {}
    for key, value in observation.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = np.asarray(value)
    return flat


@dataclass
class Episode:
    """One episode, step by step.

    Attributes:
        observations: Observation arrays by flattened key (``"agent_pos"``,
            ``"pixels.front"``), stacked over the T + 1 observations (reset included).
        actions: (T, action_dim) actions as sent.
        rewards: (T,) rewards.
        successes: (T,) ``info["is_success"]`` after each step.
        terminated: Whether the episode ended by termination (success or failure).
        truncated: Whether it ended by the time limit.
        frames: Rendered frames (T + 1, H, W, 3) when requested, else None.
        seed: The reset seed.
    """

    observations: dict[str, np.ndarray]
    actions: np.ndarray
    rewards: np.ndarray
    successes: np.ndarray
    terminated: bool
    truncated: bool
    seed: int | None
    frames: np.ndarray | None = field(default=None, repr=False)

    @property
    def success(self) -> bool:
        """Whether any step reported success."""
        return bool(self.successes.any())

    @property
    def length(self) -> int:
        """Number of steps."""
        return int(self.actions.shape[0])

    def save(self, path: str | Path) -> Path:
        """Write every array to a compressed ``.npz`` (observations as ``obs/<key>``); returns
        the path written (``.npz`` appended when missing, as numpy does)."""
        arrays: dict[str, Any] = {f"obs/{k}": v for k, v in self.observations.items()}
        arrays.update(
            actions=self.actions,
            rewards=self.rewards,
            successes=self.successes,
            terminated=np.array(self.terminated),
            truncated=np.array(self.truncated),
            seed=np.array(-1 if self.seed is None else self.seed),
        )
        if self.frames is not None:
            arrays["frames"] = self.frames
        target = Path(path)
        if target.suffix != ".npz":
            target = target.with_name(target.name + ".npz")
        np.savez_compressed(target, **arrays)
        return target


def rollout(
    env: gym.Env[Any, Any],
    policy: Callable[[Any], Any],
    *,
    seed: int | None = None,
    max_steps: int | None = None,
    render: bool = False,
) -> Episode:
    """Run ``policy`` from ``env.reset(seed=seed)`` until termination, truncation or
    ``max_steps``.

    ``policy`` is called with each observation; if it has a ``reset()`` method (the experts
    do), that is called after the env's reset. With ``render`` every observation's frame
    (``env.render()``) is kept.

    Raises:
        ValueError: If ``max_steps`` is not a positive integer or None.
    """
    steps = math.inf if max_steps is None else integer(max_steps, "max_steps", low=1)
    observation, _ = env.reset(seed=seed)
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset()
    observations = [_flatten(observation)]
    frames: list[np.ndarray] = [np.asarray(env.render())] if render else []
    actions: list[np.ndarray] = []
    rewards: list[float] = []
    successes: list[bool] = []
    terminated = truncated = False
    while not (terminated or truncated) and len(actions) < steps:
        action = np.asarray(policy(observation))
        observation, reward, terminated, truncated, info = env.step(action)
        observations.append(_flatten(observation))
        actions.append(action)
        rewards.append(float(reward))
        successes.append(bool(info.get("is_success", False)))
        if render:
            frames.append(np.asarray(env.render()))
    return Episode(
        observations=_stacked(observations),
        actions=np.array(actions, dtype=np.float32),
        rewards=np.array(rewards),
        successes=np.array(successes, dtype=bool),
        terminated=bool(terminated),
        truncated=bool(truncated),
        seed=seed,
        frames=np.stack(frames) if render else None,
    )


def _stacked(observations: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Flattened observations stacked along a first (time) axis, key by key."""
    return {k: np.stack([o[k] for o in observations]) for k in observations[0]}
