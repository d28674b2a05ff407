"""SO101GymEnv: the lerobot seed's SO-101 base environment, driven by pinkctl's IK.

Robot control only, as in the seed: the task subclasses
(:class:`~pinkctl.envs.pick_cube.SO101PickCubeGymEnv`,
:class:`~pinkctl.envs.pick_place.SO101PickPlaceGymEnv`) add ``reset`` and ``step``. The
native action is ``[dx, dy, dz, grasp]``:

* ``dx, dy, dz`` move a target of the action point by ``action_scale`` metres per unit, then
  the target is clipped to ``cartesian_bounds``; pinkctl's IK (one QP per control step, see
  :mod:`pinkctl.envs.arm`) turns it into the arm's servo targets. The action point is the
  tool frame ``gripper_frame_link`` (the seed's ``gripperframe``), or with ``top_down_ik`` the
  grasp point between the jaws with the jaws kept vertical.
* ``grasp`` is an absolute opening in [0, 1] (0 closed, 1 open), not scaled. With
  ``grasp_mode="direct"`` (the seed's) it is written to the jaw servo's ``ctrl`` once per
  step, ``normalized_to_ctrl(grasp, ctrlrange)``; with ``"rate_limited"`` (pinkctl's richer
  servo) the servo target moves toward it at 3 rad/s over the jaw's range narrowed by the
  joint-limit margin.

:meth:`SO101GymEnv.get_robot_state` is the seed's 14-value robot state: arm joint positions
(5) [rad], arm joint velocities (5) [rad/s], the gripper command in [-1, 1]
(:meth:`~SO101GymEnv.get_gripper_pose`), the tool frame's position (3) [m].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import pinocchio as pin
from gymnasium import spaces
from numpy.typing import ArrayLike

from pinkctl import MujocoSimulation, PinkRobot, load_pink_supported_robot

from .._validation import boolean, choice, real_array
from ..errors import ConfigurationError, InputError
from .base import CartesianIKEnv, unbounded
from .mujoco_env import load_mjcf
from .rendering import GymRenderingSpec
from .scene import build_simulation
from .seed_arm import IK_METHODS
from .so101_scene import (
    ARM_JOINTS,
    GRASP_POINT,
    GRIPPER_JOINT,
    GRIPPER_SPEED,
    SO101PickScene,
    missing_names,
    set_jaw_pads,
)

__all__ = [
    "ARM_JOINTS",
    "CARTESIAN_BOUNDS",
    "GRASP_MODES",
    "HOME_POSITION",
    "IK_CHOICES",
    "OBSERVATION_LAYOUTS",
    "SO101GymEnv",
    "TOP_DOWN_BOUNDS",
]

#: Arm joint positions of ``reset_robot`` [rad], in :data:`ARM_JOINTS` order: the SO-101's
#: home (robot.toml), gripper pointing down-forward.
HOME_POSITION = np.array([0.0, -0.6, 0.6, 1.2, 0.0])
# (2, 3) boxes the action point's target is clipped to [m], base frame. Their floors keep the
# jaws off the table (the tool frame is 7 mm, the grasp point 16 mm above the lowest point of
# the jaws); with the jaws kept vertical the SO-101 reaches no higher than about 9 cm.
CARTESIAN_BOUNDS = np.array([[0.08, -0.22, 0.008], [0.36, 0.22, 0.20]])
TOP_DOWN_BOUNDS = np.array([[0.12, -0.15, 0.016], [0.30, 0.15, 0.09]])
#: The margin [m] the arm's controller keeps from the scene's table and floor and from itself:
#: the jaws close on a block resting on the table, within 1 mm of its top (the bounds above).
COLLISION_MARGIN = 0.001
#: ``observation_layout``: the seed's (``agent_pos`` = the 14-value robot state) or pinkctl's
#: (joints and measured opening, ``tcp_pose``, ``tcp_vel``).
OBSERVATION_LAYOUTS = ("seed", "pinkctl")
#: ``grasp_mode``: the seed's direct servo command or pinkctl's rate-limited one.
GRASP_MODES = ("direct", "rate_limited")
#: ``ik_method``: pinkctl's QP step, or the seed's ``solve_ik`` on the MuJoCo model.
IK_CHOICES = ("pinkctl", *IK_METHODS)
KINEMATICS_TOLERANCE = 1e-4  # [m] tool site of an MJCF scene against pinkctl's SO-101
BASE_ONLY = (
    "SO101GymEnv is a base class (robot control, no task): instantiate a task such as "
    "SO101PickCubeGymEnv, or drive it with reset_robot() and apply_action()"
)


class SO101GymEnv(CartesianIKEnv):
    """SO-101 pick/place base environment: Cartesian position actions through pinkctl's IK.

    The seed's arguments keep their names, order, defaults and meaning; pinkctl's own are
    keyword-only after them.

    Args:
        xml_path: MJCF scene to load; None: pinkctl's SO-101 pick scene (see
            :func:`~pinkctl.envs.so101_scene.write_pick_scene` to start a scene of one's own:
            it must keep :data:`~pinkctl.envs.so101_scene.REQUIRED_NAMES` and pinkctl's SO-101
            kinematics, which are checked).
        seed: Seed of the environment's generators.
        control_dt: Simulated time per control step [s].
        physics_dt: MuJoCo step [s].
        render_spec: Frame size and camera of ``render()``.
        render_mode: ``"rgb_array"`` or ``"human"``; None: ``render_spec.mode``.
        image_obs: Whether the task observes ``pixels.front``.
        home_position: (5,) arm joint positions applied by :meth:`reset_robot` [rad], within
            the joints' ranges.
        cartesian_bounds: (2, 3) box [m] the target is clipped to every step (base frame);
            None: :data:`CARTESIAN_BOUNDS`, or :data:`TOP_DOWN_BOUNDS` with ``top_down_ik``.
        action_scale: Metres per unit of position action, > 0.
        top_down_ik: Move the grasp point between the jaws with the jaws pointing straight
            down, instead of the tool frame by position only.
        jaw_pads: Make the fingertip pads collide (flat faces instead of the jaws' round
            primitives).
        observation_layout: ``"seed"`` or ``"pinkctl"`` (:data:`OBSERVATION_LAYOUTS`).
        grasp_mode: ``"direct"`` or ``"rate_limited"`` (:data:`GRASP_MODES`).
        ik_method: ``"pinkctl"`` (one QP step of pinkctl's IK, servo targets ramped with
            velocity feed-forward) or the seed's ``"levenberg_marquardt"`` /
            ``"pseudoinverse"`` (:func:`pinkctl.mujoco_ik.solve_ik` on the MuJoCo model, its
            result held as the servo targets; :mod:`pinkctl.envs.seed_arm`).
        frame: ``"world"`` or ``"base"``: axes of the observation and the action deltas.
        base_position: Where the robot's base stands in the world [m].
        base_yaw: The base's rotation about the world's vertical [rad].

    Raises:
        ValueError: (:class:`~pinkctl.errors.InputError`) a malformed argument, named.
        ConfigurationError: ``xml_path`` unreadable, lacking a required name, or holding
            another arm than pinkctl's SO-101.
    """

    def __init__(
        self,
        xml_path: str | Path | None = None,
        seed: int | None = 0,
        control_dt: float = 0.02,
        physics_dt: float = 0.002,
        render_spec: GymRenderingSpec = GymRenderingSpec(),  # noqa: B008 (frozen)
        render_mode: str | None = "rgb_array",
        image_obs: bool = False,
        home_position: ArrayLike = HOME_POSITION,
        cartesian_bounds: ArrayLike | None = None,
        action_scale: float = 1.0,
        top_down_ik: bool = False,
        jaw_pads: bool = False,
        *,
        observation_layout: str = "seed",
        grasp_mode: str = "direct",
        ik_method: str = "pinkctl",
        frame: str = "world",
        base_position: ArrayLike = (0.0, 0.0, 0.0),
        base_yaw: float = 0.0,
    ) -> None:
        super().__init__(
            seed=seed,
            control_dt=control_dt,
            physics_dt=physics_dt,
            render_spec=render_spec,
            render_mode=render_mode,
            image_obs=image_obs,
            reward_type="sparse",
            frame=frame,
            base_position=base_position,
            base_yaw=base_yaw,
        )
        self.top_down_ik = boolean(top_down_ik, "top_down_ik")
        self.jaw_pads = boolean(jaw_pads, "jaw_pads")
        self.observation_layout = choice(
            observation_layout, "observation_layout", OBSERVATION_LAYOUTS
        )
        self.grasp_mode = choice(grasp_mode, "grasp_mode", GRASP_MODES)
        self.ik_method = choice(ik_method, "ik_method", IK_CHOICES)
        robot = load_pink_supported_robot("so101")
        self.home_position = _checked_home(home_position, robot)
        self.scene = SO101PickScene(robot)
        sim = self._simulation(xml_path, robot)
        if cartesian_bounds is None:
            cartesian_bounds = TOP_DOWN_BOUNDS if top_down_ik else CARTESIAN_BOUNDS
        model = sim.model
        gripper = model.actuator(GRIPPER_JOINT).id
        direct = self.grasp_mode == "direct"
        self._gripper_ctrlrange = _gripper_ctrlrange(model, gripper)
        self._setup(
            robot,
            sim,
            point=GRASP_POINT if top_down_ik else self.scene.tool_frame,
            orientation="down" if top_down_ik else "free",
            action_scale=action_scale,
            cartesian_bounds=cartesian_bounds,
            gripper=True,
            environment_dim=3,
            gripper_range=self._gripper_ctrlrange if direct else None,
            gripper_speed=None if direct else GRIPPER_SPEED,
            ik_method=self.ik_method,
            world=self.scene.world,
            collision_margin=COLLISION_MARGIN,
        )
        self._gripper_actuator = int(gripper)
        self._tool_site = int(model.site(self.scene.tool_frame).id)
        self._robot_ready = False
        if self.observation_layout == "seed" or not self._task_defined():
            self.observation_space = spaces.Dict(self._seed_base_space())

    def _pinkctl_space(self) -> dict[str, spaces.Space[Any]]:
        """pinkctl's observation space as the base built it, without ``environment_state``."""
        assert isinstance(self.observation_space, spaces.Dict)
        return {k: v for k, v in self.observation_space.spaces.items() if k != "environment_state"}

    # ------------------------------------------------------------------ construction
    def _simulation(self, xml_path: str | Path | None, robot: PinkRobot) -> MujocoSimulation:
        """pinkctl's scene (pads set by ``jaw_pads``), or the one of ``xml_path``."""
        if xml_path is not None:
            return self._load_scene(xml_path, robot)

        def build(spec: mujoco.MjSpec) -> None:
            self.scene.callback()(spec)
            set_jaw_pads(spec, self.jaw_pads)

        return build_simulation(robot, build, physics_dt=self.physics_dt, placement=self.placement)

    def _load_scene(self, xml_path: str | Path, robot: PinkRobot) -> MujocoSimulation:
        """The simulation of an MJCF scene holding pinkctl's SO-101 (names and kinematics
        checked), its pads set by ``jaw_pads``, moved to the placement."""
        spec = load_mjcf(xml_path)
        missing = missing_names(spec)
        if missing:
            raise ConfigurationError(f"{xml_path}: the SO-101 scene lacks {missing}")
        set_jaw_pads(spec, self.jaw_pads)
        self.placement.wrap(spec)
        model = spec.compile()
        sim = MujocoSimulation(
            model,
            mujoco.MjData(model),
            robot=robot,
            actuated_joint_names=[*ARM_JOINTS, GRIPPER_JOINT],
            site_names=[self.scene.tool_frame],
        )
        sim.spec = spec
        sim.reset()
        tool = sim.get_site_pose(self.scene.tool_frame)[0]
        data = robot.model.createData()
        pin.framesForwardKinematics(robot.model, data, robot.q0)
        expected = data.oMf[robot.model.getFrameId(self.scene.tool_frame)].translation
        error = float(np.linalg.norm(self.placement.to_base(tool) - expected))
        if error > KINEMATICS_TOLERANCE:
            raise ConfigurationError(
                f"{xml_path}: its tool site {self.scene.tool_frame!r} is {error * 1e3:.2f} mm "
                "from where pinkctl's SO-101 puts it at home: the scene must hold pinkctl's "
                "SO-101 at the world origin (write_pick_scene writes one)"
            )
        return sim

    def _seed_base_space(self) -> dict[str, spaces.Space[Any]]:
        """The seed's observation space of the base class (its tasks replace it)."""
        agent: dict[str, spaces.Space[Any]] = {"tcp_pose": unbounded(7), "tcp_vel": unbounded(6)}
        agent["gripper_pose"] = spaces.Box(-1, 1, shape=(1,), dtype=np.float32)
        space: dict[str, spaces.Space[Any]] = {"agent_pos": spaces.Dict(agent)}
        if self.image_obs:
            space["pixels"] = self._pixels_space()
        return space

    # ------------------------------------------------------------------ the seed's API
    def reset_robot(self) -> None:
        """Arm at ``home_position`` (velocities zero, servos commanded there), kinematics
        refreshed, and the IK re-synchronised: its target is where the action point now is
        (otherwise it would still hold the target from before), the controller restarts at
        the measured joints. The gripper and the scene are left as they are."""
        self._home_robot()
        self.arm.reset()
        self._robot_ready = True

    def _home_robot(self) -> None:
        self.arm.hold_at(self.home_position)

    def apply_action(self, action: ArrayLike) -> None:
        """One control step of ``[dx, dy, dz, grasp]`` (see the module docstring): the
        target moves (a near-zero delta holds where the point is), the grasp is commanded,
        one IK solve, ``n_substeps`` physics steps.

        Raises:
            gymnasium.error.ResetNeeded: Before :meth:`reset_robot` or a task's ``reset``.
            ValueError: (:class:`~pinkctl.errors.InputError`) an action that is not a (4,)
                array of finite real numbers (nothing moves); finite values outside the
                action space are clipped into it.
        """
        if not self._robot_ready:
            self._require_reset("apply_action")
        self._apply(action)

    def get_gripper_pose(self) -> np.ndarray:
        """The gripper servo's command normalised to [-1, 1] (-1 closed, +1 open), (1,)
        float32: ``2 (ctrl - low) / (high - low) - 1`` over the servo's ``ctrlrange``."""
        low, high = self._gripper_ctrlrange
        ctrl = float(self.sim.data.ctrl[self._gripper_actuator])
        return np.array([2.0 * (ctrl - low) / (high - low) - 1.0], dtype=np.float32)

    def get_robot_state(self) -> np.ndarray:
        """The robot state (14,) float32: arm joint positions [rad] (5), arm joint velocities
        [rad/s] (5), :meth:`get_gripper_pose` (1), the tool frame's position [m] (3) in
        ``frame`` (the tool frame even when ``top_down_ik`` moves the grasp point)."""
        placement = self.placement
        tool = placement.to_base(self.sim.data.site_xpos[self._tool_site])
        return np.concatenate(
            [
                self.arm.joint_positions(),
                self.arm.joint_velocities(),
                self.get_gripper_pose(),
                placement.observed_point(tool),
            ]
        ).astype(np.float32)

    def _render_camera(self) -> str | int:
        """``"front"`` (the seed's), unless ``render_spec`` names another camera."""
        camera = self.render_spec.camera_id
        return "front" if camera == -1 else camera

    # ------------------------------------------------------------------ task hooks
    def _task_defined(self) -> bool:
        """Whether this class implements pinkctl's task hooks; a task written the seed's way
        overrides ``reset()`` and ``step()`` instead and calls ``super().reset(seed=seed)``
        for the seeding (its observation then is the seed's base one, ignored)."""
        return type(self)._reset_task is not SO101GymEnv._reset_task

    def _reset_task(self) -> None:
        if type(self) is SO101GymEnv:
            raise NotImplementedError(BASE_ONLY)

    def _environment_points(self) -> np.ndarray:
        raise NotImplementedError(BASE_ONLY)

    def _evaluate(self) -> tuple[float, bool, bool]:
        raise NotImplementedError(BASE_ONLY)

    def _observation(self) -> dict[str, Any]:
        if not self._task_defined():  # the seed's base observation (_seed_base_space)
            agent = {**self._tcp(), "gripper_pose": self.get_gripper_pose()}
            if self.image_obs:
                return {"agent_pos": agent, "pixels": {"front": self._front_frame()}}
            return {"agent_pos": agent}
        if self.observation_layout == "pinkctl":
            return super()._observation()
        if self.image_obs:
            return {"pixels": {"front": self._front_frame()}, "agent_pos": self.get_robot_state()}
        return {
            "agent_pos": self.get_robot_state(),
            "environment_state": self._environment_state().astype(np.float32),
        }

    def _task_space(self, environment_dim: int) -> None:
        """A task's observation space, ``environment_state`` of ``environment_dim``."""
        state = unbounded(environment_dim)
        if self.observation_layout == "pinkctl":
            if not self.image_obs:
                self.observation_space = spaces.Dict(
                    {**self._pinkctl_space(), "environment_state": state}
                )
            return
        agent = unbounded(14)
        if self.image_obs:
            self.observation_space = spaces.Dict(
                {"pixels": self._pixels_space(), "agent_pos": agent}
            )
        else:
            self.observation_space = spaces.Dict({"agent_pos": agent, "environment_state": state})


def _gripper_ctrlrange(model: mujoco.MjModel, gripper: int) -> tuple[float, float]:
    """The gripper servo's control range (an MJCF of one's own without one: the joint's)."""
    ctrlrange = model.actuator_ctrlrange[gripper]
    if not model.actuator_ctrllimited[gripper]:
        ctrlrange = model.joint(GRIPPER_JOINT).range
    return float(ctrlrange[0]), float(ctrlrange[1])


def _checked_home(home_position: ArrayLike, robot: PinkRobot) -> np.ndarray:
    """``home_position`` as 5 arm joint positions inside the joints' ranges [rad]."""
    home = real_array(home_position, "home_position [rad]", (len(ARM_JOINTS),))
    model = robot.model
    for name, value in zip(ARM_JOINTS, home, strict=True):
        index = model.joints[model.getJointId(name)].idx_q
        low, high = model.lowerPositionLimit[index], model.upperPositionLimit[index]
        if not low <= value <= high:
            raise InputError(
                f"home_position: {name} = {value:g} rad is outside its range "
                f"[{low:g}, {high:g}] rad"
            )
    return home
