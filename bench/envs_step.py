"""Cost of one ``step()`` of the gymnasium environments (SO101PickCube by default).

A step is one ``PinkIKController`` solve and ``control_dt / physics_dt`` MuJoCo steps (50 at
the defaults) with the servo targets ramped between them, plus the observation. Two action
streams are timed, each over whole episodes from seeded resets (resets not timed):

- **expert**: the package's scripted expert (approach, grasp, lift: contacts and a held
  block), the representative case;
- **random**: uniformly random actions (with the default 1 m action scale the target jumps
  across the workspace every step, the arm strikes the table and the block).

For reference the same number of bare ``mujoco.mj_step`` calls per step is timed from the
states the expert visits (what the physics alone costs). The issue's target is a median
``step()`` of at most 3 ms on the benchmark machine; this is a bench row, not a test.

Usage (from the repository root)::

    python -m bench.envs_step                  # 600 timed steps per stream
    python -m bench.envs_step --steps 200 --env pinkctl/SO101PickPlace-v0

``run(...) -> dict`` returns the timings [µs] and the counts.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

from pinkctl.envs import make_expert

from .common import machine_line, timing_stats_us

__all__ = ["TARGET_MEDIAN_MS", "run"]

TARGET_MEDIAN_MS = 3.0


def _timed_steps(
    env: gym.Env[Any, Any],
    choose: Callable[[Any], np.ndarray],
    steps: int,
    reset: Callable[[], None],
) -> tuple[list[int], list[Any]]:
    """Durations [ns] of ``steps`` steps (episodes restarted as they end) and the MuJoCo
    states (qpos, qvel, ctrl, act) before each step."""
    unwrapped: Any = env.unwrapped
    durations: list[int] = []
    states: list[Any] = []
    seed = 0
    observation, _ = env.reset(seed=seed)
    reset()
    while len(durations) < steps:
        action = choose(observation)
        data = unwrapped.sim.data
        states.append((data.qpos.copy(), data.qvel.copy(), data.ctrl.copy(), data.time))
        start = time.perf_counter_ns()
        observation, _, terminated, truncated, _ = env.step(action)
        durations.append(time.perf_counter_ns() - start)
        if terminated or truncated:
            seed += 1
            observation, _ = env.reset(seed=seed)
            reset()
    return durations, states


def _physics_only(env: gym.Env[Any, Any], states: list[Any]) -> list[int]:
    """Durations [ns] of the substeps alone, from each recorded state."""
    unwrapped: Any = env.unwrapped
    model, data = unwrapped.sim.model, unwrapped.sim.data
    n = int(unwrapped.n_substeps)
    durations = []
    for qpos, qvel, ctrl, t in states:
        data.qpos[:], data.qvel[:], data.ctrl[:], data.time = qpos, qvel, ctrl, t
        mujoco.mj_forward(model, data)
        start = time.perf_counter_ns()
        mujoco.mj_step(model, data, nstep=n)
        durations.append(time.perf_counter_ns() - start)
    return durations


def run(
    steps: int = 600, *, env_id: str = "pinkctl/SO101PickCube-v0", warmup: int = 30
) -> dict[str, Any]:
    """Time ``steps`` steps per action stream (after ``warmup`` untimed ones)."""
    env = gym.make(env_id, random_block_position=True)
    expert = make_expert(env)
    _timed_steps(env, expert, warmup, expert.reset)
    expert_ns, states = _timed_steps(env, expert, steps, expert.reset)
    env.action_space.seed(0)
    random_ns, _ = _timed_steps(env, lambda _: env.action_space.sample(), steps, lambda: None)
    physics_ns = _physics_only(env, states)
    substeps = int(env.unwrapped.n_substeps)  # type: ignore[attr-defined]
    env.close()
    row: dict[str, Any] = {"env": env_id, "steps": steps, "substeps": substeps}
    for label, samples in (("expert", expert_ns), ("random", random_ns), ("physics", physics_ns)):
        row.update({f"{label}_{k}": v for k, v in timing_stats_us(samples).items()})
    return row


def report(row: dict[str, Any]) -> str:
    """Human-readable summary of :func:`run`'s row."""
    median_ms = row["expert_median_us"] * 1e-3
    verdict = "met" if median_ms <= TARGET_MEDIAN_MS else "missed"
    lines = [
        f"{row['env']} step(): {row['substeps']} physics substeps + one IK solve, "
        f"{row['steps']} timed steps per stream",
        "stream   median / p90 / p99 [ms]",
    ]
    for label in ("expert", "random", "physics"):
        values = [row[f"{label}_{k}"] * 1e-3 for k in ("median_us", "p90_us", "p99_us")]
        name = "physics only" if label == "physics" else label
        lines.append(f"{name:<13}" + " / ".join(f"{v:.3f}" for v in values))
    lines.append(
        f"target: median step() <= {TARGET_MEDIAN_MS:g} ms (expert stream): "
        f"{median_ms:.3f} ms, {verdict}"
    )
    lines.append(f"Machine: {machine_line()}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=600, help="timed steps per stream")
    parser.add_argument("--env", default="pinkctl/SO101PickCube-v0", help="registered id")
    args = parser.parse_args(argv)
    print(report(run(args.steps, env_id=args.env)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
