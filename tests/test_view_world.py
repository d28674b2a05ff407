"""``pinkctl view ROBOT --world scene.toml``: the obstacles on the web page, dragged with the
mouse in a real headless browser (as tests/test_view_browser.py), followed by the world and
the simulation; the command line's ``--world``."""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import sync_playwright
from viser import transforms as tf

from pinkctl import World, load_pink_supported_robot
from pinkctl.app.cli import main
from pinkctl.view.app import build_scene
from pinkctl.view.browser import launch_chromium, settle_camera, wait_for
from pinkctl.view.web import WebViewer
from pinkctl.view.web_obstacles import obstacle_mesh

WIDTH, HEIGHT = 1024, 640
OUT = Path(__file__).resolve().parents[1] / "out"
DRAG = 0.10  # m
GIZMO_SCALE = 0.15  # m, ObstacleGizmos' default


@pytest.fixture(scope="module")
def franka():
    return load_pink_supported_robot("franka")


def _world(robot) -> World:
    world = World.for_robot(robot)
    world.add_box("box", size=(0.1, 0.2, 0.2), position=(0.55, 0.25, 0.3), movable=True)
    world.add_sphere("ball", radius=0.06, position=(0.4, -0.35, 0.5))
    return world


@pytest.fixture
def viewer(franka):
    scene = build_scene(franka, world=_world(franka))
    web = WebViewer(scene, port=0).start()
    yield web
    web.stop()


def test_every_obstacle_kind_has_a_drawing(tmp_path):
    world = World()
    world.add_box("b", size=(0.1, 0.2, 0.3))
    world.add_sphere("s", radius=0.1)
    world.add_capsule("c", radius=0.05, length=0.2)
    world.add_cylinder("y", radius=0.05, length=0.2)
    world.add_halfspace("h", normal=(0.0, 0.0, 1.0), offset=0.0)
    world.add_convex("v", np.random.default_rng(0).uniform(-0.1, 0.1, (12, 3)))
    extents = {}
    for obstacle in world.obstacles:
        vertices, faces = obstacle_mesh(obstacle)
        assert faces.max() < len(vertices)
        extents[obstacle.name] = vertices.max(axis=0) - vertices.min(axis=0)
    np.testing.assert_allclose(extents["b"], (0.1, 0.2, 0.3), atol=1e-6)
    np.testing.assert_allclose(extents["c"][2], 0.3, atol=1e-6)  # length + 2 radius
    np.testing.assert_allclose(extents["y"], (0.1, 0.1, 0.2), atol=2e-3)
    assert obstacle_mesh(world["h"])[0][:, 2].max() == pytest.approx(0.0, abs=1e-6)


def test_drag_an_obstacle_with_the_mouse_moves_it_in_the_world_and_the_simulation(viewer):
    scene, world = viewer.scene, viewer.scene.sim.world
    gizmos = viewer.obstacles
    assert gizmos is not None and set(gizmos.gizmos) == {"floor", "box", "ball"}
    assert not {"floor", "box", "ball"} & set(viewer.bodies)  # drawn once, not as robot links
    gizmo = gizmos.gizmos["box"]
    center = np.array(world["box"].position)
    OUT.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.goto(viewer.url)
            page.wait_for_selector("canvas")
            server = viewer.server
            client = wait_for(lambda: next(iter(server.get_clients().values()), None), 20, "page")
            camera = settle_camera(
                client, center + [0.9, -0.2, 0.35], center, width=WIDTH, height=HEIGHT
            )
            axis = tf.SO3(np.asarray(gizmo.wxyz)).as_matrix()[:, 1]  # the gizmo's y arrow
            grab = center + 0.75 * GIZMO_SCALE * axis
            a, b = camera.project(grab), camera.project(grab + DRAG * axis)
            page.mouse.move(*a)
            page.mouse.down()
            for k in range(1, 13):
                page.mouse.move(*(a + (b - a) * k / 12))
            page.mouse.up()
            wait_for(lambda: gizmos.drag_phases["box"][-1:] == ["end"], 10, "the end of the drag")
            phases = gizmos.drag_phases["box"]
            assert phases[0] == "start" and "update" in phases, phases
            with scene.lock:
                moved = np.array(world["box"].position) - center
            assert abs(moved @ axis - DRAG) < 0.01, moved
            assert np.linalg.norm(moved - (moved @ axis) * axis) < 2e-3, moved
            # the simulation's mocap body follows at its next step
            body = scene.sim.model.body("box").id
            wait_for(
                lambda: np.allclose(scene.sim.data.xpos[body], world["box"].position, atol=1e-9),
                5.0,
                "the simulation to follow the world",
            )
            # a script moves the ball: the drawing and its gizmo follow
            with scene.lock:
                world.move("ball", position=(0.4, -0.3, 0.6))
            wait_for(
                lambda: np.allclose(gizmos.frames["ball"].position, (0.4, -0.3, 0.6)),
                5.0,
                "the page to follow the world",
            )
            assert np.allclose(gizmos.gizmos["ball"].position, (0.4, -0.3, 0.6))
            # the screenshot shows the box where the camera sees it: pixels that change when
            # the obstacles are hidden
            time.sleep(0.3)
            shown = page.screenshot(path=str(OUT / "view-world.png"))
            for frame in gizmos.frames.values():
                frame.visible = False
            time.sleep(0.5)
            hidden = page.screenshot()
        finally:
            browser.close()
    a, b = (
        np.asarray(Image.open(io.BytesIO(s)).convert("RGB"), dtype=int) for s in (shown, hidden)
    )
    mask = np.abs(a - b).max(axis=2) > 40
    x, y = np.round(camera.project(np.array(world["box"].position))).astype(int)
    assert mask[y - 12 : y + 13, x - 12 : x + 13].mean() > 0.5  # (the gizmo stays on top)


def test_view_command_takes_a_world_file(tmp_path, capsys, franka):
    path = tmp_path / "scene.toml"
    _world(franka).save(path)
    assert main(["view", "franka", "--port", "0", "--duration", "0.3", "--world", str(path)]) == 0
    assert "http://localhost:" in capsys.readouterr().out
    assert main(["view", "franka", "--port", "0", "--world", str(tmp_path / "none.toml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "none.toml" in err[0]
