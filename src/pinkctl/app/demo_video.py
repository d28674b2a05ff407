"""The demo's picture and video: a camera that sees the tool's curve and the arm, and the
files written after the run (:func:`~pinkctl.app.demo.run_demo`'s ``video`` and
``picture``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import mujoco
import numpy as np

from ..sim import MujocoSimulation, VideoRecorder
from ..sim.video import free_camera

__all__ = ["demo_camera", "demo_recorder", "write_outputs"]


def demo_recorder(
    sim: MujocoSimulation, tool_frame: str, video: str | Path | None, picture: str | Path | None
) -> VideoRecorder | None:
    """A recorder of the run when a video or a picture is asked for (else None)."""
    if video is None and picture is None:
        return None
    return VideoRecorder(sim, video, tool_frame=tool_frame, camera=demo_camera(sim, tool_frame))


def demo_camera(sim: MujocoSimulation, frame: str) -> mujoco.MjvCamera:
    """A camera in front of the robot, to its right, that sees the tool's curve (which lies
    in the world y-z plane) and the arm."""
    tool = sim.get_site_pose(frame)[0]
    look_at = tool * np.array([0.55, 1.0, 0.8])  # between the base and the tool
    return free_camera(look_at, 2.4 * max(float(np.linalg.norm(tool)), 0.2), 150.0, -20.0)


def write_outputs(
    recorder: VideoRecorder,
    video: str | Path | None,
    picture: str | Path | None,
    progress: bool | None,
    tell: Callable[[str], None],
) -> None:
    """Write the run's picture and video (and say where)."""
    if picture is not None:
        tell(f"picture written to {recorder.snapshot(picture)}")
    label = f"pinkctl demo: writing {Path(video).name}" if video is not None else None
    written = recorder.close(progress=progress, label=label)
    if written is not None:
        tell(f"video written to {written}")
