"""Build hook: compile pinkctl's native kernel (``src/pinkctl/_native/_kernel.c`` and ``_ik.c``).

The kernel is a plain C shared library loaded with ``ctypes`` (no Python headers, no
Pinocchio): any C compiler builds it. Without one the build still succeeds and pinkctl runs
its Python path (:mod:`pinkctl.motion.native` says which one is in use). ``make`` runs this
file directly to rebuild the library after a source changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

NATIVE = Path("src") / "pinkctl" / "_native"
SOURCES = (NATIVE / "_kernel.c", NATIVE / "_ik.c")
LIBRARY = NATIVE / "_kernel.so"
# No fused multiply-add and no fast-math: the kernel must round exactly like numpy does.
FLAGS = ["-O2", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math", "-std=c99"]


def build_kernel(root: str | Path) -> Path | None:
    """Compile the kernel next to its source; returns the library, or None (with a note on
    stderr) when no compiler could build it."""
    root = Path(root)
    sources, library = [str(root / source) for source in SOURCES], root / LIBRARY
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    command = [*compiler.split(), *FLAGS, "-o", str(library), *sources, "-lm"]
    if shutil.which(command[0]) is None:
        print(
            f"pinkctl: no C compiler ({command[0]}): the Python motion path is used",
            file=sys.stderr,
        )
        return None
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        print(
            f"pinkctl: the native kernel did not build ({' '.join(command)}):\n{result.stderr}"
            "the Python motion path is used",
            file=sys.stderr,
        )
        return None
    return library


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script outside a build environment
    BuildHookInterface = object  # type: ignore[assignment,misc]


class NativeKernelHook(BuildHookInterface):  # type: ignore[misc]
    """Compiles the kernel for wheels and editable installs."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        library = build_kernel(self.root)
        if library is None:
            return
        if version != "editable":  # an editable install imports it from src/
            build_data["force_include"][str(library)] = "pinkctl/_native/_kernel.so"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True


if __name__ == "__main__":
    sys.exit(0 if build_kernel(Path(__file__).parent) is not None else 1)
