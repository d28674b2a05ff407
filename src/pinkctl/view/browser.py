"""Driving the page from a headless browser: Chromium flags, pixel projection, camera sync.

What the browser test (``tests/test_view_browser.py``) and the README screenshot
(``tools/view_screenshot.py``) share. Playwright (``pip install playwright``, part of the
``dev`` extra) drives an installed Chromium (Debian's ``chromium`` package) through
``executable_path``; :data:`CHROMIUM_FLAGS` give it WebGL 2 in software (SwiftShader), so
it renders without a GPU or a display.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from .._validation import real_array, real_number
from ..core.poses import quaternion_to_matrix
from ..errors import InputError

if TYPE_CHECKING:
    import viser
    from playwright.sync_api import Browser, Playwright

__all__ = [
    "CHROMIUM",
    "CHROMIUM_FLAGS",
    "MAX_WAIT",
    "CameraView",
    "launch_chromium",
    "settle_camera",
    "wait_for",
]

#: Where Debian's ``chromium`` package puts the browser.
CHROMIUM = Path("/usr/bin/chromium")
#: Headless, software WebGL (keep ``--enable-unsafe-swiftshader``: Chrome is removing the
#: automatic SwiftShader fallback), no background network traffic.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--enable-unsafe-swiftshader",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

T = TypeVar("T")

#: Longest wait [s] the helpers here accept: every wait ends, with a TimeoutError at worst.
MAX_WAIT = 600.0
#: How long [s] the browser's camera must stay unreported (still) to count as settled.
QUIET = 0.3
UP = np.array([0.0, 0.0, 1.0])


def launch_chromium(playwright: Playwright, executable: Path = CHROMIUM) -> Browser:
    """A headless Chromium browser from Playwright's sync API.

    Raises:
        FileNotFoundError: If ``executable`` does not exist (install Debian's ``chromium``).
    """
    if not Path(executable).is_file():
        raise FileNotFoundError(f"{executable} not found: apt-get install -y chromium")
    return playwright.chromium.launch(
        executable_path=str(executable), args=list(CHROMIUM_FLAGS), headless=True
    )


def _timeout(value: float) -> float:
    return real_number(value, "timeout [s]", low=0.0, high=MAX_WAIT, low_open=True)


def wait_for(condition: Callable[[], T], timeout: float, what: str) -> T:
    """Poll ``condition`` every 20 ms until it returns something truthy, and return that.

    Raises:
        ValueError: (:class:`~pinkctl.errors.InputError`) ``timeout`` is not in
            (0, :data:`MAX_WAIT`] seconds (an infinite one could wait forever).
        TimeoutError: After ``timeout`` seconds, naming ``what``.
    """
    timeout = _timeout(timeout)
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


class CameraView:
    """A client's camera as the browser reported it: pose (OpenCV convention: x right,
    y down, z forward) and vertical field of view [rad], for a ``width`` x ``height`` canvas."""

    def __init__(
        self, position: ArrayLike, wxyz: ArrayLike, fov: float, width: int, height: int
    ) -> None:
        self.position = np.asarray(position, dtype=float)
        self.rotation = quaternion_to_matrix(wxyz)
        self.focal = 0.5 * height / np.tan(0.5 * fov)
        self.width, self.height = width, height

    def project(self, point: ArrayLike) -> np.ndarray:
        """Pixel (x, y) of a world point [m].

        Raises:
            ValueError: If the point is behind the camera.
        """
        p = self.rotation.T @ (np.asarray(point, dtype=float) - self.position)
        if p[2] <= 0:
            raise InputError("the point is behind the camera")
        return 0.5 * np.array([self.width, self.height]) + self.focal * p[:2] / p[2]


def _has_pose(camera: viser.CameraHandle, position: np.ndarray, look_at: np.ndarray) -> bool:
    """Whether setting this pose would change nothing (viser's setters compare with
    ``np.allclose`` and send nothing then, so the browser would report nothing)."""
    try:
        state = (camera.position, camera.look_at, camera.up_direction)
    except AssertionError:  # viser: the browser has not reported a camera yet
        return False
    return all(np.allclose(new, old) for new, old in zip((position, look_at, UP), state))


def settle_camera(
    client: viser.ClientHandle,
    position: ArrayLike,
    look_at: ArrayLike,
    *,
    width: int,
    height: int,
    timeout: float = 10.0,
) -> CameraView:
    """Set a viser client's camera (z up), wait until the browser has reported that pose back
    and stopped moving for :data:`QUIET` seconds, and return it.

    Projecting a gizmo with a camera the browser has not applied yet makes a mouse drag
    orbit the view instead of grabbing the gizmo, silently. When the camera already has the
    pose, viser sends nothing and the browser reports nothing: its last report is the pose,
    and the wait ends after :data:`QUIET` seconds without a report.

    Raises:
        ValueError: (:class:`~pinkctl.errors.InputError`) ``timeout`` not in
            (0, :data:`MAX_WAIT`] s, or a position that is not 3 finite numbers.
        TimeoutError: The browser did not settle at the pose within ``timeout`` seconds.
    """
    timeout = _timeout(timeout)
    wanted = real_array(position, "position", (3,))
    target = real_array(look_at, "look_at", (3,))
    reports: list[tuple[float, np.ndarray]] = []
    lock = threading.Lock()
    done = threading.Event()

    def record(handle: viser.CameraHandle) -> None:
        if done.is_set():  # viser cannot remove a camera callback: it retires instead
            return
        with lock:
            reports.append((time.monotonic(), np.array(handle.position, dtype=float)))

    camera = client.camera
    camera.on_update(record)
    unchanged = _has_pose(camera, wanted, target)
    camera.up_direction = UP
    camera.position = wanted
    camera.look_at = target
    start = time.monotonic()

    def settled() -> bool:
        now = time.monotonic()
        with lock:
            if reports:
                at, reported = reports[-1]
                return now - at >= QUIET and bool(np.allclose(reported, wanted, atol=1e-4))
        return unchanged and now - start >= QUIET

    try:
        wait_for(settled, timeout, f"the browser's camera to settle at {wanted.tolist()}")
    finally:
        done.set()
    return CameraView(camera.position, camera.wxyz, camera.fov, width, height)
