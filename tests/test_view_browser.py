"""The web page of ``pinkctl view franka`` in a real headless browser.

Playwright drives Debian's chromium (``apt-get install -y chromium``; ``.ci/run`` installs
it) with software WebGL. The server runs in this process, so the test reads the simulation
directly: it drags the target's gizmo 10 cm with the mouse and checks that the simulated
tool follows, switches the IK off in the panel and checks that its commands stop, and saves
a screenshot (``out/view-franka.png``) that must show the robot. Measured numbers go to
``out/view-browser.json``.
"""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import sync_playwright
from viser import transforms as tf

from pinkctl.view.app import build_scene, load_robot
from pinkctl.view.web import WebViewer

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--enable-unsafe-swiftshader",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDTH, HEIGHT = 1024, 640
OUT = Path(__file__).resolve().parents[1] / "out"
DRAG = 0.10  # m


def _wait(condition, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _project(camera, point):
    """Pixel (x, y) of a world point in this client's camera (OpenCV convention)."""
    rotation = tf.SO3(np.asarray(camera["wxyz"])).as_matrix()
    p = rotation.T @ (np.asarray(point) - camera["position"])
    assert p[2] > 0, "point behind the camera"
    focal = 0.5 * HEIGHT / np.tan(0.5 * camera["fov"])
    return np.array([0.5 * WIDTH + focal * p[0] / p[2], 0.5 * HEIGHT + focal * p[1] / p[2]])


def _settled_camera(client, position, look_at):
    """Set the client's camera, then wait until the client has reported it back and stopped
    moving (a stale camera would make the drag orbit the view instead)."""
    reports = []
    lock = threading.Lock()

    @client.camera.on_update
    def _(camera):
        with lock:
            reports.append((time.monotonic(), camera.position.copy()))

    client.camera.up_direction = (0.0, 0.0, 1.0)
    client.camera.position = position
    client.camera.look_at = look_at

    def settled():
        with lock:
            if not reports or time.monotonic() - reports[-1][0] < 0.3:
                return False
            return np.allclose(reports[-1][1], position, atol=1e-4)

    _wait(settled, 10.0, "the browser's camera to settle")
    camera = client.camera
    return {"position": camera.position.copy(), "wxyz": camera.wxyz.copy(), "fov": camera.fov}


def _robot_pixels(shown: bytes, hidden: bytes) -> np.ndarray:
    """Mask of the pixels that change when the robot's meshes are hidden."""
    a = np.asarray(Image.open(io.BytesIO(shown)).convert("RGB"), dtype=int)
    b = np.asarray(Image.open(io.BytesIO(hidden)).convert("RGB"), dtype=int)
    return np.abs(a - b).max(axis=2) > 40


@pytest.fixture
def viewer():
    assert CHROMIUM.is_file(), "the browser test needs Debian's chromium: apt-get install chromium"
    scene = build_scene(load_robot("franka"))
    web = WebViewer(scene, port=0).start()  # a fresh server: GUI state outlives reconnects
    yield web
    web.stop()


def test_drag_gizmo_moves_the_arm_ik_toggle_and_screenshot(viewer):
    scene = viewer.scene
    target = scene.target()
    panel = viewer.panels[target.site]
    measured: dict[str, float] = {}
    OUT.mkdir(exist_ok=True)
    t_start = time.monotonic()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=FLAGS, headless=True
        )
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.goto(viewer.url)
            page.wait_for_selector("canvas")
            server = viewer.server
            client = _wait(lambda: next(iter(server.get_clients().values()), None), 20, "client")
            measured["page_ready_s"] = time.monotonic() - t_start

            # --- drag the gizmo 10 cm along world y with the mouse
            with scene.lock:
                center = target.target_pose().position
            camera = _settled_camera(client, center + [0.9, -0.15, 0.3], center)
            rotation = tf.SO3(np.asarray(panel.gizmo.wxyz)).as_matrix()
            axis = rotation[:, 1]  # the gizmo's y arrow (world -y for the tool pointing down)
            direction = np.array([0.0, 1.0, 0.0]) * np.sign(axis[1])
            grab = center + 0.75 * 0.2 * axis  # on the arrow's shaft (gizmo scale 0.2)
            a, b = _project(camera, grab), _project(camera, grab + DRAG * direction)
            page.mouse.move(*a)
            page.mouse.down()
            for k in range(1, 13):
                page.mouse.move(*(a + (b - a) * k / 12))
            page.mouse.up()
            _wait(lambda: panel.drag_phases and panel.drag_phases[-1] == "end", 10, "drag end")
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
            def error():
                with scene.lock:
                    return target.tracking_error()[0]

            measured["error_at_drag_end_m"] = error()
            _wait(lambda: error() < 1e-3, 3.0, "the tool to follow within 1 mm")
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
                data = scene.sim.data
                points = [
                    data.xpos[scene.sim.model.body(n).id].copy()
                    for n in ("panda_link3", "panda_hand")
                ]
            for point in points:  # the robot is where the camera sees it
                x, y = np.round(_project(camera, point)).astype(int)
                assert mask[y - 8 : y + 9, x - 8 : x + 9].any(), (x, y)

            # --- IK off in the panel: its commands stop, the tool stays
            page.get_by_label("IK enabled").click()
            _wait(lambda: not target.enabled, 5.0, "the IK to switch off")
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
            _wait(lambda: target.enabled, 5.0, "the IK to switch on")
            _wait(lambda: error() < 1e-3, 3.0, "the tool to follow again")
            assert target.commands_written > written
        finally:
            browser.close()
    measured["test_wall_s"] = time.monotonic() - t_start
    (OUT / "view-browser.json").write_text(json.dumps(measured, indent=2))
