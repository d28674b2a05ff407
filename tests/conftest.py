"""Test-session setup: headless MuJoCo rendering."""

from __future__ import annotations

import os

import pytest

# Offscreen rendering without a display; must be set before mujoco creates a GL context.
os.environ.setdefault("MUJOCO_GL", "egl")


@pytest.fixture(scope="session")
def franka_robot():
    """The bundled Franka, loaded once per session (tests must not modify it)."""
    from pinkctl import load_pink_supported_robot

    return load_pink_supported_robot("franka")


@pytest.fixture
def franka_scene(franka_robot):
    """A fresh kinematic scene on the Franka (pinkctl.groups)."""
    from pinkctl.groups import KinematicScene

    return KinematicScene(franka_robot)
