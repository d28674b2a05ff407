"""Test-session setup: headless MuJoCo rendering."""

from __future__ import annotations

import os

# Offscreen rendering without a display; must be set before mujoco creates a GL context.
os.environ.setdefault("MUJOCO_GL", "egl")
