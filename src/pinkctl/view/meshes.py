"""Triangle meshes of a MuJoCo model's bodies, for drawing the robot outside MuJoCo.

Each body's geoms are turned into triangles in the body frame (boxes, spheres, ellipsoids,
capsules, cylinders and mesh geoms; planes, height fields and SDFs are skipped) and merged
per colour. A body shows its visual geoms (group 1, how MuJoCo imports URDF ``<visual>``
elements) when it has any, else its other geoms (group 0, collision shapes). Geoms in
groups above 2 are hidden, as in MuJoCo's viewer by default; mocap bodies (target markers)
are skipped. Vertices are in metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

__all__ = ["BodyMesh", "body_meshes"]

_VISUAL_GROUP = 1


@dataclass(frozen=True)
class BodyMesh:
    """Triangles of one colour attached to one body.

    Attributes:
        body_id: MuJoCo body id (its pose is ``data.xpos`` / ``data.xquat``).
        body_name: Body name.
        vertices: (V, 3) float32 vertices in the body frame [m].
        faces: (F, 3) uint32 vertex indices.
        rgba: Colour, 4 floats in [0, 1].
    """

    body_id: int
    body_name: str
    vertices: np.ndarray
    faces: np.ndarray
    rgba: tuple[float, float, float, float]


def _primitive(model: mujoco.MjModel, geom: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Vertices and faces of one geom in its own frame, or None for unsupported types."""
    import trimesh  # an optional dependency (the ``view`` extra)

    kind = int(model.geom_type[geom])
    size = model.geom_size[geom]
    g = mujoco.mjtGeom
    if kind == g.mjGEOM_BOX:
        mesh = trimesh.creation.box(extents=2.0 * size)
    elif kind == g.mjGEOM_SPHERE:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=float(size[0]))
    elif kind == g.mjGEOM_ELLIPSOID:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
        mesh.apply_scale(size)
    elif kind == g.mjGEOM_CAPSULE:
        mesh = trimesh.creation.capsule(height=2.0 * float(size[1]), radius=float(size[0]))
    elif kind == g.mjGEOM_CYLINDER:
        mesh = trimesh.creation.cylinder(radius=float(size[0]), height=2.0 * float(size[1]))
    elif kind == g.mjGEOM_MESH:
        mesh_id = int(model.geom_dataid[geom])
        v0, nv = int(model.mesh_vertadr[mesh_id]), int(model.mesh_vertnum[mesh_id])
        f0, nf = int(model.mesh_faceadr[mesh_id]), int(model.mesh_facenum[mesh_id])
        return np.array(model.mesh_vert[v0 : v0 + nv]), np.array(model.mesh_face[f0 : f0 + nf])
    else:
        return None
    return np.asarray(mesh.vertices), np.asarray(mesh.faces)


def _geom_groups(model: mujoco.MjModel, body: int) -> list[int]:
    """The geoms of ``body`` to draw (see the module docstring)."""
    geoms = [g for g in range(model.ngeom) if int(model.geom_bodyid[g]) == body]
    shown = [g for g in geoms if int(model.geom_group[g]) <= 2]
    visual = [g for g in shown if int(model.geom_group[g]) == _VISUAL_GROUP]
    return visual or shown


def body_meshes(model: mujoco.MjModel) -> list[BodyMesh]:
    """The meshes of every non-world, non-mocap body (see the module docstring)."""
    meshes: list[BodyMesh] = []
    for body in range(1, model.nbody):
        if int(model.body_mocapid[body]) >= 0:
            continue
        by_colour: dict[tuple[float, ...], list[tuple[np.ndarray, np.ndarray]]] = {}
        for geom in _geom_groups(model, body):
            primitive = _primitive(model, geom)
            if primitive is None:
                continue
            vertices, faces = primitive
            rotation = np.empty(9)
            mujoco.mju_quat2Mat(rotation, model.geom_quat[geom])
            placed = vertices @ rotation.reshape(3, 3).T + model.geom_pos[geom]
            rgba = tuple(round(float(c), 4) for c in model.geom_rgba[geom])
            by_colour.setdefault(rgba, []).append((placed, faces))
        for rgba, parts in by_colour.items():
            offsets = np.cumsum([0] + [len(v) for v, _ in parts[:-1]])
            meshes.append(
                BodyMesh(
                    body_id=body,
                    body_name=model.body(body).name,
                    vertices=np.vstack([v for v, _ in parts]).astype(np.float32),
                    faces=np.vstack([f + o for (_, f), o in zip(parts, offsets)]).astype(np.uint32),
                    rgba=(rgba[0], rgba[1], rgba[2], rgba[3]),
                )
            )
    return meshes
