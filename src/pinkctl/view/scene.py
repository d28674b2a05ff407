"""InteractiveScene: a MuJoCo simulation, its IK targets and a real-time clock.

One control tick at simulation time ``t``: read the measured state once, let every target do
its tick (:meth:`IkTarget.step <pinkctl.view.target.IkTarget.step>`: advance the target,
write the commands of its actuators when its IK is enabled), let the recorder sample the
targets, then advance the physics one control period. :meth:`InteractiveScene.start` runs
ticks in a background thread so that simulation time follows the wall clock, which is what
the web page and the native viewer show; all access from other threads goes through
:attr:`InteractiveScene.lock`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from .._validation import positive_number, real_number
from ..errors import InputError
from .recording import TargetRecorder
from .target import IkTarget

if TYPE_CHECKING:
    from ..sim import MujocoSimulation

__all__ = ["InteractiveScene"]

#: Longest stretch of simulation [s] the real-time loop catches up in one go; beyond it the
#: clock slips (the machine is too slow for real time) instead of freezing the page.
MAX_CATCH_UP = 0.1


class InteractiveScene:
    """A simulation with interactive IK targets, stepped by hand or in real time.

    Args:
        sim: The simulation.
        control_period: Control period [s], a whole multiple of the physics timestep
            (default: the timestep).

    Raises:
        ValueError: If ``control_period`` is not a positive multiple of the timestep.
    """

    def __init__(self, sim: MujocoSimulation, *, control_period: float | None = None) -> None:
        timestep = sim.timestep
        period = timestep if control_period is None else control_period
        period = positive_number(period, "control_period")
        substeps = round(period / timestep)
        if substeps < 1 or abs(substeps * timestep - period) > 1e-9 * period:
            raise InputError(
                f"control_period {period!r} must be a whole multiple of the timestep {timestep!r}"
            )
        self.sim = sim
        self.control_period = substeps * timestep
        self._substeps = substeps
        self.targets: list[IkTarget] = []
        #: Guards the simulation and the targets against concurrent access.
        self.lock = threading.RLock()
        #: Samples the targets' poses while recording (see :mod:`pinkctl.view.recording`).
        self.recorder = TargetRecorder()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._realtime_factor = 0.0
        #: Why the real-time loop stopped by itself (None while it runs or was stopped).
        self.loop_error: str | None = None

    # ------------------------------------------------------------------ targets
    def add_target(self, **options: Any) -> IkTarget:
        """Create an :class:`IkTarget` on this scene's simulation (keyword arguments as for
        ``IkTarget``, ``dt`` defaulting to the control period) and add it.

        Raises:
            ValueError: As ``IkTarget``, or if its site or joints overlap another target's.
        """
        options.setdefault("dt", self.control_period)
        with self.lock:
            target = IkTarget(self.sim, **options)
            self._check_independent(target)
            self.targets.append(target)
        return target

    def _check_independent(self, target: IkTarget) -> None:
        for other in self.targets:
            if other.site == target.site:
                raise InputError(f"site {target.site!r} already has a target")
            shared = sorted(set(other.joint_names) & set(target.joint_names))
            if shared:
                raise InputError(
                    f"the targets on {other.site!r} and {target.site!r} would both drive "
                    f"{shared}; choose each target's joints (joints= / actuators=)"
                )

    def target(self, site: str | None = None) -> IkTarget:
        """The target on ``site`` (default: the first one).

        Raises:
            ValueError: If there is no such target.
        """
        for target in self.targets:
            if site is None or target.site == site:
                return target
        raise InputError(f"no target on site {site!r}; targets: {self.sites}")

    @property
    def sites(self) -> list[str]:
        """Sites of the targets, in order."""
        return [t.site for t in self.targets]

    def default_view(self) -> tuple[np.ndarray, np.ndarray]:
        """``(camera position, look-at point)`` [m] for a viewer: from the direction of the
        simulation's ``overview`` camera (if any) toward the middle between the world origin
        (the robot's base) and the first target, at a distance that frames the arm."""
        sim = self.sim
        camera = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_CAMERA, "overview")
        with self.lock:
            if camera >= 0:
                backward = sim.data.cam_xmat[camera].reshape(3, 3)[:, 2].copy()
            else:
                backward = np.array([0.7, -0.6, 0.4]) / np.linalg.norm([0.7, -0.6, 0.4])
            tool = self.targets[0].target_pose().position if self.targets else np.zeros(3)
        look_at = 0.5 * tool
        distance = max(2.2 * float(np.linalg.norm(tool)), 0.3)
        return look_at + distance * backward, look_at

    # ------------------------------------------------------------------ stepping
    @property
    def time(self) -> float:
        """Simulation time [s]."""
        return self.sim.time

    def step(self, ticks: int = 1) -> None:
        """Run ``ticks`` control ticks (targets, recorder, physics)."""
        if isinstance(ticks, bool) or int(ticks) != ticks or ticks < 0:
            raise InputError(f"ticks must be a non-negative integer, got {ticks!r}")
        sim = self.sim
        with self.lock:
            for _ in range(int(ticks)):
                t = sim.time
                estimated = None
                if any(target.enabled and target.ik_solve_fn is None for target in self.targets):
                    estimated = sim.get_robot_state(site_space=self.sites)
                for target in self.targets:
                    target.step(t, estimated)
                self.recorder.sample(t, self.targets)
                sim.step(self._substeps)

    def run(self, duration: float) -> None:
        """Run for ``duration`` seconds of simulation time (rounded to whole ticks)."""
        duration = real_number(duration, "duration", low=0.0)
        self.step(round(duration / self.control_period))

    def go_home(self, *, duration: float = 1.5) -> None:
        """Animate every target (that has a robot) to its site's pose at the robot's home,
        over ``duration`` seconds; the posture task then brings the arm's redundancy home."""
        with self.lock:
            for target in self.targets:
                home = target.home_pose
                if home is not None:
                    target._move(home[0], home[1], duration)  # pinkctl conventions

    # ------------------------------------------------------------------ real time
    @property
    def running(self) -> bool:
        """Whether the real-time loop runs."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def realtime_factor(self) -> float:
        """Simulated seconds per wall-clock second over the last second of the loop."""
        return self._realtime_factor

    def start(self, *, speed: float = 1.0) -> None:
        """Step in a background thread so that simulation time follows the wall clock.

        Args:
            speed: Simulated seconds per wall-clock second, > 0.
        """
        speed = positive_number(speed, "speed")
        if self.running:
            return
        self.loop_error = None
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._loop, args=(speed,), name="pinkctl-scene", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop the real-time loop (returns when it has stopped)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        self._thread = None

    def _loop(self, speed: float) -> None:
        period = self.control_period
        chunk = max(1, round(0.01 / period))  # release the lock every ~10 ms of simulation
        wall0, sim0 = time.perf_counter(), self.sim.time
        window_wall, window_sim = wall0, sim0
        while not self._stop.is_set():
            now = time.perf_counter()
            behind = sim0 + (now - wall0) * speed - self.sim.time
            ticks = math.floor(behind / period + 1e-9)
            if behind > MAX_CATCH_UP:  # too slow for real time: let the clock slip
                sim0 -= behind - MAX_CATCH_UP
                ticks = math.floor(MAX_CATCH_UP / period)
            if ticks > 0:
                try:
                    self.step(min(ticks, chunk))
                except Exception as exc:  # e.g. a MuJoCo error: stop, and say why
                    self.loop_error = f"{type(exc).__name__}: {exc}"
                    return
            else:
                self._stop.wait(max(period - behind, 0.0005) / speed)
            if now - window_wall >= 1.0:
                self._realtime_factor = (self.sim.time - window_sim) / (now - window_wall)
                window_wall, window_sim = now, self.sim.time

    def __enter__(self) -> InteractiveScene:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def make_scene(
    sim: MujocoSimulation,
    sites: Sequence[str] | None = None,
    *,
    control_period: float | None = None,
    **options: Any,
) -> InteractiveScene:
    """A scene with one target per site (default: the robot's tool frame), each on its
    own kinematic chain; ``options`` go to every target."""
    scene = InteractiveScene(sim, control_period=control_period)
    for site in sites if sites is not None else [None]:
        scene.add_target(site=site, **options)
    return scene
