"""The web page of ``pinkctl view franka`` in a real headless browser.

Playwright drives Debian's chromium (``apt-get install -y chromium``; ``.ci/run`` installs
it) with software WebGL. The server runs in this process, so the test reads the simulation
directly: it drags the target's gizmo 10 cm with the mouse and checks that the simulated
tool follows, switches the IK off in the panel and checks that its commands stop, saves a
screenshot (``out/view-franka.png``) that must show the robot, and checks that the page
requested nothing from outside the server. Measured numbers go to
``out/view-browser.json``.
"""

from __future__ import annotations

import io
import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import sync_playwright
from viser import transforms as tf

from pinkctl.errors import InputError
from pinkctl.view.app import build_scene, load_robot
from pinkctl.view.browser import MAX_WAIT, launch_chromium, settle_camera, wait_for
from pinkctl.view.web import WebViewer

WIDTH, HEIGHT = 1024, 640
OUT = Path(__file__).resolve().parents[1] / "out"
DRAG = 0.10  # m
GIZMO_SCALE = 0.2  # m, WebViewer's gizmo size


def _robot_pixels(shown: bytes, hidden: bytes) -> np.ndarray:
    """Mask of the pixels that change when the robot's meshes are hidden."""
    a = np.asarray(Image.open(io.BytesIO(shown)).convert("RGB"), dtype=int)
    b = np.asarray(Image.open(io.BytesIO(hidden)).convert("RGB"), dtype=int)
    return np.abs(a - b).max(axis=2) > 40


@pytest.fixture
def viewer():
    scene = build_scene(load_robot("franka"))  # what `pinkctl view franka` serves
    web = WebViewer(scene, port=0).start()  # a fresh server: GUI state outlives reconnects
    yield web
    web.stop()


def test_IkGizmo_drag_moves_the_arm_ik_toggle_and_screenshot(viewer):
    scene = viewer.scene
    target = scene.target()
    panel = viewer.panels[target.site]
    measured: dict[str, float] = {}
    OUT.mkdir(exist_ok=True)
    t_start = time.monotonic()

    def error():
        with scene.lock:
            return target.tracking_error()[0]

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            page.goto(viewer.url)
            page.wait_for_selector("canvas")
            server = viewer.server
            client = wait_for(lambda: next(iter(server.get_clients().values()), None), 20, "page")
            measured["page_ready_s"] = time.monotonic() - t_start

            # --- drag the gizmo's y arrow 10 cm with the mouse
            with scene.lock:
                center = target.target_pose().position
            camera = settle_camera(
                client, center + [0.9, -0.15, 0.3], center, width=WIDTH, height=HEIGHT
            )
            axis = tf.SO3(np.asarray(panel.gizmo.wxyz)).as_matrix()[:, 1]  # world -y here
            direction = np.array([0.0, 1.0, 0.0]) * np.sign(axis[1])
            grab = center + 0.75 * GIZMO_SCALE * axis  # on the arrow's shaft
            a, b = camera.project(grab), camera.project(grab + DRAG * direction)
            page.mouse.move(*a)
            page.mouse.down()
            for k in range(1, 13):
                page.mouse.move(*(a + (b - a) * k / 12))
            page.mouse.up()
            wait_for(lambda: panel.drag_phases[-1:] == ["end"], 10, "the end of the drag")
            t_end = time.monotonic()
            phases = list(panel.drag_phases)
            assert phases[0] == "start" and "update" in phases, phases
            moved = np.asarray(panel.gizmo.position) - center
            along = float(moved @ direction)
            measured["gizmo_moved_m"] = along
            assert abs(along - DRAG) < 0.01, moved  # the mouse moved the gizmo 10 cm...
            assert np.linalg.norm(moved - along * direction) < 2e-3, moved  # ...along y
            with scene.lock:
                assert np.allclose(target.target_pose().position, panel.gizmo.position)

            # --- the simulated tool follows within 1 mm in 3 s
            measured["error_at_drag_end_m"] = error()
            wait_for(lambda: error() < 1e-3, 3.0, "the tool to follow within 1 mm")
            measured["follow_time_after_drag_end_s"] = time.monotonic() - t_end
            measured["error_after_follow_m"] = error()

            # --- a screenshot that shows the robot: pixels that change when it is hidden
            shown = page.screenshot(path=str(OUT / "view-franka.png"))
            viewer.set_robot_visible(False)
            time.sleep(0.5)
            hidden = page.screenshot()
            viewer.set_robot_visible(True)
            mask = _robot_pixels(shown, hidden)
            measured["robot_pixel_fraction"] = float(mask.mean())
            assert mask.mean() > 0.01, "the screenshot does not show the robot"
            with scene.lock:
                model, data = scene.sim.model, scene.sim.data
                links = [data.xpos[model.body(n).id].copy() for n in ("panda_link3", "panda_hand")]
            for link in links:  # the robot is where this camera sees it
                x, y = np.round(camera.project(link)).astype(int)
                assert mask[y - 8 : y + 9, x - 8 : x + 9].any(), (x, y)

            # --- IK off in the panel: its commands stop, the tool stays
            page.get_by_label("IK enabled").click()
            wait_for(lambda: not target.enabled, 5.0, "the IK to switch off")
            with scene.lock:
                written = target.commands_written
                ctrl = scene.sim.data.ctrl.copy()
                target.move_target(target.target_pose().position + [0.0, 0.0, -0.05])
            time.sleep(0.6)
            with scene.lock:
                assert target.commands_written == written
                assert np.array_equal(scene.sim.data.ctrl, ctrl)
                assert target.tracking_error()[0] > 0.045
            # --- and on again: it follows
            page.get_by_label("IK enabled").click()
            wait_for(lambda: target.enabled, 5.0, "the IK to switch on")
            wait_for(lambda: error() < 1e-3, 3.0, "the tool to follow again")
            assert target.commands_written > written

            # --- the page works offline: every request went to our server
            local = (viewer.url, f"http://127.0.0.1:{viewer.port}", "data:", "blob:")
            assert requests and all(url.startswith(local) for url in requests), requests
        finally:
            browser.close()
    measured["test_wall_s"] = time.monotonic() - t_start
    (OUT / "view-browser.json").write_text(json.dumps(measured, indent=2))


# ---------------------------------------------------------------------- settle_camera, no browser
class _Camera:
    """viser's CameraHandle as settle_camera uses it: setters that send nothing when the
    value does not change (``np.allclose``), and a browser that reports each change back
    (``echo``) or never answers."""

    def __init__(self, position, look_at, *, echo: bool) -> None:
        self.position_state = np.array(position, dtype=float)
        self.look_at_state = np.array(look_at, dtype=float)
        self.up_state = np.array([0.0, 0.0, 1.0])
        self.wxyz = np.array([1.0, 0.0, 0.0, 0.0])
        self.fov = 1.0
        self.callbacks: list = []
        self.echo = echo
        self.sent = 0

    def on_update(self, callback):
        self.callbacks.append(callback)

    def _set(self, name: str, value) -> None:
        value = np.asarray(value, dtype=float)
        if np.allclose(value, getattr(self, name)):
            return  # viser: nothing sent, so the browser reports nothing
        setattr(self, name, value)
        self.sent += 1
        if self.echo:
            for callback in self.callbacks:
                callback(self)

    position = property(lambda self: self.position_state, lambda s, v: s._set("position_state", v))
    look_at = property(lambda self: self.look_at_state, lambda s, v: s._set("look_at_state", v))
    up_direction = property(lambda self: self.up_state, lambda s, v: s._set("up_state", v))


class _Client:
    def __init__(self, camera: _Camera) -> None:
        self.camera = camera


EYE, CENTRE = [1.0, -0.2, 0.6], [0.3, 0.0, 0.4]


def test_settle_camera_returns_for_the_pose_the_camera_already_has():
    camera = _Camera(EYE, CENTRE, echo=False)  # the browser has nothing to report
    view = settle_camera(_Client(camera), EYE, CENTRE, width=WIDTH, height=HEIGHT, timeout=5.0)
    assert camera.sent == 0
    np.testing.assert_array_equal(view.position, EYE)


def test_settle_camera_waits_for_the_reported_pose():
    camera = _Camera([2.0, 0.0, 1.0], CENTRE, echo=True)
    view = settle_camera(_Client(camera), EYE, CENTRE, width=WIDTH, height=HEIGHT)
    assert camera.sent > 0
    np.testing.assert_array_equal(view.position, EYE)


def test_settle_camera_ends_with_a_timeout_error_when_the_browser_never_reports():
    camera = _Camera([2.0, 0.0, 1.0], CENTRE, echo=False)
    with pytest.raises(TimeoutError, match=r"timed out after 0.5 s waiting for the browser's"):
        settle_camera(_Client(camera), EYE, CENTRE, width=WIDTH, height=HEIGHT, timeout=0.5)


@pytest.mark.parametrize("timeout", [math.inf, math.nan, 0.0, -1.0, MAX_WAIT + 1, "10"])
def test_every_wait_has_a_finite_cap(timeout):
    with pytest.raises(InputError, match=r"timeout \[s\] must"):
        wait_for(lambda: True, timeout, "nothing")
    camera = _Camera(EYE, CENTRE, echo=True)
    with pytest.raises(InputError, match=r"timeout \[s\] must"):
        settle_camera(_Client(camera), EYE, CENTRE, width=WIDTH, height=HEIGHT, timeout=timeout)
    assert camera.sent == 0  # refused before anything was sent
