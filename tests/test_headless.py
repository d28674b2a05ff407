"""Offscreen rendering on a machine without a display, with nothing configured: pinkctl picks
MuJoCo's OpenGL back-end (EGL, then OSMesa) before MuJoCo reads ``MUJOCO_GL``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import mujoco
import pytest

from pinkctl import _gl
from pinkctl.errors import InputError
from pinkctl.sim.video import open_renderer

README = Path(__file__).parents[1] / "README.md"
#: Variables that select a display or a GL back-end: a fresh headless shell has none of them.
GL_VARIABLES = ("MUJOCO_GL", "PYOPENGL_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")


def _readme_loop() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    loops = [b for b in blocks if "sim.render()" in b]
    assert len(loops) == 1, "the README's controller loop (it ends with sim.render())"
    return loops[0]


def _headless_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in GL_VARIABLES}
    return env


def _some_backend_loads() -> bool:
    return any(_gl._loads(library) for _, library, _ in _gl.CANDIDATES)


needs_a_library = pytest.mark.skipif(
    not _some_backend_loads(), reason="neither libEGL nor libOSMesa is installed here"
)


@needs_a_library
@pytest.mark.parametrize("mujoco_first", [False, True], ids=["as-written", "mujoco-imported-first"])
def test_the_readme_loop_renders_in_a_fresh_headless_shell(tmp_path, mujoco_first):
    """The README's loop, as written, in a process whose environment sets no GL variable and
    no display (also when the script imports mujoco before pinkctl)."""
    script = ("import mujoco\n" if mujoco_first else "") + _readme_loop()
    script += "\nprint('image', image.shape, image.dtype, int(image.max()))\n"
    path = tmp_path / "loop.py"
    path.write_text(script)
    done = subprocess.run(
        [sys.executable, str(path)],
        env=_headless_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,  # a cap for a hung process, never what decides the outcome
    )
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("image (480, 640, 3) uint8"), done.stdout
    assert int(last.split()[-1]) > 0  # not a black frame


def test_pinkctl_selects_egl_then_osmesa_without_a_display(monkeypatch):
    loads = {"EGL": True, "OSMesa": True}
    monkeypatch.setattr(_gl, "_loads", lambda library: loads[library])
    monkeypatch.setattr(_gl.platform, "system", lambda: "Linux")
    environ: dict[str, str] = {}
    assert _gl.select_backend(environ) == "egl"
    assert environ == {"MUJOCO_GL": "egl", "PYOPENGL_PLATFORM": "egl"}
    loads["EGL"] = False
    environ = {}
    assert _gl.select_backend(environ) == "osmesa" and environ["MUJOCO_GL"] == "osmesa"
    # PyOpenGL's platform, when set, is the only back-end MuJoCo can use
    environ = {"PYOPENGL_PLATFORM": "egl"}
    assert _gl.select_backend(environ) is None and "MUJOCO_GL" not in environ


@pytest.mark.parametrize(
    "environ",
    [{"MUJOCO_GL": "glfw"}, {"DISPLAY": ":0"}, {"WAYLAND_DISPLAY": "wayland-0"}],
    ids=["user-choice", "x11", "wayland"],
)
def test_a_users_choice_or_a_display_is_left_alone(monkeypatch, environ):
    monkeypatch.setattr(_gl, "_loads", lambda library: True)
    monkeypatch.setattr(_gl.platform, "system", lambda: "Linux")
    before = dict(environ)
    assert _gl.select_backend(environ) is None
    assert environ == before
    assert _gl.render_problem(environ) is None


def test_neither_library_is_said_in_one_line(monkeypatch):
    monkeypatch.setattr(_gl, "_loads", lambda library: False)
    monkeypatch.setattr(_gl.platform, "system", lambda: "Linux")
    environ: dict[str, str] = {}
    assert _gl.select_backend(environ) is None and environ == {}
    problem = _gl.render_problem(environ)
    assert problem is not None and "\n" not in problem
    assert "EGL (Debian: libegl1)" in problem and "OSMesa (Debian: libosmesa6)" in problem


def test_a_renderer_that_cannot_start_is_one_input_error(monkeypatch):
    """What a renderer raises without OpenGL: one line saying which libraries were tried."""
    model = mujoco.MjModel.from_xml_string("<mujoco><worldbody/></mujoco>")

    def no_gl(*args, **kwargs):
        raise mujoco.FatalError("an OpenGL platform library has not been loaded")

    monkeypatch.setattr(mujoco, "Renderer", no_gl)
    for name in GL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(_gl.platform, "system", lambda: "Linux")
    with pytest.raises(InputError) as info:
        open_renderer(model, 64, 48)
    message = str(info.value)
    assert message.startswith("MuJoCo cannot render offscreen here: no display")
    assert "libegl1" in message and "libosmesa6" in message and "\n" not in message
    # with a back-end chosen, its own error and the setting in use are named
    monkeypatch.setenv("MUJOCO_GL", "egl")
    with pytest.raises(InputError, match="FatalError: an OpenGL .* \\(MUJOCO_GL=egl"):
        open_renderer(model, 64, 48)
