"""pinkctl's native kernel: the C extension module ``pinkctl._native._kernel``.

It runs the parts where Python overhead dwarfs the arithmetic: the motion shaper
(:mod:`pinkctl.motion.native`) and the box-constrained QP of the fused tick
(:mod:`pinkctl.qp.box_qp`) in ``_kernel.c``, and the IK iteration of a single frame goal on a
revolute/prismatic chain (:mod:`pinkctl.ik.native`) in ``_ik.c``; ``_module.c`` makes them the
module's functions. A second, optional extension, ``pinkctl._native._tick`` (``_tick.cpp``,
C++ on Pinocchio's headers), runs a whole control tick in one call
(:mod:`pinkctl.controllers.compiled_tick`): :func:`tick_available` says whether it is there.
All give the Python path's answers: the shaper bit for bit, the QP to rounding
(``tests/test_native.py``), whole IK solves and ticks to 1e-9 (``tests/test_native_ik.py``,
``tests/test_compiled_tick.py``).

The extension is compiled when pinkctl is built (``hatch_build.py``, the build backend's hook:
the wheel carries it; ``make`` rebuilds it in ``src/`` after a source changes). Where it is
missing (no C compiler at install) or switched off with the environment variable
``PINKCTL_NATIVE=0``, the Python path runs: :func:`native_available` says which, and why.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = [
    "NATIVE_ENVIRONMENT_VARIABLE",
    "kernel_module",
    "native_available",
    "tick_available",
    "tick_module",
]

#: Set to ``0`` to run the Python path everywhere (the reference the kernel is tested against).
NATIVE_ENVIRONMENT_VARIABLE = "PINKCTL_NATIVE"


def _load(extension: str = "_kernel") -> tuple[ModuleType | None, str]:
    """The extension module and "", or None and why not."""
    if os.environ.get(NATIVE_ENVIRONMENT_VARIABLE, "1") == "0":
        return None, f"switched off ({NATIVE_ENVIRONMENT_VARIABLE}=0)"
    name = f"{__name__}.{extension}"
    try:
        return importlib.import_module(name), ""
    except ModuleNotFoundError:
        return None, f"the extension {name} is not built (no compiler or headers at install?)"
    except ImportError as exc:  # e.g. built for another interpreter
        return None, f"the extension {name} could not be loaded: {exc}"


_kernel_module, _unavailable_reason = _load()


def native_available() -> tuple[bool, str]:
    """Whether the native kernel is in use, and if not, why (``(True, "")`` when it is)."""
    return _kernel_module is not None, _unavailable_reason


def kernel_module() -> ModuleType:
    """The extension module (its functions take the addresses of arrays the caller owns).

    Raises:
        RuntimeError: When it is not available (the reason in the message).
    """
    if _kernel_module is None:
        raise RuntimeError(f"the native kernel is not available: {_unavailable_reason}")
    return _kernel_module


_tick_module: ModuleType | None = None
_tick_reason = "not loaded yet"


def tick_module() -> tuple[ModuleType | None, str]:
    """The compiled tick's extension module and "", or None and why not (loaded on first use,
    after Pinocchio's Python module, whose C++ types it reads)."""
    global _tick_module, _tick_reason
    if _tick_module is None and _tick_reason == "not loaded yet":
        import pinocchio  # noqa: F401  (registers the converters the extension looks up)

        _tick_module, _tick_reason = _load("_tick")
        if _tick_module is not None and _kernel_module is None:
            _tick_module, _tick_reason = (
                None,
                f"the native kernel is not available: {_unavailable_reason}",
            )
    return _tick_module, _tick_reason


def tick_available() -> tuple[bool, str]:
    """Whether the compiled tick is in use, and if not, why (``(True, "")`` when it is)."""
    module, reason = tick_module()
    return module is not None, reason
