"""Offscreen rendering without configuration: MuJoCo's OpenGL back-end chosen for headless use.

MuJoCo reads ``MUJOCO_GL`` once, when ``mujoco`` is first imported (its ``gl_context`` module
picks the ``GLContext`` class then; 3.x and 4.x alike). Unset, it means GLFW, which needs a
display: on a server, in CI or in a container the first renderer then fails with "an OpenGL
platform library has not been loaded". So, when importing pinkctl finds no display
(``DISPLAY`` and ``WAYLAND_DISPLAY`` unset, on Linux) and ``MUJOCO_GL`` unset, it selects EGL
when ``libEGL`` loads (a GPU, or Mesa's software EGL), else OSMesa when ``libOSMesa`` loads,
and sets ``MUJOCO_GL`` for MuJoCo (and ``PYOPENGL_PLATFORM`` for PyOpenGL, as MuJoCo does).
``pinkctl/__init__.py`` imports this module first, before anything imports ``mujoco``; when
the user's script imported ``mujoco`` earlier, the GLFW context class MuJoCo picked is
replaced by the selected one, before any renderer exists. A ``MUJOCO_GL`` the user set is
never changed. When neither library loads, nothing is set and :func:`render_problem` says so
in one line, which :func:`open_renderer` (every pinkctl renderer) raises.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import os
import platform
import sys
from collections.abc import MutableMapping
from typing import Any

from .errors import InputError

__all__ = ["SELECTED", "open_renderer", "render_problem", "select_backend"]

#: Back-ends tried without a display, in order: (MUJOCO_GL value, library, Debian package).
CANDIDATES = (("egl", "EGL", "libegl1"), ("osmesa", "OSMesa", "libosmesa6"))
#: MuJoCo modules that hold the ``GLContext`` class its renderer uses (4.x, then 3.x).
_CONTEXT_MODULES = ("mujoco.rendering.classic.gl_context", "mujoco.gl_context")


def _loads(library: str) -> bool:
    """Whether the shared library ``library`` (``"EGL"`` -> ``libEGL.so.1``) loads here."""
    name = ctypes.util.find_library(library)
    if name is None:
        return False
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def _has_display(environ: MutableMapping[str, str]) -> bool:
    if platform.system() != "Linux":
        return True  # macOS and Windows render without one (CGL, WGL)
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


def _switch_loaded_mujoco(backend: str) -> None:
    """Give an already imported ``mujoco`` the ``GLContext`` of ``backend`` (it chose GLFW
    at import, from the unset ``MUJOCO_GL``)."""
    holders = [sys.modules[name] for name in _CONTEXT_MODULES if name in sys.modules]
    if not holders:
        return
    try:
        context = importlib.import_module(f"mujoco.{backend}").GLContext
    except (ImportError, AttributeError, OSError):
        return  # PyOpenGL missing or unusable: the renderer will say so
    for module in (*holders, sys.modules["mujoco"]):
        if hasattr(module, "GLContext"):
            setattr(module, "GLContext", context)  # noqa: B010  (a module of MuJoCo's)


def select_backend(environ: MutableMapping[str, str] = os.environ) -> str | None:
    """Set ``MUJOCO_GL`` in ``environ`` for a machine without a display (module docstring).

    Returns:
        The back-end selected (``"egl"``, ``"osmesa"``), or None when nothing was set: a
        display, a ``MUJOCO_GL`` of the user's, or no library that loads.
    """
    if environ.get("MUJOCO_GL") or _has_display(environ):
        return None
    # PyOpenGL's platform, when the user set it, is the only back-end MuJoCo can then use
    wanted = environ.get("PYOPENGL_PLATFORM", "").lower()
    for backend, library, _ in CANDIDATES:
        if wanted and backend != wanted:
            continue
        if _loads(library):
            environ["MUJOCO_GL"] = backend
            environ.setdefault("PYOPENGL_PLATFORM", backend)
            if environ is os.environ and "mujoco" in sys.modules:
                _switch_loaded_mujoco(backend)
            return backend
    return None


def render_problem(environ: MutableMapping[str, str] = os.environ) -> str | None:
    """Why MuJoCo cannot render offscreen here, in one line, or None when it should.

    Only the case this module handles is diagnosed (no display, no ``MUJOCO_GL``, no
    library); any other failure is the renderer's own.
    """
    if environ.get("MUJOCO_GL") or _has_display(environ):
        return None
    tried = ", ".join(f"{library} (Debian: {package})" for _, library, package in CANDIDATES)
    return (
        f"no display and MUJOCO_GL is not set, and neither OpenGL library for offscreen "
        f"rendering loads: {tried}; install one, or set MUJOCO_GL"
    )


def open_renderer(model: Any, width: int, height: int) -> Any:
    """A ``mujoco.Renderer`` for ``model`` of ``width`` x ``height`` pixels.

    Raises:
        InputError: MuJoCo cannot render here; one line saying why (no library, or the
            back-end's own error) and what to set.
    """
    import mujoco  # noqa: PLC0415  (imported after the back-end is selected)

    try:
        return mujoco.Renderer(model, height=int(height), width=int(width))
    except ValueError:
        raise  # a size larger than the model's offscreen buffer: MuJoCo's message says so
    except Exception as exc:  # GL back-ends fail with many exception types
        reason = render_problem()
        if reason is None:
            chosen = os.environ.get("MUJOCO_GL", "")
            how = " (selected by pinkctl: no display)" if chosen and chosen == SELECTED else ""
            cause = " ".join(f"{type(exc).__name__}: {exc}".split())
            reason = (
                f"{cause} (MUJOCO_GL={chosen or 'unset'}{how}); without a display set "
                "MUJOCO_GL=egl or MUJOCO_GL=osmesa"
            )
        raise InputError(f"MuJoCo cannot render offscreen here: {reason}") from exc


#: The back-end selected when pinkctl was imported (None: see :func:`select_backend`).
SELECTED = select_backend()
