"""Record demonstrations: the scripted expert in a gymnasium environment, saved as .npz + MP4.

What it shows: ``pinkctl.envs`` as a source of demonstrations.

* Environment: ``gymnasium.make(env_id, random_block_position=True)`` (default
  ``pinkctl/SO101PickPlace-v0``: the SO-101 carries a block of random size and colour to a
  random goal; its IK moves the grasp point between the jaws at 10 Hz).
* Policy: the package's scripted expert (``pinkctl.envs.make_expert``), which reads the
  privileged state (block, goal, grasp point).
* Output: one ``episode_NNN.npz`` per episode (every observation key as ``obs/<key>``, the
  actions, rewards, successes, the seed; see ``pinkctl.envs.Episode``), and an MP4 of the
  first episode from the ``front`` camera when ``imageio`` with its ffmpeg plugin is
  installed (``pip install "pinkctl[video]"``); without it the frames are still rendered and
  checked, and the video is skipped with a note.

The run passes when every episode succeeds and each saved file reads back equal to what was
recorded.

Run::

    python examples/record_episodes.py --out episodes
    python examples/record_episodes.py --quick         # 2 episodes, small frames
    python examples/record_episodes.py --env pinkctl/SO101PickCube-v0 --episodes 10
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np

from pinkctl.envs import Episode, GymRenderingSpec, make_expert, rollout
from pinkctl.errors import MissingDependencyError
from pinkctl.sim.video import write_video

RANDOMISED = {
    "pinkctl/SO101PickCube-v0": {"random_block_position": True},
    "pinkctl/SO101PickPlace-v0": {"random_block_position": True},
    "pinkctl/Reach-v0": {},
}


def reload_matches(episode: Episode, path: Path) -> bool:
    """Whether the .npz at ``path`` holds exactly the episode's arrays."""
    with np.load(path) as saved:
        same = all(np.array_equal(saved[f"obs/{k}"], v) for k, v in episode.observations.items())
        return bool(
            same
            and np.array_equal(saved["actions"], episode.actions)
            and np.array_equal(saved["rewards"], episode.rewards)
            and np.array_equal(saved["successes"], episode.successes)
        )


@dataclass
class RecordResult:
    """Outcome of :func:`run`."""

    files: list[Path]
    successes: list[bool]
    lengths: list[int]
    video: Path | None
    video_note: str | None
    frames_shape: tuple[int, ...]
    wall_time_s: float
    ok: bool
    problems: list[str] = field(default_factory=list)


def run(
    *,
    out: Path,
    env_id: str = "pinkctl/SO101PickPlace-v0",
    episodes: int = 5,
    size: tuple[int, int] = (320, 240),
    seed: int = 0,
) -> RecordResult:
    """Record ``episodes`` expert episodes into ``out`` (created) and check them."""
    out.mkdir(parents=True, exist_ok=True)
    width, height = size
    spec = GymRenderingSpec(height=height, width=width, camera_id="front")
    env = gym.make(env_id, render_spec=spec, render_mode="rgb_array", **RANDOMISED[env_id])
    policy = make_expert(env)
    start = time.perf_counter()
    files, successes, lengths, problems = [], [], [], []
    video, note, frames_shape = None, None, ()
    for index in range(episodes):
        episode = rollout(env, policy, seed=seed + index, render=index == 0)
        path = episode.save(out / f"episode_{index:03d}.npz")
        files.append(path)
        successes.append(episode.success)
        lengths.append(episode.length)
        if not reload_matches(episode, path):
            problems.append(f"{path.name} does not read back equal")
        if episode.frames is not None:
            frames_shape = episode.frames.shape
            if episode.frames.shape != (episode.length + 1, height, width, 3):
                problems.append(f"frames of shape {episode.frames.shape}")
            elif episode.frames.std() < 1.0:
                problems.append("the rendered frames are blank")
            try:
                video = write_video(
                    episode.frames, out / "episode_000.mp4", fps=env.metadata["render_fps"]
                )
            except MissingDependencyError as exc:
                note = f"no MP4 writer: {exc}"
    env.close()
    wall = time.perf_counter() - start
    if not all(successes):
        problems.append(f"episodes failed: {[i for i, s in enumerate(successes) if not s]}")
    return RecordResult(
        files=files,
        successes=successes,
        lengths=lengths,
        video=video,
        video_note=note,
        frames_shape=frames_shape,
        wall_time_s=wall,
        ok=not problems,
        problems=problems,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0: the check passed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="pinkctl/SO101PickPlace-v0", choices=sorted(RANDOMISED))
    parser.add_argument("--episodes", type=int, default=5, help="number of episodes")
    parser.add_argument("--out", type=Path, default=Path("episodes"), help="output folder")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode")
    parser.add_argument("--quick", action="store_true", help="2 episodes, 160x120 frames")
    args = parser.parse_args(argv)
    episodes, size = (2, (160, 120)) if args.quick else (args.episodes, (320, 240))
    result = run(out=args.out, env_id=args.env, episodes=episodes, size=size, seed=args.seed)
    for problem in result.problems:
        print("problem:", problem)
    video = f"video {result.video}" if result.video else f"no video ({result.video_note})"
    status = "OK" if result.ok else "FAILED"
    print(
        f"record_episodes [{status}]: {args.env}, {sum(result.successes)}/{len(result.successes)} "
        f"episodes succeeded (lengths {result.lengths} steps), saved to {args.out}/, {video}, "
        f"{result.wall_time_s:.1f} s wall"
    )
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
