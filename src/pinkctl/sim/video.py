"""Pictures and videos of a simulation: MuJoCo's offscreen renderer, written by imageio.

:class:`VideoRecorder` renders the simulation at a fixed frame rate while a loop runs
(``run_closed_loop(..., on_tick=recorder.capture)``) and draws two trails into the scene:
where the target marker went (wide orange dashes) and where the tool went (a thin blue line
through them), so the frames show the traced path as well as the robot. MP4 files need the
``video`` extra (``pip install 'pinkctl[video]'``: imageio with its ffmpeg plugin); PNG
pictures need imageio alone. Headless machines need no setting: pinkctl selects EGL (a GPU or
Mesa's EGL), else OSMesa (software) when ``MUJOCO_GL`` is unset (:mod:`pinkctl._gl`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from .._gl import open_renderer as _gl_renderer
from .._progress import progress_bar
from .._validation import positive_number
from ..errors import InputError, MissingDependencyError
from .simulation import MujocoSimulation

__all__ = ["VideoRecorder", "check_writer", "free_camera", "open_renderer", "write_video"]

#: Trail colours (RGBA): the target's path (dashed), the tool's path (a line through it).
TARGET_RGBA = np.array([1.0, 0.55, 0.1, 1.0], dtype=np.float32)
TOOL_RGBA = np.array([0.05, 0.45, 1.0, 1.0], dtype=np.float32)
#: Most trail segments drawn per frame (older points are thinned out).
MAX_SEGMENTS = 160


def check_writer(path: str | Path) -> None:
    """Raise unless ``path`` can be written here: ``.mp4`` needs imageio and imageio-ffmpeg,
    ``.gif``, ``.png`` and ``.jpg`` need imageio.

    Raises:
        InputError: Another file type.
        MissingDependencyError: A package is missing (``pip install 'pinkctl[video]'``).
    """
    suffix = Path(path).suffix.lower()
    if suffix not in (".mp4", ".png", ".gif", ".jpg", ".jpeg"):
        raise InputError(f"{path}: expected a .mp4, .gif, .png or .jpg file")
    needed = ["imageio"] + (["imageio_ffmpeg"] if suffix == ".mp4" else [])
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingDependencyError(
            f"writing {suffix} files needs {' and '.join(missing)}: pip install 'pinkctl[video]'"
        )


def write_video(
    frames: Sequence[np.ndarray] | np.ndarray,
    path: str | Path,
    fps: float,
    *,
    progress: bool | None = False,
    label: str | None = None,
) -> Path:
    """Write RGB frames (each (H, W, 3) uint8) as a video (``.mp4``: H.264) or a GIF.

    Args:
        frames: The frames, in order.
        path: The file.
        fps: Frames per second.
        progress: Show the frames written on stderr: a bar on a terminal, a line per 10 %
            otherwise (None: only on a terminal).
        label: What the progress says is done (default: ``writing <file name>``).

    Raises:
        InputError, MissingDependencyError: See :func:`check_writer`.
    """
    check_writer(path)
    import imageio.v2 as imageio  # noqa: PLC0415  (optional dependency)

    path = Path(path)
    options: dict[str, Any] = {"fps": fps}
    if path.suffix.lower() == ".mp4":
        # macro_block_size=1: any frame size, no resizing warning
        options.update(codec="libx264", macro_block_size=1)
    writer: Any = imageio.get_writer(path, **options)
    label = label or f"writing {path.name}"
    with writer, progress_bar(len(frames), label, enabled=progress, unit="frame") as bar:
        for frame in frames:
            writer.append_data(frame)
            bar.update(1)
    return path


class VideoRecorder:
    """Renders ``sim`` at ``fps`` frames per simulated second into a video file.

    Args:
        sim: The simulation to film.
        path: ``.mp4`` (or ``.gif``) file written by :meth:`close`; None: no video, only the
            trails for :meth:`snapshot`.
        fps: Frames per second of simulated time.
        width: Frame width [pixels] (at most the model's offscreen buffer, 640 by default).
        height: Frame height [pixels] (at most 480 by default).
        camera: Camera name or id (``"overview"``: the one :meth:`MujocoSimulation.from_robot`
            adds), or a free camera (:func:`free_camera`).
        tool_frame: Site whose path is drawn (default: the simulation's first site).
        shadows: Draw shadows and reflections in the video's frames (they make a software
            renderer, as on a machine without a GPU, five to ten times slower).
        trail_width: Width of the target's trail [m] (the tool's is half of it).

    Raises:
        InputError: A renderer that cannot start (no OpenGL library: the message says which
            to install), or a file type other than ``.mp4`` / ``.gif``.
        MissingDependencyError: The writer is not installed (``pinkctl[video]``).
    """

    def __init__(
        self,
        sim: MujocoSimulation,
        path: str | Path | None,
        *,
        fps: float = 30.0,
        width: int = 640,
        height: int = 480,
        camera: str | int | mujoco.MjvCamera = "overview",
        tool_frame: str | None = None,
        shadows: bool = False,
        trail_width: float = 0.008,
    ) -> None:
        if path is not None:
            check_writer(path)
        self.fps = positive_number(fps, "fps")
        self.sim = sim
        self.path = None if path is None else Path(path)
        self.camera = camera
        self.shadows = shadows
        self.trail_width = float(trail_width)
        self.tool_frame = tool_frame or (sim.site_names[0] if sim.site_names else None)
        self.renderer = open_renderer(sim.model, width, height)
        self.frames: list[np.ndarray] = []
        self._next = 0.0
        self._target: list[np.ndarray] = []
        self._tool: list[np.ndarray] = []

    def capture(self, t: float, *_: Any) -> None:
        """Record the trails at every call; render a video frame when one is due at time ``t``
        [s].

        Its signature fits :func:`~pinkctl.sim.run_closed_loop`'s ``on_tick``.
        """
        model, data = self.sim.model, self.sim.data
        if model.nmocap:
            self._target.append(data.mocap_pos[0].copy())
        if self.tool_frame is not None:
            self._tool.append(self.sim.get_site_pose(self.tool_frame)[0])
        if self.path is not None and t + 1e-9 >= self._next:
            self.frames.append(self.render())
            self._next += 1.0 / self.fps

    def render(self, *, shadows: bool | None = None) -> np.ndarray:
        """The current frame, trails included: (height, width, 3) uint8.

        Args:
            shadows: Draw shadows and reflections (default: the recorder's ``shadows``).
        """
        renderer = self.renderer
        renderer.update_scene(self.sim.data, camera=self.camera)
        on = self.shadows if shadows is None else shadows
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = on
        renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = on
        width = self.trail_width
        _draw_trail(renderer.scene, self._target, TARGET_RGBA, width, dashed=True)
        _draw_trail(renderer.scene, self._tool, TOOL_RGBA, width / 2)
        return renderer.render().copy()

    def snapshot(self, path: str | Path) -> Path:
        """Write the current frame (trails, shadows and reflections included) as a picture
        (``.png``, ``.jpg``)."""
        check_writer(path)
        import imageio.v2 as imageio  # noqa: PLC0415  (optional dependency)

        path = Path(path)
        imageio.imwrite(path, self.render(shadows=True))
        return path

    def close(self, *, progress: bool | None = False, label: str | None = None) -> Path | None:
        """Write the video (when a path was given) and release the renderer.

        Args:
            progress: Show the frames written (see :func:`write_video`).
            label: What the progress says is done (see :func:`write_video`).
        """
        self.renderer.close()
        if self.path is None or not self.frames:
            return None
        return write_video(self.frames, self.path, self.fps, progress=progress, label=label)

    def __enter__(self) -> VideoRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.renderer.close()


def free_camera(
    look_at: np.ndarray, distance: float, azimuth: float = 160.0, elevation: float = -15.0
) -> mujoco.MjvCamera:
    """A camera ``distance`` metres from ``look_at``; ``azimuth`` and ``elevation`` [deg] as
    in MuJoCo (azimuth 180: looking along world -x, at the robot's front; elevation < 0:
    from above)."""
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_FREE
    camera.lookat[:] = look_at
    camera.distance = float(distance)
    camera.azimuth = float(azimuth)
    camera.elevation = float(elevation)
    return camera


def open_renderer(model: mujoco.MjModel, width: int, height: int) -> mujoco.Renderer:
    """An offscreen renderer, or an :class:`InputError` saying in one line why there is none
    (:func:`pinkctl._gl.open_renderer`)."""
    return _gl_renderer(model, width, height)


def _draw_trail(
    scene: mujoco.MjvScene,
    points: list[np.ndarray],
    rgba: np.ndarray,
    width: float,
    *,
    dashed: bool = False,
) -> None:
    """Append a polyline through ``points`` to ``scene`` as capsules (every fourth one when
    ``dashed``)."""
    if len(points) < 2:
        return
    stride = max(1, len(points) // MAX_SEGMENTS)
    path = np.array(points[::stride] + [points[-1]])
    for k, (a, b) in enumerate(zip(path[:-1], path[1:])):
        if (dashed and k % 4) or scene.ngeom >= scene.maxgeom or np.linalg.norm(b - a) < 1e-6:
            continue
        geom = scene.geoms[scene.ngeom]
        mujoco.mjv_initGeom(
            geom, mujoco.mjtGeom.mjGEOM_CAPSULE, np.zeros(3), np.zeros(3), np.eye(3).ravel(), rgba
        )
        mujoco.mjv_connector(geom, mujoco.mjtGeom.mjGEOM_CAPSULE, width, a, b)
        geom.castshadow = False
        geom.emission = 0.6  # bright whatever the lighting
        scene.ngeom += 1
