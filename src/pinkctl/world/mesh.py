"""Convex pieces of a mesh file, for :meth:`~pinkctl.world.World.add_mesh`.

A mesh file (any format trimesh reads: STL, OBJ, PLY, glTF, DAE, ...) becomes convex pieces:
each sub-mesh of the file (placed by the file's scene graph) is split into its connected
components, and each component is replaced by its convex hull. Distances to a convex piece
are signed (coal's GJK/EPA); distances to a triangle soup are not (a shape deep inside a
triangle mesh reads 0), which is why pinkctl never keeps a mesh as triangles. A concave
component (a bowl, an L-shaped shelf in one piece) is filled in by its hull: split it into
convex parts in the file to keep its hollows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import DescriptionNotFoundError, InputError

__all__ = ["MAX_PIECES", "hull_vertices", "mesh_pieces"]

#: Most convex pieces one mesh obstacle may have (each is a geometry of every query).
MAX_PIECES = 256


def hull_vertices(points: np.ndarray, what: str) -> np.ndarray:
    """The vertices (M, 3) of the convex hull of ``points`` (N, 3), in qhull's order.

    Raises:
        InputError: Fewer than 4 points, or points with no volume (flat or on a line);
            ``what`` names them in the message.
    """
    from scipy.spatial import ConvexHull, QhullError  # noqa: PLC0415 (import time: only here)

    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(points) < 4:
        raise InputError(f"{what}: a convex piece needs at least 4 points, got {len(points)}")
    if not np.isfinite(points).all():
        raise InputError(f"{what}: vertices must be finite")
    try:
        hull = ConvexHull(points)
    except QhullError:
        raise InputError(
            f"{what}: the points are flat (no volume); a convex obstacle needs a volume"
        ) from None
    return np.ascontiguousarray(points[hull.vertices])


def mesh_pieces(path: Path, scale: tuple[float, float, float]) -> tuple[np.ndarray, ...]:
    """The hull vertices of each convex piece of the mesh file ``path``, scaled [m].

    Raises:
        DescriptionNotFoundError: No such file.
        InputError: A file trimesh cannot read, with no triangles, with a flat piece, or with
            more than :data:`MAX_PIECES` pieces.
    """
    import trimesh  # noqa: PLC0415 (0.7 s of import time: only when a mesh is read)

    if not path.is_file():
        raise DescriptionNotFoundError(f"mesh file not found: {path}")
    try:
        scene = trimesh.load_scene(str(path))
    except Exception as exc:  # trimesh raises many kinds on a bad file
        raise InputError(f"path: cannot read mesh {path}: {exc}") from exc
    meshes = [m for m in scene.dump(concatenate=False) if isinstance(m, trimesh.Trimesh)]
    components = [c for m in meshes for c in m.split(only_watertight=False)]
    if not components:
        raise InputError(f"path: mesh {path} has no triangles")
    if len(components) > MAX_PIECES:
        raise InputError(
            f"path: mesh {path} has {len(components)} connected pieces; at most {MAX_PIECES} "
            "are allowed (merge them, or use a simpler collision mesh)"
        )
    factor = np.asarray(scale)
    return tuple(
        hull_vertices(np.asarray(c.vertices) * factor, f"path: mesh {path}, piece {k}")
        for k, c in enumerate(components)
    )
