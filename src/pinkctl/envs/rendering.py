"""Rendering of the environments: the frame specification and a lazily created renderer.

Offscreen frames come from :class:`mujoco.Renderer`, built on the first frame so that an
environment that never renders never opens an OpenGL context (state-only training on a
headless machine). Headless rendering needs ``MUJOCO_GL=egl`` (or ``osmesa``).
``"human"`` mode opens MuJoCo's passive viewer window instead; on a Linux machine without a
display (no ``DISPLAY`` or ``WAYLAND_DISPLAY``) it warns once and draws nothing, rather than
letting GLFW end the process.
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import mujoco
import numpy as np

from .._validation import choice, integer
from ..errors import InputError

__all__ = ["GymRenderingSpec", "SceneCamera"]

RENDER_MODES = ("rgb_array", "human")


@dataclass(frozen=True)
class GymRenderingSpec:
    """Size and camera of the frames an environment renders.

    Attributes:
        height: Frame height [pixels], 1 to 4096.
        width: Frame width [pixels], 1 to 4096.
        camera_id: Camera of :meth:`~gymnasium.Env.render`: a camera name of the scene
            (every pinkctl environment has ``"front"``), its integer id, or -1 for MuJoCo's
            free camera. Image observations always use ``"front"``.
        mode: ``"rgb_array"`` (``render()`` returns an (height, width, 3) uint8 array) or
            ``"human"`` (a viewer window); used when the environment gets no ``render_mode``.

    Raises:
        ValueError: On a size out of range, a camera that is neither a non-empty name nor an
            integer >= -1, or an unknown mode.
    """

    height: int = 128
    width: int = 128
    camera_id: str | int = -1
    mode: Literal["rgb_array", "human"] = "rgb_array"

    def __post_init__(self) -> None:
        integer(self.height, "render_spec.height", low=1, high=4096)
        integer(self.width, "render_spec.width", low=1, high=4096)
        camera = self.camera_id
        if isinstance(camera, str):
            if not camera:
                raise InputError("render_spec.camera_id must not be an empty name")
        elif isinstance(camera, bool) or not isinstance(camera, (int, np.integer)):
            raise InputError(f"render_spec.camera_id must be a name or an int, got {camera!r}")
        else:
            integer(camera, "render_spec.camera_id", low=-1)
        choice(self.mode, "render_spec.mode", RENDER_MODES)


def has_display() -> bool:
    """Whether a window can be opened (always assumed off Linux)."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class SceneCamera:
    """Frames of one MuJoCo model and data at a fixed size; the renderer is made on first use.

    Args:
        model: The compiled model (its offscreen buffer must be at least ``width`` x
            ``height``; :class:`~pinkctl.MujocoSimulation` makes it 1280 x 960).
        data: The data to draw.
        width: Frame width [pixels].
        height: Frame height [pixels].

    Raises:
        ValueError: If the frame is larger than the model's offscreen buffer.
    """

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, *, width: int, height: int):
        buffer = (int(model.vis.global_.offwidth), int(model.vis.global_.offheight))
        if width > buffer[0] or height > buffer[1]:
            raise InputError(
                f"a {width}x{height} frame exceeds the model's {buffer[0]}x{buffer[1]} "
                "offscreen buffer"
            )
        self._model = model
        self._data = data
        self._size = (int(width), int(height))
        self._renderer: mujoco.Renderer | None = None
        self._viewer: Any = None
        self._warned = False

    def frame(self, camera: str | int) -> np.ndarray:
        """An RGB frame (height, width, 3) uint8 from ``camera`` (name, id, or -1: free)."""
        if self._renderer is None:
            width, height = self._size
            self._renderer = mujoco.Renderer(self._model, height=height, width=width)
        self._renderer.update_scene(self._data, camera=camera)
        return self._renderer.render().copy()

    def show(self) -> None:
        """Draw the current state in MuJoCo's passive viewer (opened on the first call)."""
        if self._viewer is None:
            if not has_display():
                if not self._warned:
                    warnings.warn(
                        "render_mode='human' needs a display; none found, nothing is drawn "
                        "(use render_mode='rgb_array' on a headless machine)",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                    self._warned = True
                return
            import mujoco.viewer

            self._viewer = mujoco.viewer.launch_passive(self._model, self._data)
        self._viewer.sync()

    def close(self) -> None:
        """Release the renderer and close the viewer (both are re-created on demand)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None
