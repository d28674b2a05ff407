"""MujocoGymEnv: a MuJoCo model in the gymnasium interface (the lerobot seed's base class).

It owns the model, the data and the renderer, and the timing: ``control_dt`` of simulated time
per control step, ``n_substeps = floor(control_dt / physics_dt)`` physics steps of
``physics_dt`` each (a relative tolerance of 1e-9 absorbs binary rounding: 0.3 / 0.1 gives 3).
Robot control and the task loop (``reset``, ``step``) belong to subclasses.

The model comes from an MJCF file (``xml_path``, as in the seed) or, for pinkctl's own
environments, from a :class:`~pinkctl.MujocoSimulation` the subclass builds and hands over
with :meth:`MujocoGymEnv._attach`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np
from gymnasium.utils import seeding

from .._validation import integer
from ..errors import ConfigurationError, InputError
from .arm import substeps
from .rendering import RENDER_MODES, GymRenderingSpec, SceneCamera

__all__ = ["MujocoGymEnv", "check_seed"]


def check_seed(seed: Any) -> int | None:
    """``seed`` as a non-negative int (what ``numpy.random.SeedSequence`` takes), or None."""
    return None if seed is None else integer(seed, "seed", low=0)


def load_mjcf(xml_path: str | Path) -> mujoco.MjSpec:
    """The :class:`mujoco.MjSpec` of an MJCF file.

    Raises:
        ValueError: (:class:`~pinkctl.errors.InputError`) ``xml_path`` is not a path.
        ConfigurationError: The file is missing or MuJoCo cannot read it (the message names
            the file and MuJoCo's reason, with its line where MuJoCo gives one).
    """
    if not isinstance(xml_path, (str, Path)) or not str(xml_path):
        raise InputError(f"xml_path must be a path to an MJCF file, got {xml_path!r}")
    path = Path(xml_path)
    if not path.is_file():
        raise ConfigurationError(f"{path}: no such MJCF file (xml_path)")
    try:
        return mujoco.MjSpec.from_file(str(path))
    except ValueError as exc:
        raise ConfigurationError(f"{path}: MuJoCo cannot read it: {exc}") from exc


class MujocoGymEnv(gym.Env[dict[str, Any], np.ndarray]):
    """A MuJoCo model wrapped in the gymnasium interface.

    Args:
        xml_path: MJCF scene to load; None when a subclass builds the model itself (pinkctl's
            environments compile theirs from the robot's URDF).
        seed: Seed of the environment's generators: ``np_random`` (every draw of pinkctl's
            tasks; ``reset(seed=...)`` re-seeds it) and :attr:`random_state`. A non-negative
            integer, or None for fresh entropy.
        control_dt: Simulated time per control step [s].
        physics_dt: MuJoCo step [s]; ``floor(control_dt / physics_dt)`` substeps per step.
        render_spec: Frame size and camera of :meth:`render`; its ``mode`` is the render mode.

    Raises:
        ValueError: (:class:`~pinkctl.errors.InputError`) a malformed argument, named.
        ConfigurationError: ``xml_path`` is missing or not a valid MJCF file.
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 50}

    def __init__(
        self,
        xml_path: str | Path | None = None,
        seed: int | None = 0,
        control_dt: float = 0.02,
        physics_dt: float = 0.002,
        render_spec: GymRenderingSpec = GymRenderingSpec(),  # noqa: B008 (frozen)
    ) -> None:
        super().__init__()
        seed = check_seed(seed)
        if not isinstance(render_spec, GymRenderingSpec):
            raise InputError(f"render_spec must be a GymRenderingSpec, got {render_spec!r}")
        self._n_substeps = substeps(control_dt, physics_dt)
        self._control_dt = float(control_dt)
        self._physics_dt = float(physics_dt)
        self._render_specs = render_spec
        self.render_mode: str | None = render_spec.mode
        self.metadata = {**self.metadata, "render_fps": int(round(1.0 / self._control_dt))}
        self._np_random, _ = seeding.np_random(seed)
        self._random = np.random.RandomState(seed)
        self._model: mujoco.MjModel | None = None
        self._data: mujoco.MjData | None = None
        self._camera: SceneCamera | None = None
        if xml_path is not None:
            model = load_mjcf(xml_path).compile()
            data = mujoco.MjData(model)
            mujoco.mj_forward(model, data)  # positions at qpos0, ready to render
            self._attach(model, data)

    def _attach(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Adopt ``model`` and ``data``: set the physics step, size the offscreen buffer to
        the frames of ``render_spec`` and prepare the (lazily created) renderer."""
        spec = self._render_specs
        visual = model.vis.global_
        visual.offwidth = max(int(visual.offwidth), spec.width)
        visual.offheight = max(int(visual.offheight), spec.height)
        model.opt.timestep = self._physics_dt
        self._model, self._data = model, data
        self._camera = SceneCamera(model, data, width=spec.width, height=spec.height)

    # ------------------------------------------------------------------ properties
    @property
    def model(self) -> mujoco.MjModel:
        """The compiled MuJoCo model."""
        assert self._model is not None, "no model attached"
        return self._model

    @property
    def data(self) -> mujoco.MjData:
        """The MuJoCo data of :attr:`model`."""
        assert self._data is not None, "no model attached"
        return self._data

    @property
    def control_dt(self) -> float:
        """Simulated time per control step [s]."""
        return self._control_dt

    @property
    def physics_dt(self) -> float:
        """MuJoCo's step [s]."""
        return self._physics_dt

    @property
    def n_substeps(self) -> int:
        """Physics steps per control step: ``floor(control_dt / physics_dt)``."""
        return self._n_substeps

    @property
    def render_spec(self) -> GymRenderingSpec:
        """Frame size and camera of :meth:`render`."""
        return self._render_specs

    @property
    def random_state(self) -> np.random.RandomState:
        """A legacy ``numpy.random.RandomState`` seeded with the constructor's ``seed`` (the
        seed's attribute, for ported code; pinkctl's tasks draw from ``np_random``)."""
        return self._random

    # ------------------------------------------------------------------ rendering
    def _render_camera(self) -> str | int:
        """The camera :meth:`render` draws: ``render_spec.camera_id`` (-1: free camera)."""
        return self._render_specs.camera_id

    def render(self) -> np.ndarray | None:  # type: ignore[override]
        """An RGB frame (height, width, 3) uint8 from :meth:`_render_camera`
        (``"rgb_array"``), or draw the scene in MuJoCo's viewer window and return None
        (``"human"``). The renderer is made on the first frame: an environment that never
        renders never opens an OpenGL context."""
        assert self._camera is not None, "no model attached"
        if self.render_mode == "human":
            self._camera.show()
            return None
        return self._camera.frame(self._render_camera())

    def close(self) -> None:
        """Release the renderer and the viewer (both are re-created on demand)."""
        if self._camera is not None:
            self._camera.close()
