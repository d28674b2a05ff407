"""Screenshot of the ``pinkctl view`` page for the README (docs/view.png).

Usage::

    python tools/view_screenshot.py [ROBOT] [--out docs/view.png]

Serves the robot's page on a free port, lets the target move a few seconds along the
panel's figure-eight (so the arm is caught mid-motion with a tracking error on the panel),
and takes a 1280 x 800 screenshot with headless Chromium (Debian's ``chromium`` package,
software WebGL; see :mod:`pinkctl.view.browser`).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from pinkctl.view.app import build_scene, load_robot
from pinkctl.view.browser import launch_chromium, wait_for
from pinkctl.view.web import WebViewer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("robot", nargs="?", default="franka")
    parser.add_argument("--out", type=Path, default=Path("docs/view.png"))
    parser.add_argument("--seconds", type=float, default=5.0, help="figure-eight time [s]")
    args = parser.parse_args()
    viewer = WebViewer(build_scene(load_robot(args.robot)), port=0).start()
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(viewer.url)
            page.wait_for_selector("canvas")
            server = viewer.server
            assert server is not None
            wait_for(lambda: server.get_clients(), 20, "the page")
            # the "software WebGL" notice (no GPU here) is not part of the page
            page.add_style_tag(content=".mantine-Notifications-root { display: none; }")
            panel = next(iter(viewer.panels.values()))
            panel.trajectory.value = "figure-eight"
            time.sleep(args.seconds)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out))
            browser.close()
    finally:
        viewer.stop()
    print(f"screenshot written to {args.out}")


if __name__ == "__main__":
    main()
