"""The gizmo and the control panel of one target on the web page (:mod:`pinkctl.view.web`).

A panel holds the target's transform gizmo, a frame at its site, and the GUI controls: IK on
or off, solver and task costs of the built-in controller, "Sync to site", "Go home", the
trajectory mode (with its path drawn), the target's pose and a typed "Move to" pose (in the
page's conventions: :mod:`pinkctl.view.conventions`), and the tracking error and status. GUI
callbacks change the target under the scene's lock; :meth:`TargetPanel.refresh` shows a
:class:`TargetSnapshot` taken under that lock by the display thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from .._validation import real_number
from ..app.demo import build_trajectory
from ..qp import available_solvers
from ..trajectories._cartesian import SiteTrajectory
from .conventions import Conventions, GizmoStats
from .target import IkTarget

if TYPE_CHECKING:
    import viser

    from ..controllers import PinkIKController
    from .web import WebViewer

__all__ = ["TRAJECTORIES", "TargetPanel", "TargetSnapshot"]

#: A viser GUI input whose ``value`` the page writes. Untyped on purpose: viser types the
#: setter's argument unlike the getter's result, which mypy reads as a read-only property.
WrittenWidget: TypeAlias = Any

#: Trajectory modes of the panel: label -> ``pinkctl.app.demo.build_trajectory`` kind.
TRAJECTORIES = {"off": None, "figure-eight": "figure8", "circle": "circle"}
_SOLVERS = ("box", "daqp", "quadprog", "proxqp", "osqp", "clarabel")
_GO_HOME_DURATION = 1.5  # s


def _describe(stats: GizmoStats, conventions: Conventions) -> str:
    """One line for a pose: position [m], quaternion and Euler angles [rad]."""
    euler = "rpy" if conventions.euler_order == "rpy" else "XYZ"

    def numbers(values: np.ndarray) -> str:
        return " ".join(f"{v:.3f}" for v in values)

    return (
        f"p {numbers(stats.pos)} | q ({' '.join(conventions.quaternion_order)}) "
        f"{numbers(stats.quaternion)} | {euler} {numbers(stats.rot)}"
    )


@dataclass(frozen=True)
class TargetSnapshot:
    """What a panel shows of its target, copied under the scene lock.

    Attributes:
        site_position: The site's world position [m].
        site_quaternion: The site's world orientation (w, x, y, z).
        position: The target's world position [m].
        quaternion: The target's world orientation (w, x, y, z).
        following: Whether the target follows a trajectory.
        enabled: Whether its IK is on.
        error: Tracking error (position [m], orientation [rad]).
        status: The target's status (see :attr:`IkTarget.status`).
        last_error: Why the last tick wrote no command, or None.
    """

    site_position: np.ndarray
    site_quaternion: np.ndarray
    position: np.ndarray
    quaternion: np.ndarray
    following: bool
    enabled: bool
    error: tuple[float, float]
    status: str
    last_error: str | None

    @classmethod
    def of(cls, target: IkTarget) -> TargetSnapshot:
        """Snapshot ``target`` (call with the scene lock held)."""
        pose = target.target_pose()
        site_position, site_quaternion = target.sim.get_site_pose(target.site)
        return cls(
            site_position=site_position,
            site_quaternion=site_quaternion,
            position=pose.position,
            quaternion=pose.quaternion,
            following=target.following,
            enabled=target.enabled,
            error=target.tracking_error(),
            status=target.status,
            last_error=target.last_error,
        )


class TargetPanel:
    """The gizmo and the GUI controls of one target.

    Args:
        viewer: The page (its scene, server and trajectory settings).
        target: The target the gizmo moves and the controls change.
        server: The viser server to add the gizmo and the controls to.
    """

    def __init__(self, viewer: WebViewer, target: IkTarget, server: viser.ViserServer) -> None:
        self.viewer = viewer
        self.target = target
        self.dragging = False
        self.drag_phases: list[str] = []
        self._shown_enabled = target.enabled
        self.path: viser.LineSegmentsHandle | None = None
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
        async def _(event: viser.TransformControlsEvent) -> None:  # async: phases in order
            self.drag_phases.append(event.phase)
            if event.phase == "start":
                self.dragging = True
            with scene.lock:
                target._move(self.gizmo.position, self.gizmo.wxyz, None)  # viser: wxyz
            if event.phase == "end":
                self.dragging = False

        gui = server.gui
        with gui.add_folder(f"Target {target.site}"):
            self.enabled: WrittenWidget = gui.add_checkbox(
                "IK enabled", initial_value=target.enabled
            )
            self.enabled.on_update(
                lambda _: self._locked(target.set_ik_enabled, self.enabled.value)
            )
            controller = target.controller
            if controller is not None and target.ik_solve_fn is None:
                self._add_solver_controls(gui, controller)
            sync = gui.add_button("Sync to site")
            sync.on_click(lambda _: self._locked(target.sync_target_to_site))
            home = gui.add_button("Go home")
            home.on_click(lambda _: self._go_home())
            self.trajectory: WrittenWidget = gui.add_dropdown(
                "Trajectory", list(TRAJECTORIES), initial_value="off"
            )
            self.trajectory.on_update(lambda _: self._set_trajectory(self.trajectory.value))
            self.error: WrittenWidget = gui.add_text(
                "Tracking error", initial_value="-", disabled=True
            )
            self.status: WrittenWidget = gui.add_text("Status", initial_value="-", disabled=True)
            self._add_move_to(gui)

    def _add_solver_controls(self, gui: viser.GuiApi, controller: PinkIKController) -> None:
        """The solver dropdown and the frame and posture cost sliders of the built-in
        controller."""
        solvers = [s for s in _SOLVERS if s in available_solvers()]
        self.solver = gui.add_dropdown("Solver", solvers, initial_value=controller.solver)
        self.solver.on_update(lambda _: self._set_solver(self.solver.value))
        frame_task = controller.get_frame_task()
        costs = np.broadcast_to(np.asarray(frame_task.cost, dtype=float), (6,))
        self.position_cost = gui.add_slider(
            "Position cost", min=0.0, max=10.0, step=0.1, initial_value=float(costs[0])
        )
        self.position_cost.on_update(
            lambda _: self._locked(frame_task.set_position_cost, self.position_cost.value)
        )
        self.orientation_cost = gui.add_slider(
            "Orientation cost", min=0.0, max=10.0, step=0.1, initial_value=float(costs[3])
        )
        self.orientation_cost.on_update(
            lambda _: self._locked(frame_task.set_orientation_cost, self.orientation_cost.value)
        )
        posture = controller.get_posture_task()
        if posture is not None:
            self.posture_cost = gui.add_slider(
                "Posture cost",
                min=0.0,
                max=0.1,
                step=0.001,
                initial_value=float(np.max(posture.cost)),
            )
            self.posture_cost.on_update(
                lambda _: self._locked(setattr, posture, "cost", self.posture_cost.value)
            )

    def _add_move_to(self, gui: viser.GuiApi) -> None:
        """The target's pose and a typed move, in the page's conventions."""
        conventions = self.viewer.conventions
        euler = "roll pitch yaw" if conventions.euler_order == "rpy" else "Euler XYZ"
        order = " ".join(f"q{axis}" for axis in conventions.quaternion_order)
        self.pose: WrittenWidget = gui.add_text("Target pose", initial_value="-", disabled=True)
        self.move_to: WrittenWidget = gui.add_text(
            "Move to", initial_value="", hint=f"x y z [m], then {order} or {euler} [rad]"
        )
        unit = conventions.duration_unit
        self.move_duration: WrittenWidget = gui.add_number(
            f"Duration [{unit}]", initial_value=0.0, min=0.0
        )
        gui.add_button("Move").on_click(self._on_move)
        self.move_result: WrittenWidget = gui.add_text("Moved", initial_value="-", disabled=True)

    def _on_move(self, _: object) -> None:
        self.move_from_text()

    def move_from_text(self) -> bool:
        """Move the target to the pose typed in "Move to" over "Duration": 3 numbers (a
        position, orientation kept), 6 (and Euler angles) or 7 (and a quaternion), in the
        page's conventions. Returns whether it moved; "Moved" says what happened."""
        conventions, target = self.viewer.conventions, self.target
        try:
            values = [float(v) for v in str(self.move_to.value).replace(",", " ").split()]
            if len(values) not in (3, 6, 7):
                raise ValueError(f"type 3, 6 or 7 numbers, not {len(values)}")
            quaternion = None
            if len(values) == 7:
                quaternion = conventions.quaternion_in(values[3:])
            elif len(values) == 6:
                quaternion = conventions.euler_in(values[3:])
            duration = real_number(self.move_duration.value, "duration", low=0.0)
            with self.viewer.scene.lock:
                if quaternion is None:
                    quaternion = target.target_pose().quaternion
                target._move(values[:3], quaternion, conventions.seconds(duration))
        except ValueError as exc:
            self.move_result.value = str(exc)[:160]
            return False
        self.move_result.value = f"to {values[:3]} over {duration:g} {conventions.duration_unit}"
        return True

    def _locked(self, function: Callable[..., object], *args: object) -> None:
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
                self.target._move(home[0], home[1], _GO_HOME_DURATION)

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

    def _show_path(self, trajectory: SiteTrajectory | None) -> None:
        """Draw one period of the trajectory the target follows (None: remove the drawing)."""
        with self._path_lock:  # GUI callbacks and the display thread both come here
            if self.path is not None:
                self.path.remove()
                self.path = None
            server = self.viewer.server
            if trajectory is not None and server is not None:
                self.path = self._draw_path(server, trajectory)

    def _draw_path(
        self, server: viser.ViserServer, trajectory: SiteTrajectory
    ) -> viser.LineSegmentsHandle:
        times = np.linspace(1.0, 1.0 + self.viewer.trajectory_period, 121)
        path = np.array([trajectory.sample(float(t))[0] for t in times])
        segments = np.stack([path[:-1], path[1:]], axis=1)
        return server.scene.add_line_segments(
            f"/paths/{self.target.site}", segments, (255, 140, 0), thickness=0.004
        )

    def _move_gizmo(self, position: np.ndarray, quaternion: np.ndarray) -> None:
        """Put the gizmo at the target's pose (untouched when already there)."""
        if (
            np.abs(self.gizmo.position - position).max() > 1e-7
            or np.abs(self.gizmo.wxyz - quaternion).max() > 1e-7
        ):
            self.gizmo.position = position
            self.gizmo.wxyz = quaternion

    def _stop_following(self) -> None:
        """The trajectory ended, or a gizmo drag overrode it: its menu to off, path hidden."""
        if self.trajectory.value != "off":
            self.trajectory.value = "off"
        self._show_path(None)

    def refresh(self, state: TargetSnapshot) -> None:
        """Show the target's state (called by the display thread, outside the scene lock)."""
        self.site_frame.position = state.site_position
        self.site_frame.wxyz = state.site_quaternion
        position, quaternion = state.position, state.quaternion
        if not self.dragging:
            self._move_gizmo(position, quaternion)
        # widgets follow the target's own changes only (a stale snapshot must not undo a
        # click that arrived after it was taken)
        if state.following != self._shown_following:
            self._shown_following = state.following
            if not state.following:
                self._stop_following()
        if state.enabled != self._shown_enabled:
            self._shown_enabled = state.enabled
            if self.enabled.value != state.enabled:
                self.enabled.value = state.enabled
        stats = self.viewer.conventions.gizmo_stats(position, quaternion)
        self.pose.value = _describe(stats, self.viewer.conventions)
        error_m, error_rad = state.error
        self.error.value = f"{error_m * 1e3:.2f} mm, {np.degrees(error_rad):.2f} deg"
        status = state.status
        if state.last_error:
            status += f": {state.last_error}"
        self.status.value = status[:160]
