"""Build hook: compile pinkctl's native kernel: the extension module ``pinkctl._native._kernel``.

The sources are ``src/pinkctl/_native/_module.c`` (the CPython module) and the kernel it
exposes, ``_kernel.c``, ``_ik.c`` and ``_ik_query.c`` (plain C99, no Pinocchio). They are
compiled with the C compiler and the flags of the interpreter that runs the build
(``sysconfig``), into ``_kernel`` + its extension suffix
(``_kernel.cpython-311-x86_64-linux-gnu.so``), which the wheel carries. Without a compiler or
Python's headers the build still succeeds, as a pure Python wheel, and pinkctl runs its Python
path (:func:`pinkctl._native.native_available` says which one is in use). ``make`` runs this
file directly to rebuild the module in ``src/`` after a source changes.
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
SOURCES = (
    NATIVE / "_module.c",
    NATIVE / "_kernel.c",
    NATIVE / "_ik.c",
    NATIVE / "_ik_query.c",
)
EXTENSION = NATIVE / f"_kernel{sysconfig.get_config_var('EXT_SUFFIX')}"
# No fused multiply-add and no fast-math: the kernel must round exactly like numpy does.
FLAGS = ["-O2", "-fPIC", "-ffp-contract=off", "-fno-fast-math", "-std=c99", "-fvisibility=hidden"]
# an extension module is a bundle resolving Python's symbols when it is loaded on macOS
LINK = ["-bundle", "-undefined", "dynamic_lookup"] if sys.platform == "darwin" else ["-shared"]


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
        if version != "editable":
            build_data["force_include"][str(extension)] = f"pinkctl/_native/{extension.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True


if __name__ == "__main__":
    sys.exit(0 if build_kernel(Path(__file__).parent) is not None else 1)
