"""A world's obstacles on the web page (:mod:`pinkctl.view.web`), each with a drag gizmo.

Every obstacle of the simulation's :class:`~pinkctl.world.World` is drawn as a mesh under its
own frame (``/obstacles/<name>``): boxes, spheres, capsules and cylinders as their primitive,
meshes and convex obstacles as their convex pieces, a half-space as a see-through square of
:data:`HALFSPACE_SIZE` on its plane (solid side below); movable obstacles blue, the others
orange. Next to it, a transform gizmo
(``/obstacle_gizmos/<name>``); dragging it moves the obstacle in the world
(:meth:`World.move <pinkctl.world.World.move>`, under the scene's lock), which the simulation
(and a controller given the same world) follow at their next tick. When the world changes
otherwise (a script moves an obstacle), the drawing and the gizmo follow it, except while the
user holds that gizmo. Obstacles added to the world after the page was built are not drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..world import Obstacle, World

if TYPE_CHECKING:
    import viser

    from .scene import InteractiveScene

__all__ = ["HALFSPACE_SIZE", "ObstacleGizmos", "obstacle_mesh"]

#: Edge [m] of the square a half-space is drawn as (and its thickness, below the plane).
HALFSPACE_SIZE = 1.5
HALFSPACE_THICKNESS = 0.005
STATIC_COLOUR = (217, 115, 51)
MOVABLE_COLOUR = (64, 115, 230)
HALFSPACE_COLOUR = (150, 150, 160)


def obstacle_mesh(obstacle: Obstacle) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (V, 3) [m] in the obstacle's frame and faces (F, 3) of its drawing."""
    import trimesh  # an optional dependency (the ``view`` extra)

    dims = obstacle.dimensions
    kind = obstacle.kind
    if kind == "box":
        mesh = trimesh.creation.box(extents=dims["size"])
    elif kind == "sphere":
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=dims["radius"])
    elif kind == "capsule":
        mesh = trimesh.creation.capsule(height=dims["length"], radius=dims["radius"])
    elif kind == "cylinder":
        mesh = trimesh.creation.cylinder(radius=dims["radius"], height=dims["length"])
    elif kind == "halfspace":
        size = (HALFSPACE_SIZE, HALFSPACE_SIZE, HALFSPACE_THICKNESS)
        mesh = trimesh.creation.box(extents=size)
        mesh.apply_translation((0.0, 0.0, -0.5 * HALFSPACE_THICKNESS))
    else:
        mesh = trimesh.util.concatenate(
            [trimesh.convex.convex_hull(np.asarray(p)) for p in obstacle.pieces]
        )
    return np.asarray(mesh.vertices, dtype=np.float32), np.asarray(mesh.faces, dtype=np.uint32)


class ObstacleGizmos:
    """The obstacles of ``world`` on the page, with a gizmo each (module docstring).

    Args:
        scene: The scene (its lock guards the world's changes).
        world: The world drawn (the simulation's).
        server: The viser server.
        scale: Size of the gizmos [m].

    Attributes:
        gizmos: The transform gizmo of each obstacle, by name.
        frames: The frame each obstacle's mesh hangs on, by name.
        drag_phases: The drag phases each gizmo received, by name (for tests and tools).
    """

    def __init__(
        self,
        scene: InteractiveScene,
        world: World,
        server: viser.ViserServer,
        *,
        scale: float = 0.15,
    ) -> None:
        self.scene = scene
        self.world = world
        self.gizmos: dict[str, viser.TransformControlsHandle] = {}
        self.frames: dict[str, viser.FrameHandle] = {}
        self.drag_phases: dict[str, list[str]] = {}
        self._held: set[str] = set()
        self._version = -1
        for obstacle in world.obstacles:
            self._add(obstacle, server, scale)
        self.refresh()

    def _add(self, obstacle: Obstacle, server: viser.ViserServer, scale: float) -> None:
        name = obstacle.name
        frame = server.scene.add_frame(f"/obstacles/{name}", show_axes=False)
        vertices, faces = obstacle_mesh(obstacle)
        colour = MOVABLE_COLOUR if obstacle.movable else STATIC_COLOUR
        plane = obstacle.kind == "halfspace"  # see-through: a floor must not hide the robot
        server.scene.add_mesh_simple(
            f"/obstacles/{name}/mesh",
            vertices,
            faces,
            color=HALFSPACE_COLOUR if plane else colour,
            opacity=0.3 if plane else 0.85,
        )
        gizmo = server.scene.add_transform_controls(
            f"/obstacle_gizmos/{name}", scale=scale, line_width=2.5, depth_test=False
        )
        self.frames[name], self.gizmos[name] = frame, gizmo
        self.drag_phases[name] = []

        @gizmo.on_update
        async def _(event: viser.TransformControlsEvent) -> None:  # async: phases in order
            self.drag_phases[name].append(event.phase)
            if event.phase == "start":
                self._held.add(name)
            self.move(name, np.asarray(gizmo.position), np.asarray(gizmo.wxyz))
            if event.phase == "end":
                self._held.discard(name)

    def move(self, name: str, position: np.ndarray, quaternion: np.ndarray) -> None:
        """Move obstacle ``name`` in the world (what a drag does), under the scene's lock."""
        with self.scene.lock:
            if name in self.world:
                self.world.move(name, position=position, orientation=quaternion)
        self.refresh()

    def refresh(self) -> None:
        """Show the world's poses (called by the display thread; cheap when nothing moved)."""
        with self.scene.lock:
            version = self.world.version
            if version == self._version:
                return
            poses = {n: (o.position, o.orientation) for n, o in self.world.items()}
        for name, frame in self.frames.items():
            pose = poses.get(name)
            frame.visible = pose is not None
            self.gizmos[name].visible = pose is not None
            if pose is None:
                continue
            position, quaternion = np.array(pose[0]), np.array(pose[1])
            frame.position, frame.wxyz = position, quaternion
            if name not in self._held:
                self.gizmos[name].position, self.gizmos[name].wxyz = position, quaternion
        self._version = version
