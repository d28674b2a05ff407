"""The web page of ``pinkctl view``: the robot, a transform gizmo per target, control panels.

Built on `viser <https://viser.studio>`_ (``pip install pinkctl[view]``), which serves its
prebuilt client from the wheel: the page needs no internet access. The simulation runs in
real time behind the page (:meth:`InteractiveScene.start
<pinkctl.view.scene.InteractiveScene.start>`); a display thread sends the bodies' poses and
the panels' readouts to every open page about 30 times a second.

A world's obstacles are drawn with a gizmo each (:mod:`pinkctl.view.web_obstacles`).
Dragging a gizmo moves its target (:meth:`IkTarget.move_target
<pinkctl.view.target.IkTarget.move_target>`), which also overrides a running trajectory.
When the target moves by itself (an animation, a trajectory, "go home", "sync to site"), the
gizmo follows it, except while the user holds it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .._validation import integer, positive_number, real_number
from ..errors import InputError
from .conventions import Conventions, as_conventions
from .meshes import body_meshes
from .recording import RecordedSession
from .scene import InteractiveScene
from .web_obstacles import ObstacleGizmos
from .web_panel import TRAJECTORIES, TargetPanel, TargetSnapshot, WrittenWidget

if TYPE_CHECKING:
    import viser

__all__ = ["WebViewer", "TRAJECTORIES"]


@dataclass(frozen=True)
class _PageSnapshot:
    """What one display update shows, copied under the scene lock."""

    body_positions: np.ndarray  # (nbody, 3) [m]
    body_quaternions: np.ndarray  # (nbody, 4) (w, x, y, z)
    targets: dict[str, TargetSnapshot]  # by site
    time: float  # simulation time [s]
    recorded: int | None  # samples recorded so far, None when not recording


def _rgb(rgba: tuple[float, float, float, float]) -> tuple[int, int, int]:
    return (round(255 * rgba[0]), round(255 * rgba[1]), round(255 * rgba[2]))


class WebViewer:
    """Serve an :class:`~pinkctl.view.scene.InteractiveScene` as a web page.

    Args:
        scene: The scene (its targets get a gizmo and a panel each).
        host: Address to listen on (default: this machine only).
        port: TCP port; 0 picks a free one (see :attr:`port`).
        title: Heading of the panel (default: the robot's name).
        update_rate: Display updates per second [Hz].
        trajectory_size: Half-width / radius [m] of the panel's trajectories (None: 0.15 m
            figure-eight, 0.2 m circle).
        trajectory_period: Period [s] of the panel's trajectories.
        session_path: Default file of the panel's "Save" / "Replay" (``.npz`` or ``.json``).
        environment_map: Image-based lighting (viser's "warehouse" preset); nicer, but
            without a GPU (software WebGL) it delays the first frame by seconds.
        shadows: Shadow-casting lights; without a GPU they halve the frame rate.
        conventions: ``"pinkctl"`` or ``"threejs"``: how each panel shows its target's pose
            and reads a typed "Move to" pose and duration ((x, y, z, w) quaternions, XYZ Euler
            angles and milliseconds with ``"threejs"``; :mod:`pinkctl.view.conventions`).

    Raises:
        ValueError: On a bad host, port, rate, size, period or conventions.
        ImportError: If viser is not installed (``pip install pinkctl[view]``).
    """

    def __init__(
        self,
        scene: InteractiveScene,
        *,
        host: str = "127.0.0.1",
        port: int = 8080,
        title: str | None = None,
        update_rate: float = 30.0,
        trajectory_size: float | None = None,
        trajectory_period: float = 8.0,
        session_path: str | Path = "session.json",
        environment_map: bool = False,
        shadows: bool = False,
        conventions: str | Conventions = "pinkctl",
    ) -> None:
        import viser  # noqa: F401  (fail early with ImportError when the extra is missing)

        if not isinstance(scene, InteractiveScene):
            raise InputError(f"scene must be an InteractiveScene, got {type(scene).__name__}")
        self.scene = scene
        if not isinstance(host, str):
            raise InputError(f"host must be a string, got {host!r}")
        self.host = host
        self._port = integer(port, "port", low=0, high=65535)
        robot = scene.sim.robot
        self.title = title or (robot.name if robot is not None and robot.name else "pinkctl")
        self.update_rate = real_number(update_rate, "update_rate", low=1.0, high=240.0)
        self.trajectory_size = (
            None if trajectory_size is None else positive_number(trajectory_size, "trajectory_size")
        )
        self.trajectory_period = positive_number(trajectory_period, "trajectory_period")
        self.session_path = Path(session_path)
        self.environment_map = bool(environment_map)
        self.shadows = bool(shadows)
        #: How the panels show and read poses and durations.
        self.conventions = as_conventions(conventions)
        self.server: viser.ViserServer | None = None
        self.panels: dict[str, TargetPanel] = {}
        #: The simulation's world obstacles with their drag gizmos (None without a world).
        self.obstacles: ObstacleGizmos | None = None
        self._frames: dict[int, viser.FrameHandle] = {}
        self._robot_visible = True
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def port(self) -> int:
        """The TCP port the page is served on (after :meth:`start`)."""
        return self.server.get_port() if self.server is not None else self._port

    @property
    def url(self) -> str:
        """Address of the page."""
        host = "localhost" if self.host in ("0.0.0.0", "127.0.0.1", "") else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> WebViewer:
        """Start the server, build the page, start the simulation and the display thread."""
        import viser

        server = viser.ViserServer(host=self.host, port=self._port, verbose=False)
        self.server = server
        server.scene.set_up_direction("+z")
        server.scene.configure_default_lights(True, cast_shadow=self.shadows)
        if not self.environment_map:
            server.scene.configure_environment_map(None)
            server.scene.add_light_hemisphere("/lights/sky", intensity=0.8)
        self._set_initial_camera(server)
        server.scene.add_grid(
            "/ground", width=2.0, height=2.0, cell_size=0.1, section_size=0.5, plane="xy"
        )
        self._add_robot(server)
        world = self.scene.sim.world
        if world is not None and len(world):
            self.obstacles = ObstacleGizmos(self.scene, world, server)
        server.gui.add_markdown(f"**pinkctl view**: {self.title}")
        for target in self.scene.targets:
            self.panels[target.site] = TargetPanel(self, target, server)
        self._add_session_panel(server)
        self.clock: WrittenWidget = server.gui.add_text(
            "Simulation", initial_value="-", disabled=True
        )
        self.scene.start()
        self._stop.clear()
        self._thread = threading.Thread(target=self._display_loop, name="pinkctl-web", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the display thread, the simulation loop and the server."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        self.scene.stop()
        if self.server is not None:
            self.server.stop()
            self.server = None

    def __enter__(self) -> WebViewer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ page content
    def _set_initial_camera(self, server: viser.ViserServer) -> None:
        """Start the page's camera at the scene's default view."""
        position, look_at = self.scene.default_view()
        server.initial_camera.position = position
        server.initial_camera.look_at = look_at
        server.initial_camera.up = (0.0, 0.0, 1.0)

    def _add_robot(self, server: viser.ViserServer) -> None:
        model, world = self.scene.sim.model, self.scene.sim.world
        obstacles = set(world or ())  # bodies drawn by ObstacleGizmos
        for k, mesh in enumerate(body_meshes(model)):
            if mesh.body_name in obstacles:
                continue
            frame = self._frames.get(mesh.body_id)
            if frame is None:
                frame = server.scene.add_frame(f"/robot/{mesh.body_name}", show_axes=False)
                self._frames[mesh.body_id] = frame
            server.scene.add_mesh_simple(
                f"/robot/{mesh.body_name}/mesh_{k}",
                mesh.vertices,
                mesh.faces,
                color=_rgb(mesh.rgba),
                opacity=None if mesh.rgba[3] >= 1.0 else mesh.rgba[3],
            )

    @property
    def bodies(self) -> list[str]:
        """Names of the MuJoCo bodies the page draws."""
        model = self.scene.sim.model
        return [model.body(body).name for body in self._frames]

    def set_robot_visible(self, visible: bool) -> None:
        """Show or hide the robot's meshes (the gizmos stay)."""
        self._robot_visible = bool(visible)
        for frame in self._frames.values():
            frame.visible = self._robot_visible

    def _add_session_panel(self, server: viser.ViserServer) -> None:
        gui = server.gui
        recorder = self.scene.recorder
        with gui.add_folder("Recorded session"):
            record: WrittenWidget = gui.add_button("Record")  # its label is written
            path = gui.add_text("File (.json / .npz)", initial_value=str(self.session_path))
            save = gui.add_button("Save")
            replay = gui.add_button("Replay")
            self.session_status: WrittenWidget = gui.add_text(
                "Session", initial_value="-", disabled=True
            )

        @record.on_click
        def _(_: viser.GuiEvent[viser.GuiButtonHandle]) -> None:
            with self.scene.lock:
                if recorder.recording:
                    recorder.stop()
                    record.label = "Record"
                else:
                    recorder.start()
                    record.label = "Stop recording"

        @save.on_click
        def _(_: viser.GuiEvent[viser.GuiButtonHandle]) -> None:
            try:
                with self.scene.lock:
                    session = recorder.session()
                self.session_status.value = f"saved {session.save(path.value)}"
            except (ValueError, OSError) as exc:
                self.session_status.value = str(exc)

        @replay.on_click
        def _(_: viser.GuiEvent[viser.GuiButtonHandle]) -> None:
            try:
                session = RecordedSession.load(path.value)
            except (ValueError, OSError) as exc:
                self.session_status.value = str(exc)
                return
            with self.scene.lock:
                count = session.replay(self.scene.targets)
            self.session_status.value = f"replaying {session.duration:.1f} s on {count} target(s)"

    # ------------------------------------------------------------------ display
    def _snapshot(self) -> _PageSnapshot:
        """What the page shows, copied under the scene lock."""
        scene = self.scene
        data = scene.sim.data
        with scene.lock:
            return _PageSnapshot(
                body_positions=data.xpos.copy(),
                body_quaternions=data.xquat.copy(),
                targets={target.site: TargetSnapshot.of(target) for target in scene.targets},
                time=scene.time,
                recorded=scene.recorder.samples if scene.recorder.recording else None,
            )

    def _display_loop(self) -> None:
        period = 1.0 / self.update_rate
        while not self._stop.is_set():
            start = time.perf_counter()
            server = self.server
            if server is None:
                break
            snapshot = self._snapshot()
            with server.atomic():
                for body, frame in self._frames.items():
                    frame.position = snapshot.body_positions[body]
                    frame.wxyz = snapshot.body_quaternions[body]
                for site, panel in self.panels.items():
                    panel.refresh(snapshot.targets[site])
                if self.obstacles is not None:
                    self.obstacles.refresh()
            factor = self.scene.realtime_factor
            clock = f"t = {snapshot.time:.1f} s, real-time factor {factor:.2f}"
            if self.scene.loop_error:
                clock = f"stopped: {self.scene.loop_error}"
            if snapshot.recorded is not None:
                clock += f", recording ({snapshot.recorded} samples)"
            self.clock.value = clock
            self._stop.wait(max(0.0, period - (time.perf_counter() - start)))
