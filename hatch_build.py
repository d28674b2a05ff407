"""Build hook: compile pinkctl's native kernel: the extension module ``pinkctl._native._kernel``.

The sources are ``src/pinkctl/_native/_module.c`` (the CPython module) and the kernel it
exposes, ``_kernel.c``, ``_ik.c``, ``_ik_query.c``, ``_collision.c`` and ``_narrow.c`` (plain
C99, no Pinocchio). They are compiled with the C compiler and the flags of the interpreter that runs
the build (``sysconfig``), into ``_kernel`` + its extension suffix
(``_kernel.cpython-311-x86_64-linux-gnu.so``), which the wheel carries. Without a compiler or
Python's headers the build still succeeds, as a pure Python wheel, and pinkctl runs its Python
path (:func:`pinkctl._native.native_available` says which one is in use). ``make`` runs this
file directly to rebuild the module in ``src/`` after a source changes.

The compiled tick, ``pinkctl._native._tick`` (``_tick.cpp`` with the kernel's ``_kernel.c``),
is C++ on Pinocchio: it is built against the headers and libraries of the Pinocchio that the
running interpreter imports (the ``pin`` wheel's cmeel prefix; Eigen from ``cmeel-eigen``, the
``dev`` extra, or the system's ``eigen3``). ``python hatch_build.py`` (what ``make`` runs, in
the project's environment) builds it; without a C++ compiler, Pinocchio's headers or Eigen it
is skipped with a note and the controllers run their Python path
(:func:`pinkctl._native.tick_available`). A build backend's isolated environment has no
Pinocchio, so the wheel carries the kernel alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

NATIVE = Path("src") / "pinkctl" / "_native"
SOURCES = (
    NATIVE / "_module.c",
    NATIVE / "_kernel.c",
    NATIVE / "_ik.c",
    NATIVE / "_ik_query.c",
    NATIVE / "_collision.c",
    NATIVE / "_collision_tick.c",
    NATIVE / "_narrow.c",
)
EXTENSION = NATIVE / f"_kernel{sysconfig.get_config_var('EXT_SUFFIX')}"
# No fused multiply-add and no fast-math: the kernel must round exactly like numpy does.
FLAGS = ["-O2", "-fPIC", "-ffp-contract=off", "-fno-fast-math", "-std=c99", "-fvisibility=hidden"]
# an extension module is a bundle resolving Python's symbols when it is loaded on macOS
LINK = ["-bundle", "-undefined", "dynamic_lookup"] if sys.platform == "darwin" else ["-shared"]
TICK_SOURCE = NATIVE / "_tick.cpp"
TICK = NATIVE / f"_tick{sysconfig.get_config_var('EXT_SUFFIX')}"
# Pinocchio's own build settings (its headers need them to match libpinocchio_default)
PINOCCHIO_DEFINES = [
    "-DBOOST_MPL_LIMIT_LIST_SIZE=30",
    "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
    "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
    "-DBOOST_FUSION_INVOKE_MAX_ARITY=12",
    "-DPINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION",
    "-DNDEBUG",
]
CXX_FLAGS = ["-O2", "-fPIC", "-ffp-contract=off", "-fno-fast-math", "-std=c++17"]


def _skip(reason: str) -> None:
    print(f"pinkctl: {reason}: the Python path is used", file=sys.stderr)


def build_kernel(root: str | Path) -> Path | None:
    """Compile the extension next to its sources; returns it, or None (with a note on stderr)
    when it could not be built."""
    root = Path(root)
    headers = sysconfig.get_paths()["include"]
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    extension = root / EXTENSION
    command = [
        *compiler.split(),
        *FLAGS,
        f"-I{headers}",
        *LINK,
        "-o",
        str(extension),
        *(str(root / source) for source in SOURCES),
        "-lm",
    ]
    if shutil.which(command[0]) is None:
        _skip(f"no C compiler ({command[0]})")
        return None
    if not (Path(headers) / "Python.h").is_file():
        _skip(f"no Python headers in {headers} (the python3-dev package)")
        return None
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        _skip(f"the native kernel did not build ({' '.join(command)}):\n{result.stderr}")
        return None
    return extension


def _cmeel_prefix() -> Path | None:
    """The cmeel prefix of the interpreter's Pinocchio (headers and libraries), or None."""
    for key in ("purelib", "platlib"):
        prefix = Path(sysconfig.get_paths()[key]) / "cmeel.prefix"
        if (prefix / "include" / "pinocchio").is_dir():
            return prefix
    return None


def _eigen(prefix: Path) -> list[str]:
    """The include flag for Eigen's headers (none: the compiler's own search path)."""
    for candidate in (prefix / "include" / "eigen3", Path("/usr/include/eigen3")):
        if (candidate / "Eigen" / "Core").is_file():
            return [f"-I{candidate}"]
    return []


def build_tick(root: str | Path) -> Path | None:
    """Compile the compiled tick next to its sources; returns it, or None (with a note on
    stderr) when it could not be built. Prints how long the build took."""
    root = Path(root)
    prefix = _cmeel_prefix()
    if prefix is None:
        _skip("no Pinocchio headers (the pin wheel's cmeel.prefix) for the compiled tick")
        return None
    compilers = [os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"]
    compilers.append(os.environ.get("CXX") or sysconfig.get_config_var("CXX") or "c++")
    for compiler in compilers:
        if shutil.which(compiler.split()[0]) is None:
            _skip(f"no compiler ({compiler}) for the compiled tick")
            return None
    try:
        import numpy
    except ImportError:
        _skip("no numpy headers for the compiled tick")
        return None
    numpy_headers = numpy.get_include()
    headers = sysconfig.get_paths()["include"]
    libraries = prefix / "lib"
    python_lib = f"boost_python{sys.version_info.major}{sys.version_info.minor}"
    extension = root / TICK
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        kernel = Path(tmp) / "_kernel.o"
        tick = Path(tmp) / "_tick.o"
        linked = Path(tmp) / extension.name  # moved into place whole: running processes and
        # those starting meanwhile see the old module or the new one, never half of one
        commands = [
            [
                *compilers[0].split(),
                *FLAGS,
                f"-I{headers}",
                "-c",
                str(root / NATIVE / "_kernel.c"),
                "-o",
                str(kernel),
            ],
            [
                *compilers[1].split(),
                *CXX_FLAGS,
                "-fvisibility=hidden",
                *PINOCCHIO_DEFINES,
                f"-I{headers}",
                f"-I{prefix / 'include'}",
                *_eigen(prefix),
                f"-I{numpy_headers}",
                "-c",
                str(root / TICK_SOURCE),
                "-o",
                str(tick),
            ],
            [
                *compilers[1].split(),
                *LINK,
                "-o",
                str(linked),
                str(tick),
                str(kernel),
                f"-L{libraries}",
                # the wheel's layout (site-packages/pinkctl/_native), then this environment's
                f"-Wl,-rpath,$ORIGIN/../../cmeel.prefix/lib:{libraries}",
                "-lpinocchio_default",
                f"-l{python_lib}",
                "-lm",
            ],
        ]
        for command in commands:
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                failed = " ".join(command)
                _skip(f"the compiled tick did not build ({failed}):\n{result.stderr[-4000:]}")
                return None
        shutil.move(str(linked), str(extension.with_suffix(".tmp")))
        os.replace(extension.with_suffix(".tmp"), extension)
    print(f"pinkctl: built {TICK.name} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return extension


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script outside a build environment
    BuildHookInterface = object  # type: ignore[assignment,misc]


class NativeKernelHook(BuildHookInterface):  # type: ignore[misc]
    """Compiles the extension for wheels (which carry it) and editable installs (which import
    it from ``src/``)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        extension = build_kernel(self.root)
        if extension is None:
            return
        if version == "editable":  # where the environment's Pinocchio is visible to the hook
            build_tick(self.root)
        if version != "editable":
            build_data["force_include"][str(extension)] = f"pinkctl/_native/{extension.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True


if __name__ == "__main__":
    # the kernel is required of `make`; the compiled tick is optional (a note when skipped)
    here = Path(__file__).parent
    if "--tick" in sys.argv[1:]:
        build_tick(here)
        sys.exit(0)
    kernel_built = build_kernel(here) is not None
    if kernel_built:
        build_tick(here)
    sys.exit(0 if kernel_built else 1)
