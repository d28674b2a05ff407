"""The web page of ``pinkctl view``: the robot, a transform gizmo per target, control panels.

Built on `viser <https://viser.studio>`_ (``pip install pinkctl[view]``), which serves its
prebuilt client from the wheel: the page needs no internet access. The simulation runs in
real time behind the page (:meth:`InteractiveScene.start
<pinkctl.view.scene.InteractiveScene.start>`); a display thread sends the bodies' poses and
the panels' readouts to every open page about 30 times a second.

Dragging a gizmo moves its target (:meth:`IkTarget.move_target
<pinkctl.view.target.IkTarget.move_target>`), which also overrides a running trajectory.
When the target moves by itself (an animation, a trajectory, "go home", "sync to site"), the
gizmo follows it, except while the user holds it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import real_number
from ..app.demo import build_trajectory
from ..errors import InputError
from .meshes import body_meshes
from .recording import RecordedSession
from .scene import InteractiveScene

if TYPE_CHECKING:
    import viser

    from .target import IkTarget

__all__ = ["WebViewer", "TRAJECTORIES"]

#: Trajectory modes of the panel: label -> ``pinkctl.demo.build_trajectory`` kind.
TRAJECTORIES = {"off": None, "figure-eight": "figure8", "circle": "circle"}
_SOLVERS = ("daqp", "quadprog", "proxqp", "osqp", "clarabel")
_GO_HOME_DURATION = 1.5  # s


def _rgb(rgba: tuple[float, float, float, float]) -> tuple[int, int, int]:
    return (round(255 * rgba[0]), round(255 * rgba[1]), round(255 * rgba[2]))


class _TargetPanel:
    """The gizmo and the GUI controls of one target."""

    def __init__(self, viewer: WebViewer, target: IkTarget, server: viser.ViserServer) -> None:
        self.viewer = viewer
        self.target = target
        self.dragging = False
        self.drag_phases: list[str] = []
        self._shown_enabled = target.enabled
        self.path: Any = None
        self._path_lock = threading.Lock()
        self._shown_following = target.following
        scene = viewer.scene
        pose = target.target_pose()
        self.gizmo = server.scene.add_transform_controls(
            f"/targets/{target.site}",
            scale=0.2,
            line_width=3.0,
            position=pose.position,
            wxyz=pose.quaternion,
            depth_test=False,
        )
        self.site_frame = server.scene.add_frame(
            f"/sites/{target.site}", axes_length=0.05, axes_radius=0.004, origin_radius=0.008
        )

        @self.gizmo.on_update
        async def _(event: Any) -> None:  # async: phases arrive in order
            self.drag_phases.append(event.phase)
            if event.phase == "start":
                self.dragging = True
            with scene.lock:
                target.move_target(self.gizmo.position, self.gizmo.wxyz)
            if event.phase == "end":
                self.dragging = False

        gui = server.gui
        with gui.add_folder(f"Target {target.site}"):
            self.enabled: Any = gui.add_checkbox("IK enabled", initial_value=target.enabled)
            self.enabled.on_update(
                lambda _: self._locked(target.set_ik_enabled, self.enabled.value)
            )
            controller = target.controller
            if controller is not None and target.ik_solve_fn is None:
                import qpsolvers

                solvers = [s for s in _SOLVERS if s in qpsolvers.available_solvers]
                self.solver: Any = gui.add_dropdown(
                    "Solver", solvers, initial_value=controller.solver
                )
                self.solver.on_update(lambda _: self._set_solver(self.solver.value))
                frame_task = controller.get_frame_task()
                costs = np.broadcast_to(np.asarray(frame_task.cost, dtype=float), (6,))
                self.position_cost: Any = gui.add_slider(
                    "Position cost", min=0.0, max=10.0, step=0.1, initial_value=float(costs[0])
                )
                self.position_cost.on_update(
                    lambda _: self._locked(frame_task.set_position_cost, self.position_cost.value)
                )
                self.orientation_cost: Any = gui.add_slider(
                    "Orientation cost", min=0.0, max=10.0, step=0.1, initial_value=float(costs[3])
                )
                self.orientation_cost.on_update(
                    lambda _: self._locked(
                        frame_task.set_orientation_cost, self.orientation_cost.value
                    )
                )
                posture = controller.get_posture_task()
                if posture is not None:
                    self.posture_cost: Any = gui.add_slider(
                        "Posture cost",
                        min=0.0,
                        max=0.1,
                        step=0.001,
                        initial_value=float(np.max(posture.cost)),
                    )
                    self.posture_cost.on_update(
                        lambda _: self._locked(setattr, posture, "cost", self.posture_cost.value)
                    )
            sync = gui.add_button("Sync to site")
            sync.on_click(lambda _: self._locked(target.sync_target_to_site))
            home = gui.add_button("Go home")
            home.on_click(lambda _: self._go_home())
            self.trajectory: Any = gui.add_dropdown(
                "Trajectory", list(TRAJECTORIES), initial_value="off"
            )
            self.trajectory.on_update(lambda _: self._set_trajectory(self.trajectory.value))
            self.error: Any = gui.add_text("Tracking error", initial_value="-", disabled=True)
            self.status: Any = gui.add_text("Status", initial_value="-", disabled=True)

    def _locked(self, function: Any, *args: Any) -> None:
        with self.viewer.scene.lock:
            function(*args)

    def _set_solver(self, name: str) -> None:
        controller = self.target.controller
        assert controller is not None
        with self.viewer.scene.lock:
            controller.solver = name

    def _go_home(self) -> None:
        home = self.target.home_pose
        if home is not None:
            with self.viewer.scene.lock:
                self.target.move_target(home[0], home[1], duration=_GO_HOME_DURATION)

    def _set_trajectory(self, label: str) -> None:
        kind = TRAJECTORIES.get(label)
        target = self.target
        with self.viewer.scene.lock:
            if kind is None:
                if target.following:
                    target.stop_trajectory()
                trajectory = None
            else:
                pose = target.target_pose()
                trajectory = build_trajectory(
                    kind,
                    target.site,
                    pose.position,
                    pose.quaternion,
                    period=self.viewer.trajectory_period,
                    size=self.viewer.trajectory_size,
                    ramp_time=1.0,
                    cycles=1000.0,
                )
                target.follow_trajectory(trajectory)
        self._show_path(trajectory)

    def _show_path(self, trajectory: Any) -> None:
        """Draw one period of the trajectory the target follows (None: remove the drawing)."""
        with self._path_lock:  # GUI callbacks and the display thread both come here
            if self.path is not None:
                self.path.remove()
                self.path = None
            server = self.viewer.server
            if trajectory is not None and server is not None:
                self.path = self._draw_path(server, trajectory)

    def _draw_path(self, server: viser.ViserServer, trajectory: Any) -> Any:
        times = np.linspace(1.0, 1.0 + self.viewer.trajectory_period, 121)
        points = []
        for t in times:
            state = trajectory.get_target_state(float(t))
            position = (
                None
                if state is None or state.sites is None
                else state.sites.get_position(self.target.site)
            )
            if position is not None:
                points.append(position)
        if len(points) < 2:
            return None
        path = np.array(points)
        segments = np.stack([path[:-1], path[1:]], axis=1)
        return server.scene.add_line_segments(
            f"/paths/{self.target.site}", segments, (255, 140, 0), thickness=0.004
        )

    def refresh(self, site_pose: tuple[np.ndarray, np.ndarray], state: dict[str, Any]) -> None:
        """Show the target's state (called by the display thread, outside the scene lock)."""
        self.site_frame.position = site_pose[0]
        self.site_frame.wxyz = site_pose[1]
        position, quaternion = state["position"], state["quaternion"]
        if not self.dragging and (
            np.abs(self.gizmo.position - position).max() > 1e-7
            or np.abs(self.gizmo.wxyz - quaternion).max() > 1e-7
        ):
            self.gizmo.position = position
            self.gizmo.wxyz = quaternion
        # widgets follow the target's own changes only (a stale snapshot must not undo a
        # click that arrived after it was taken)
        if state["following"] != self._shown_following:
            self._shown_following = state["following"]
            if not state["following"] and self.trajectory.value != "off":
                self.trajectory.value = "off"  # ended, or a gizmo drag overrode it
            if not state["following"]:
                self._show_path(None)
        if state["enabled"] != self._shown_enabled:
            self._shown_enabled = state["enabled"]
            if self.enabled.value != state["enabled"]:
                self.enabled.value = state["enabled"]
        error_m, error_rad = state["error"]
        self.error.value = f"{error_m * 1e3:.2f} mm, {np.degrees(error_rad):.2f} deg"
        status = state["status"]
        if state["last_error"]:
            status += f": {state['last_error']}"
        self.status.value = status[:160]


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

    Raises:
        ValueError: On a bad host, port, rate, size or period.
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
    ) -> None:
        import viser  # noqa: F401  (fail early with ImportError when the extra is missing)

        if not isinstance(scene, InteractiveScene):
            raise InputError(f"scene must be an InteractiveScene, got {type(scene).__name__}")
        self.scene = scene
        if not isinstance(host, str):
            raise InputError(f"host must be a string, got {host!r}")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise InputError(f"port must be an integer in [0, 65535], got {port!r}")
        self.host = host
        self._port = port
        robot = scene.sim.robot
        self.title = title or (robot.name if robot is not None and robot.name else "pinkctl")
        self.update_rate = real_number(update_rate, "update_rate", low=1.0, high=240.0)
        self.trajectory_size = (
            None
            if trajectory_size is None
            else real_number(trajectory_size, "trajectory_size", low=0.0, low_open=True)
        )
        self.trajectory_period = real_number(
            trajectory_period, "trajectory_period", low=0.0, low_open=True
        )
        self.session_path = Path(session_path)
        self.environment_map = bool(environment_map)
        self.shadows = bool(shadows)
        self.server: viser.ViserServer | None = None
        self.panels: dict[str, _TargetPanel] = {}
        self._frames: dict[int, Any] = {}
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
        server.gui.add_markdown(f"**pinkctl view**: {self.title}")
        for target in self.scene.targets:
            self.panels[target.site] = _TargetPanel(self, target, server)
        self._add_session_panel(server)
        self.clock: Any = server.gui.add_text("Simulation", initial_value="-", disabled=True)
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
        model = self.scene.sim.model
        for k, mesh in enumerate(body_meshes(model)):
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
            record = gui.add_button("Record")
            path = gui.add_text("File (.json / .npz)", initial_value=str(self.session_path))
            save = gui.add_button("Save")
            replay = gui.add_button("Replay")
            self.session_status: Any = gui.add_text("Session", initial_value="-", disabled=True)

        @record.on_click
        def _(_: Any) -> None:
            with self.scene.lock:
                if recorder.recording:
                    recorder.stop()
                    record.label = "Record"
                else:
                    recorder.start()
                    record.label = "Stop recording"

        @save.on_click
        def _(_: Any) -> None:
            try:
                with self.scene.lock:
                    session = recorder.session()
                self.session_status.value = f"saved {session.save(path.value)}"
            except (ValueError, OSError) as exc:
                self.session_status.value = str(exc)

        @replay.on_click
        def _(_: Any) -> None:
            try:
                session = RecordedSession.load(path.value)
            except (ValueError, OSError) as exc:
                self.session_status.value = str(exc)
                return
            with self.scene.lock:
                count = session.replay(self.scene.targets)
            self.session_status.value = f"replaying {session.duration:.1f} s on {count} target(s)"

    # ------------------------------------------------------------------ display
    def _snapshot(self) -> tuple[np.ndarray, np.ndarray, dict[str, Any], dict[str, Any]]:
        """What the page shows, copied under the scene lock."""
        scene = self.scene
        data = scene.sim.data
        with scene.lock:
            xpos, xquat = data.xpos.copy(), data.xquat.copy()
            sites: dict[str, Any] = {}
            states: dict[str, Any] = {}
            for target in scene.targets:
                pose = target.target_pose()
                sites[target.site] = scene.sim.get_site_pose(target.site)
                states[target.site] = {
                    "position": pose.position,
                    "quaternion": pose.quaternion,
                    "following": target.following,
                    "enabled": target.enabled,
                    "error": target.tracking_error(),
                    "status": target.status,
                    "last_error": target.last_error,
                }
            sites["_time"] = scene.time
            sites["_recording"] = scene.recorder.samples if scene.recorder.recording else None
        return xpos, xquat, sites, states

    def _display_loop(self) -> None:
        period = 1.0 / self.update_rate
        while not self._stop.is_set():
            start = time.perf_counter()
            server = self.server
            if server is None:
                break
            xpos, xquat, sites, states = self._snapshot()
            with server.atomic():
                for body, frame in self._frames.items():
                    frame.position = xpos[body]
                    frame.wxyz = xquat[body]
                for site, panel in self.panels.items():
                    panel.refresh(sites[site], states[site])
            recording = sites["_recording"]
            clock = f"t = {sites['_time']:.1f} s, real-time factor {self.scene.realtime_factor:.2f}"
            if self.scene.loop_error:
                clock = f"stopped: {self.scene.loop_error}"
            if recording is not None:
                clock += f", recording ({recording} samples)"
            self.clock.value = clock
            self._stop.wait(max(0.0, period - (time.perf_counter() - start)))
