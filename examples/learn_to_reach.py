"""Learning to reach: a linear policy trained by the cross-entropy method on pinkctl/Reach-v0.

What it shows: an environment of ``pinkctl.envs`` used for learning, with numpy only.

* Environment: ``gymnasium.make("pinkctl/Reach-v0", robot=...)``: the action is a Cartesian
  step of the tool (``[dx, dy, dz]`` in [-1, 1], 5 cm per unit), turned into joint commands
  by pinkctl's IK at 10 Hz; the dense reward is minus the tool's distance to the goal, and
  an episode ends when the tool is within 1 cm of it.
* Policy: ``action = clip(W @ features, -1, 1)`` with ``features`` the goal minus the tool
  position in units of 5 cm (from the observation only: ``environment_state`` and
  ``tcp_pose``), so 9 parameters and no bias: the only place the policy rests is the goal.
  As the DLS tutorial puts it, features relative to the robot generalise; absolute world
  positions would not.
* Method: the cross-entropy method. Each iteration samples a population of parameter vectors
  from a diagonal Gaussian, scores each by its mean return over a few episodes (the same goal
  seeds for every candidate, new ones each iteration), and refits the Gaussian to the best
  quarter. The learned mean is then evaluated on held-out seeds.

The run passes when the learned policy reaches >= 90 % of the held-out goals and training
took under 60 s of wall time.

Run::

    python examples/learn_to_reach.py
    python examples/learn_to_reach.py --quick          # smaller population (CI)
    python examples/learn_to_reach.py --robot franka
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

import pinkctl.envs  # noqa: F401  (registers the environments)

FEATURE_SCALE = 0.05  # [m] features are distances in units of one full action step
SUCCESS_BAR = 0.90
INITIAL_STD = 0.5
N_PARAMS = 9  # W is 3 x 3; no bias: the policy's only fixed point is the goal
TIME_BAR_S = 60.0


@dataclass
class Settings:
    """Budget of one training run."""

    iterations: int
    population: int
    episodes_per_candidate: int
    max_steps: int
    eval_episodes: int


FULL = Settings(
    iterations=10, population=24, episodes_per_candidate=4, max_steps=20, eval_episodes=100
)
QUICK = Settings(
    iterations=6, population=12, episodes_per_candidate=3, max_steps=15, eval_episodes=50
)


def features(observation: dict[str, Any]) -> np.ndarray:
    """Goal minus tool position, in units of :data:`FEATURE_SCALE`."""
    goal = np.asarray(observation["environment_state"], dtype=float)
    tool = np.asarray(observation["tcp_pose"][:3], dtype=float)
    return (goal - tool) / FEATURE_SCALE


def act(theta: np.ndarray, observation: dict[str, Any]) -> np.ndarray:
    """The linear policy: ``clip(W f, -1, 1)`` with ``theta = W.ravel()``."""
    return np.clip(theta.reshape(3, 3) @ features(observation), -1.0, 1.0).astype(np.float32)


def episode(
    env: gym.Env[Any, Any], theta: np.ndarray, seed: int, max_steps: int
) -> tuple[float, bool]:
    """Return and success of one episode of the policy ``theta``."""
    observation, _ = env.reset(seed=seed)
    total = 0.0
    for _ in range(max_steps):
        observation, reward, terminated, truncated, info = env.step(act(theta, observation))
        total += float(reward)
        if terminated or truncated:
            return total, bool(info["is_success"])
    return total, False


@dataclass
class Result:
    """Outcome of :func:`run`."""

    success_rate: float
    train_time_s: float
    eval_time_s: float
    theta: np.ndarray
    history: list[float]
    ok: bool


def run(
    *,
    quick: bool = False,
    robot: str = "so101",
    seed: int = 0,
    settings: Settings | None = None,
) -> Result:
    """Train with the cross-entropy method, then evaluate on held-out seeds.

    ``settings`` overrides the budget that ``quick`` selects (:data:`QUICK` or :data:`FULL`).
    """
    if settings is None:
        settings = QUICK if quick else FULL
    env = gym.make("pinkctl/Reach-v0", robot=robot)
    rng = np.random.default_rng(seed)
    mean, std = np.zeros(N_PARAMS), np.full(N_PARAMS, INITIAL_STD)
    n_elite = max(2, settings.population // 4)
    history = []
    start = time.perf_counter()
    for iteration in range(settings.iterations):
        seeds = [1000 * (iteration + 1) + k for k in range(settings.episodes_per_candidate)]
        candidates = mean + std * rng.standard_normal((settings.population, N_PARAMS))
        scores = np.array(
            [
                np.mean([episode(env, theta, s, settings.max_steps)[0] for s in seeds])
                for theta in candidates
            ]
        )
        elite = candidates[np.argsort(scores)[-n_elite:]]
        mean = elite.mean(axis=0)
        std = elite.std(axis=0) + 0.02  # a floor keeps the search from collapsing early
        history.append(float(np.max(scores)))
    train_time = time.perf_counter() - start
    start = time.perf_counter()
    held_out = range(10**6, 10**6 + settings.eval_episodes)  # never seen in training
    successes = [episode(env, mean, s, 50)[1] for s in held_out]
    eval_time = time.perf_counter() - start
    env.close()
    rate = float(np.mean(successes))
    return Result(
        success_rate=rate,
        train_time_s=train_time,
        eval_time_s=eval_time,
        theta=mean,
        history=history,
        ok=rate >= SUCCESS_BAR and train_time < TIME_BAR_S,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0: the check passed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller budget (smoke tests)")
    parser.add_argument("--robot", default="so101", help="any name of pinkctl.supported_robots()")
    parser.add_argument("--seed", type=int, default=0, help="seed of the search")
    args = parser.parse_args(argv)
    result = run(quick=args.quick, robot=args.robot, seed=args.seed)
    weights = np.array2string(result.theta.reshape(3, 3), precision=2, suppress_small=True)
    print(f"best mean return per iteration: {np.round(result.history, 3).tolist()}")
    print(f"learned W (action per 5 cm of error):\n{weights}")
    status = "OK" if result.ok else "FAILED"
    print(
        f"learn_to_reach [{status}]: {args.robot}, {result.success_rate:.0%} of held-out goals "
        f"reached (need >= {SUCCESS_BAR:.0%}), trained in {result.train_time_s:.1f} s "
        f"(need < {TIME_BAR_S:.0f} s), evaluated in {result.eval_time_s:.1f} s"
    )
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
