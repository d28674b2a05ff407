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

from ..core.poses import quaternion_to_matrix
from ..errors import InputError

if TYPE_CHECKING:
    import viser
    from playwright.sync_api import Browser, Playwright

__all__ = [
    "CHROMIUM",
    "CHROMIUM_FLAGS",
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


def wait_for(condition: Callable[[], T], timeout: float, what: str) -> T:
    """Poll ``condition`` every 20 ms until it returns something truthy, and return that.

    Raises:
        TimeoutError: After ``timeout`` seconds, naming ``what``.
    """
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
        return np.array(
            [
                0.5 * self.width + self.focal * p[0] / p[2],
                0.5 * self.height + self.focal * p[1] / p[2],
            ]
        )


def settle_camera(
    client: viser.ClientHandle,
    position: ArrayLike,
    look_at: ArrayLike,
    *,
    width: int,
    height: int,
    timeout: float = 10.0,
) -> CameraView:
    """Set a viser client's camera (z up), then wait until the browser has reported that
    pose back and stopped moving for 0.3 s, and return it.

    Projecting a gizmo with a camera the browser has not applied yet makes a mouse drag
    orbit the view instead of grabbing the gizmo, silently.
    """
    reports: list[tuple[float, np.ndarray]] = []
    lock = threading.Lock()
    wanted = np.asarray(position, dtype=float)

    def record(camera: viser.CameraHandle) -> None:
        with lock:
            reports.append((time.monotonic(), np.array(camera.position, dtype=float)))

    client.camera.on_update(record)
    client.camera.up_direction = (0.0, 0.0, 1.0)
    client.camera.position = wanted
    client.camera.look_at = np.asarray(look_at, dtype=float)

    def settled() -> bool:
        with lock:
            if not reports or time.monotonic() - reports[-1][0] < 0.3:
                return False
            return bool(np.allclose(reports[-1][1], wanted, atol=1e-4))

    wait_for(settled, timeout, "the browser's camera to settle")
    camera = client.camera
    return CameraView(camera.position, camera.wxyz, camera.fov, width, height)
