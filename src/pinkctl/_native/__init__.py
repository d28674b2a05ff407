"""pinkctl's native kernel: a small C library (``_kernel.c``, ``_ik.c``) loaded with ``ctypes``.

It runs the parts where Python overhead dwarfs the arithmetic: the motion shaper
(:mod:`pinkctl.motion.native`) and the box-constrained QP of the fused tick
(:mod:`pinkctl.qp.box_qp`) in ``_kernel.c``, and the IK iteration of a single frame goal on a
revolute/prismatic chain (:mod:`pinkctl.ik.native`) in ``_ik.c``. All give the Python path's
answers: the shaper bit for bit, the QP to rounding (``tests/test_native.py``), whole IK
solves to 1e-9 (``tests/test_native_ik.py``).

The library is compiled when pinkctl is installed (``hatch_build.py``; ``make`` rebuilds it
after the source changes). Where it is missing, out of date, or switched off with the
environment variable ``PINKCTL_NATIVE=0``, the Python path runs: :func:`native_available`
says which, and why.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

__all__ = ["NATIVE_ENVIRONMENT_VARIABLE", "kernel_library", "native_available"]

#: Set to ``0`` to run the Python path everywhere (the reference the kernel is tested against).
NATIVE_ENVIRONMENT_VARIABLE = "PINKCTL_NATIVE"

_SOURCES = (Path(__file__).with_name("_kernel.c"), Path(__file__).with_name("_ik.c"))
_LIBRARY = Path(__file__).with_name("_kernel.so")


def _load() -> tuple[ctypes.CDLL | None, str]:
    """The library and "", or None and why not."""
    if os.environ.get(NATIVE_ENVIRONMENT_VARIABLE, "1") == "0":
        return None, f"switched off ({NATIVE_ENVIRONMENT_VARIABLE}=0)"
    if not _LIBRARY.exists():
        return None, f"{_LIBRARY.name} was not built (no C compiler at install?)"
    for source in _SOURCES:
        if source.exists() and source.stat().st_mtime > _LIBRARY.stat().st_mtime:
            return None, f"{_LIBRARY.name} is older than {source.name}: run `make` to rebuild it"
    try:
        library = ctypes.CDLL(str(_LIBRARY))
    except OSError as exc:
        return None, f"{_LIBRARY.name} could not be loaded: {exc}"
    pointer = ctypes.c_void_p
    signatures: dict[str, tuple[list[type], type | None]] = {
        "pk_kernel_size": ([], ctypes.c_ulong),
        "pk_reset": ([pointer, pointer, pointer, pointer], None),
        "pk_update": ([pointer, pointer], None),
        "pk_bounds": ([pointer, pointer, pointer], ctypes.c_int),
        "pk_commit": ([pointer, pointer], None),
        "pk_follow": ([pointer, pointer, ctypes.c_int, ctypes.c_double], None),
        "pk_box_qp": ([ctypes.c_int, *[pointer] * 7], ctypes.c_int),
        "pk_ik_problem_size": ([], ctypes.c_ulong),
        "pk_ik_local": ([pointer], ctypes.c_int),
    }
    for name, (arguments, result) in signatures.items():
        function = getattr(library, name)
        function.argtypes = arguments
        function.restype = result
    return library, ""


_library, _unavailable_reason = _load()


def native_available() -> tuple[bool, str]:
    """Whether the native kernel is in use, and if not, why (``(True, "")`` when it is)."""
    return _library is not None, _unavailable_reason


def kernel_library() -> ctypes.CDLL:
    """The loaded library.

    Raises:
        RuntimeError: When it is not available (the reason in the message).
    """
    if _library is None:
        raise RuntimeError(f"the native kernel is not available: {_unavailable_reason}")
    return _library
