"""``pinkctl view --native``: MuJoCo's passive viewer, the target as a mocap body to drag.

Each target shows as a mocap marker body (see :func:`pinkctl.view.app.build_scene`). In the
viewer, double-click the marker to select it, then hold Ctrl and drag with the right mouse
button to move it (left button: rotate). Every display frame the loop compares each marker
with its target: a marker the user moved becomes the target's new pose
(:meth:`IkTarget.move_target <pinkctl.view.target.IkTarget.move_target>`, which also
overrides a replayed session); otherwise the marker shows the target. The same
:class:`~pinkctl.view.scene.InteractiveScene` as the web page runs the controller in real
time behind it.

Without a display (no ``DISPLAY`` or ``WAYLAND_DISPLAY`` on Linux) the command stops before
opening anything, with a one-line reason (:func:`display_problem`).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from typing import Protocol

import mujoco
import numpy as np

from .._validation import real_number
from ..core.poses import quaternion_angle
from .scene import InteractiveScene

__all__ = ["NativeViewerError", "display_problem", "follow_markers", "run_native"]

_FRAME_PERIOD = 1.0 / 60.0  # s
#: A marker turned by less than this from its target [rad] was not moved by the user (the
#: viewer and the target store the same orientation up to rounding).
MARKER_TURN_TOLERANCE = 1e-6


class NativeViewerError(RuntimeError):
    """The native viewer could not be opened (the message is one line)."""


class _Handle(Protocol):
    """What the loop needs of ``mujoco.viewer.launch_passive``'s handle."""

    def is_running(self) -> bool: ...

    def sync(self) -> None: ...

    def close(self) -> None: ...


def display_problem() -> str | None:
    """Why no window can be opened here, in one line, or None when a display is available."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return (
            "no display for MuJoCo's viewer (DISPLAY is not set); run it under a desktop or "
            "xvfb-run, or use the web page: pinkctl view ROBOT"
        )
    return None


def _marker_ids(scene: InteractiveScene) -> list[int]:
    """Mocap index of each target's marker (-1: none), matched by ``marker_name``."""
    from .app import marker_name

    model = scene.sim.model
    ids = []
    for index in range(len(scene.targets)):
        body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, marker_name(index))
        ids.append(int(model.body_mocapid[body]) if body >= 0 else -1)
    return ids


def follow_markers(scene: InteractiveScene, markers: list[int]) -> int:
    """Targets whose marker the user moved take its pose; returns how many moved.

    Call with ``scene.lock`` held, right after the viewer applied the user's drag.
    """
    data = scene.sim.data
    moved = 0
    for target, mocap in zip(scene.targets, markers, strict=True):
        if mocap < 0:
            continue
        pose = target.target_pose()
        position, quaternion = data.mocap_pos[mocap], data.mocap_quat[mocap]
        turned = quaternion_angle(quaternion, pose.quaternion) > MARKER_TURN_TOLERANCE
        if np.abs(position - pose.position).max() > 1e-9 or turned:
            target._move(position.copy(), quaternion.copy(), None)  # MuJoCo: (w, x, y, z)
            moved += 1
    return moved


def _aim(handle: _Handle, scene: InteractiveScene) -> None:
    """Point the viewer's free camera at the scene's default view (farther back: MuJoCo's
    45-degree field of view is narrower than the web page's)."""
    camera = getattr(handle, "cam", None)
    if camera is None:
        return
    position, look_at = scene.default_view()
    forward = look_at - position
    distance = float(np.linalg.norm(forward))
    forward /= distance
    distance *= 1.6
    with scene.lock:
        camera.lookat[:] = look_at
        camera.distance = distance
        camera.azimuth = float(np.degrees(np.arctan2(forward[1], forward[0])))
        camera.elevation = float(np.degrees(np.arcsin(forward[2])))


def run_native(
    scene: InteractiveScene,
    *,
    duration: float | None = None,
    launch: Callable[[mujoco.MjModel, mujoco.MjData], _Handle] | None = None,
) -> None:
    """Show ``scene`` in MuJoCo's passive viewer until the window closes (or ``duration``
    seconds pass), with the simulation in real time.

    Args:
        scene: The scene (targets with mocap markers, see :func:`pinkctl.view.app.build_scene`).
        duration: Stop after this many seconds (default: when the window closes).
        launch: Viewer factory ``launch(model, data) -> handle`` (default
            ``mujoco.viewer.launch_passive``).

    Raises:
        NativeViewerError: If there is no display or the viewer fails to open.
    """
    if duration is not None:
        duration = real_number(duration, "duration", low=0.0)
    if launch is None:
        problem = display_problem()
        if problem is not None:
            raise NativeViewerError(problem)
        import mujoco.viewer

        launch = functools.partial(mujoco.viewer.launch_passive, show_right_ui=False)
    try:
        handle: _Handle = launch(scene.sim.model, scene.sim.data)
    except Exception as exc:  # GLFW without a usable display, missing OpenGL, ...
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise NativeViewerError(f"MuJoCo's viewer did not open: {message}") from exc
    _aim(handle, scene)
    markers = _marker_ids(scene)
    end = None if duration is None else time.monotonic() + duration
    scene.start()
    try:
        while handle.is_running() and (end is None or time.monotonic() < end):
            with scene.lock:
                handle.sync()  # applies the user's drag to the mocap markers
                follow_markers(scene, markers)
            time.sleep(_FRAME_PERIOD)
    finally:
        scene.stop()
        handle.close()
