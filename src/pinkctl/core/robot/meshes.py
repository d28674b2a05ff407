"""Mesh files of a robot description: where a URI points, and a copy MuJoCo can read.

A URDF names its meshes by URI:

- ``package://<package>/<path>``: the ROS convention. ``<package>`` is looked up, in this
  order, in the ``package_dirs`` given by the caller, in the folders of ``ROS_PACKAGE_PATH``,
  and in the description's ancestor folders (a folder *named* ``<package>``, or holding one).
  That last rule resolves descriptions shipped inside their package (``example-robot-data``)
  with no configuration at all.
- ``file://<absolute path>``, an absolute path, or a path relative to the description's folder.

Pinocchio (through coal/assimp) reads Collada, STL, OBJ and more; MuJoCo reads STL, OBJ and
its own formats. :func:`mujoco_readable` converts any other format with ``trimesh`` into an STL
file in a cache folder (``$PINKCTL_CACHE`` or ``~/.cache/pinkctl``, under ``meshes/``), keyed
by the source's path, size and modification time, and written atomically (a temporary file
renamed into place), so an interrupted run never leaves half a mesh behind. When a mesh cannot
be converted, a box with the mesh's bounding box (or a unit-centimetre box) stands in for it
and a warning names the file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...errors import DescriptionNotFoundError, InputError, PinkctlWarning

__all__ = [
    "MUJOCO_MESH_SUFFIXES",
    "MeshNotFoundError",
    "cache_dir",
    "mujoco_readable",
    "resolve_mesh_uri",
]

#: File types MuJoCo's mesh loader reads directly.
MUJOCO_MESH_SUFFIXES = frozenset({".stl", ".obj", ".msh"})


class MeshNotFoundError(DescriptionNotFoundError):
    """A mesh URI of a description that no candidate folder holds."""


def cache_dir() -> Path:
    """Folder for converted meshes: ``$PINKCTL_CACHE/meshes`` or ``~/.cache/pinkctl/meshes``."""
    root = os.environ.get("PINKCTL_CACHE") or str(Path.home() / ".cache" / "pinkctl")
    return Path(root) / "meshes"


def _package_roots(description: Path, package_dirs: Sequence[str | Path]) -> list[Path]:
    folder = description.resolve().parent
    roots = [Path(p) for p in package_dirs]
    roots += [Path(p) for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
    return roots + [folder, *folder.parents]


def resolve_mesh_uri(
    uri: str, *, description: Path, package_dirs: Sequence[str | Path] = ()
) -> Path:
    """The file a mesh URI of ``description`` names (see the module docstring).

    Raises:
        MeshNotFoundError: Naming the URI and every folder tried.
    """
    tried: list[Path] = []
    if uri.startswith("package://"):
        package, _, rest = uri[len("package://") :].partition("/")
        for root in _package_roots(description, package_dirs):
            candidates = [root / package / rest]
            if root.name == package:
                candidates.insert(0, root / rest)
            for candidate in candidates:
                tried.append(candidate.parent)
                if candidate.is_file():
                    return candidate.resolve()
    else:
        path = Path(uri[len("file://") :] if uri.startswith("file://") else uri)
        candidate = path if path.is_absolute() else description.resolve().parent / path
        tried.append(candidate.parent)
        if candidate.is_file():
            return candidate.resolve()
    folders = "\n  ".join(dict.fromkeys(str(t) for t in tried))
    raise MeshNotFoundError(
        f"mesh {uri!r} of {description} not found; folders tried:\n  {folders}\n"
        "(pass package_dirs=[...] or set ROS_PACKAGE_PATH)"
    )


def _cache_key(path: Path) -> str:
    stat = path.stat()
    text = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(data)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _box_stand_in(path: Path, reason: str) -> bytes:
    import trimesh  # noqa: PLC0415

    extents = np.full(3, 0.01)
    center = np.zeros(3)
    try:  # the bounding box when at least the vertices could be read
        loaded = trimesh.load(str(path), force="mesh")
        bounds = np.asarray(loaded.bounds, dtype=float)
        if bounds.shape == (2, 3) and np.isfinite(bounds).all():
            extents = np.maximum(bounds[1] - bounds[0], 1e-4)
            center = bounds.mean(axis=0)
    except Exception:  # noqa: BLE001 - no vertices: the default box
        pass
    warnings.warn(
        f"mesh {path} could not be converted for MuJoCo ({reason}); a box of "
        f"{np.round(extents, 4).tolist()} m stands in for it",
        PinkctlWarning,
        stacklevel=3,
    )
    box = trimesh.creation.box(extents=extents)
    box.apply_translation(center)
    exported = box.export(file_type="stl")
    return exported if isinstance(exported, bytes) else str(exported).encode()


def mujoco_readable(path: Path, *, cache: Path | None = None) -> Path:
    """``path`` itself when MuJoCo reads its format, else a cached STL conversion of it.

    A mesh that cannot be converted is replaced by a box stand-in (with a warning).
    """
    if path.suffix.lower() in MUJOCO_MESH_SUFFIXES:
        return path
    folder = cache if cache is not None else cache_dir()
    target = folder / f"{path.stem}-{_cache_key(path)}.stl"
    if target.is_file():
        return target
    import trimesh  # noqa: PLC0415

    try:
        mesh = trimesh.load(str(path), force="mesh")
        if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
            raise InputError("no triangles")
        exported = mesh.export(file_type="stl")
        data = exported if isinstance(exported, bytes) else str(exported).encode()
    except Exception as exc:  # noqa: BLE001 - any reader failure: a stand-in, with a warning
        data = _box_stand_in(path, f"{type(exc).__name__}: {exc}")
    _write_atomically(target, data)
    return target
