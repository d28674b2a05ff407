"""MuJoCo simulation of a robot compiled from its own URDF.

The model is built with :class:`mujoco.MjSpec` from the very URDF Pinocchio loads, so both engines
share one kinematic description: static bodies are kept (``fusestatic`` off) so every tool frame
of the URDF survives as a MuJoCo body, and each tool frame also gets a site of the same name.
Controlled and gripper joints get position servos

.. math::

    \\tau = k_p (u - q) - k_v \\dot{q},

with the gains of ``robot.toml``. Bodies carry gravity compensation (``gravcomp = 1``) as real
arms compensate gravity in firmware (a standing humanoid: :mod:`pinkctl.sim.stance`); a command
with velocities gets velocity feed-forward (:mod:`pinkctl.sim.servos`).

Poses are world-frame; quaternions are (w, x, y, z), MuJoCo's own convention. Whole
configurations cross between the engines only through :func:`~pinkctl.to_mujoco_qpos` and
:func:`~pinkctl.from_mujoco_qpos`, which reorder quaternions. A ball joint is three named
coordinates, its rotation vector (:mod:`pinkctl.sim.coordinates`). A
:class:`~pinkctl.world.World`'s obstacles: :mod:`pinkctl.sim.world_geoms`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import mujoco
import numpy as np
from numpy.typing import ArrayLike

from .._gl import open_renderer
from .._validation import callable_or_none, real_number
from ..core.ball_joints import expand_ball_joints
from ..core.poses import checked_pose
from ..core.state import JointSpace, RobotState
from ..errors import InputError
from .coordinates import ConfigurationMap, JointCoordinates
from .scene import TARGET_BODY, as_name_list, build_spec
from .sensing import root_state, site_pose, site_state
from .servos import PositionServos
from .stance import StanceCompensation
from .world_geoms import FollowsWorld

if TYPE_CHECKING:
    from ..core.robot import PinkRobot
    from ..world import World

__all__ = ["MujocoSimulation"]


class MujocoSimulation(FollowsWorld):
    """A MuJoCo model of a :class:`~pinkctl.core.robot.PinkRobot`, with servos, floor, light
    and camera.

    Build it with :meth:`from_robot`. Joints are addressed by name; ``joint_names`` lists every
    scalar (hinge or slide) joint of the robot in model order, mimic followers included, and
    each ball joint as its three coordinates (``<joint>:x``, ``:y``, ``:z``), which is the
    robot's joint space as a simulator reports it. ``servo_actuators`` names the actuator
    that is each actuated joint's servo (an MJCF's own position actuators are used as they
    are: :mod:`pinkctl.sim.servos`).
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        data: mujoco.MjData,
        *,
        robot: PinkRobot | None = None,
        actuated_joint_names: Sequence[str] = (),
        site_names: Sequence[str] = (),
    ) -> None:
        self.model = model
        self.data = data
        self.robot = robot
        #: The MjSpec the model was compiled from (None when built from a model directly).
        self.spec: mujoco.MjSpec | None = None
        self._stance: StanceCompensation | None = None
        self._coordinates = JointCoordinates(model)
        self.joint_names: list[str] = list(self._coordinates.names)
        pin_model = None if robot is None else robot.model
        actuated = list(actuated_joint_names)
        held = [] if robot is None else [n for n in robot.joint_names if n not in actuated]
        self.actuated_joint_names = (
            actuated if pin_model is None else expand_ball_joints(pin_model, actuated)
        )
        self._servos = PositionServos(model, self.actuated_joint_names, self._coordinates, held)
        self._actuator_of = self._servos.actuator_of
        #: The actuator that is each actuated joint's servo (joint name -> actuator name).
        self.servo_actuators = {n: model.actuator(a).name for n, a in self._actuator_of.items()}
        self._configurations = None if robot is None else ConfigurationMap(robot, model)
        self.site_names = list(site_names)
        self._joint_spaces: dict[tuple[str, ...], JointSpace] = {}
        self._site_ids = {
            n: int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, n)) for n in self.site_names
        }
        target_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, TARGET_BODY)
        self._mocap_id = int(model.body_mocapid[target_id]) if target_id >= 0 else -1
        self._renderers: dict[tuple[int, int], mujoco.Renderer] = {}

    @classmethod
    def from_robot(
        cls,
        robot: PinkRobot,
        *,
        timestep: float = 0.002,
        gravity_compensation: bool = True,
        floor: bool = True,
        target_marker: bool = True,
        site_frames: Sequence[str] | None = None,
        actuated_joint_names: Sequence[str] | None = None,
        kp: float | None = None,
        kv: float | None = None,
        spec_callback: Callable[[mujoco.MjSpec], None] | None = None,
        world: World | None = None,
    ) -> MujocoSimulation:
        """Compile the robot's description with MjSpec into a simulation (see
        :mod:`pinkctl.sim.scene` for what is added to it).

        Args:
            robot: The robot, e.g. from :func:`~pinkctl.core.robot.load_pink_supported_robot`.
            timestep: Physics step [s], in [1e-6, 0.1].
            gravity_compensation: ``gravcomp = 1`` on bodies (standing: :mod:`pinkctl.sim.stance`).
            floor: Add a ground plane (at ``robot.floor``, or just below the robot at home).
            target_marker: Add a mocap body (visual only) to show a target pose.
            site_frames: Frames that get a site of the same name; default: the robot's tool
                frames.
            actuated_joint_names: Joints with position servos; default: controlled + gripper joints.
            kp: Servo stiffness for every actuator, overriding ``robot.toml`` [N m/rad], > 0.
            kv: Servo damping for every actuator, overriding ``robot.toml`` [N m s/rad], >= 0.
            spec_callback: Called as ``spec_callback(spec)`` with the finished
                :class:`mujoco.MjSpec` just before it is compiled, to add scene objects (a
                free cube, a table) or change options. Joints it adds that are hinges or slides
                appear in ``joint_names``; they get no actuator.
            world: Obstacles added as geoms (moving ones as mocap bodies) and followed at
                every step and reset (:mod:`pinkctl.sim.world_geoms`), before ``spec_callback``.

        Raises:
            ValueError: On a timestep or gain out of range, unknown frames or joints, or a robot
                without a description.
        """
        timestep = real_number(timestep, "timestep", low=1e-6, high=0.1)
        if kp is not None:
            kp = real_number(kp, "kp", low=0.0, low_open=True)
        if kv is not None:
            kv = real_number(kv, "kv", low=0.0)
        callable_or_none(spec_callback, "spec_callback")
        default_sites = list(robot.tool_frames) or ([robot.tool_frame] if robot.tool_frame else [])
        sites = as_name_list(site_frames, default_sites, "site_frames")
        actuated = as_name_list(actuated_joint_names, robot.actuated_joint_names, "joints")
        spec = build_spec(
            robot,
            timestep=timestep,
            gravity_compensation=gravity_compensation,
            floor=floor,
            target_marker=target_marker,
            sites=sites,
            actuated=actuated,
            kp=kp,
            kv=kv,
            spec_callback=spec_callback,
            world=world,
        )
        model = spec.compile()
        data = mujoco.MjData(model)
        sim = cls(model, data, robot=robot, actuated_joint_names=actuated, site_names=sites)
        sim.spec = spec
        if gravity_compensation and floor and robot.floating_base:
            sim._stance = StanceCompensation(model, "floor")
        sim._follow_world(world)
        sim.reset()
        return sim

    @property
    def timestep(self) -> float:
        """Physics step [s]."""
        return float(self.model.opt.timestep)

    @property
    def time(self) -> float:
        """Simulated time [s]."""
        return float(self.data.time)

    def step(self, n: int = 1) -> None:
        """Advance the physics by ``n`` steps."""
        if int(n) != n or n < 0:
            raise InputError(f"n must be a non-negative integer, got {n!r}")
        self._sync_world()
        if self._stance is not None:  # a standing robot: its joint torques at every step
            self._stance.step(self.data, int(n))
        elif n > 0:
            mujoco.mj_step(self.model, self.data, nstep=int(n))

    def forward(self) -> None:
        """Recompute positions of bodies and sites without advancing time."""
        mujoco.mj_forward(self.model, self.data)

    def reset(self, q: dict[str, float] | None = None) -> None:
        """Reset time, velocities and positions; hold servos at the reset positions.

        Args:
            q: Joint positions by name; default: the robot's home (``q0``, through
                :func:`~pinkctl.to_mujoco_qpos`). Joints not named keep their home value.
                Mimic followers follow their master.

        Raises:
            ValueError: Unknown joint names or non-finite values (nothing is changed).
        """
        requested: dict[str, float] = {}
        if q is not None:
            if not isinstance(q, dict):
                raise InputError(f"q must be a dict of joint positions by name, got {q!r}")
            self._coordinates.check(list(q))
            requested = {k: real_number(v, f"q[{k!r}]") for k, v in q.items()}
        mujoco.mj_resetData(self.model, self.data)
        if self._configurations is not None:
            self.data.qpos[:] = self._configurations.home_qpos()
        self._coordinates.add_mimic_followers(self.model, requested)
        self._coordinates.write_positions(self.data, list(requested), list(requested.values()))
        self._servos.hold(self.data)
        self._sync_world(force=True)
        mujoco.mj_forward(self.model, self.data)

    def get_configuration(self) -> np.ndarray:
        """The robot's Pinocchio configuration ``q`` (quaternions (x, y, z, w)) of the
        simulated state, by :func:`~pinkctl.from_mujoco_qpos` (joints MuJoCo lacks: home).
        InputError without a robot."""
        return ConfigurationMap.of(self).q(self.data.qpos)

    def set_configuration(self, q: ArrayLike) -> None:
        """Teleport the robot to the Pinocchio configuration ``q`` (quaternions (x, y, z, w))
        by :func:`~pinkctl.to_mujoco_qpos` (no dynamics; the scene's other joints kept) and
        refresh kinematics. InputError without a robot or for a malformed ``q``."""
        self.data.qpos[:] = ConfigurationMap.of(self).qpos(q, self.data.qpos)
        mujoco.mj_forward(self.model, self.data)

    def get_joint_positions(self, names: Sequence[str] | None = None) -> np.ndarray:
        """Joint positions [rad] or [m], in the order of ``names`` (default: ``joint_names``;
        a ball joint's coordinates: its rotation vector [rad])."""
        names = self.joint_names if names is None else list(names)
        self._coordinates.check(names)
        return self._coordinates.positions(self.data, names)

    def get_joint_velocities(self, names: Sequence[str] | None = None) -> np.ndarray:
        """Joint velocities [rad/s] or [m/s], in the order of ``names``."""
        names = self.joint_names if names is None else list(names)
        self._coordinates.check(names)
        return self._coordinates.velocities(self.data, names)

    def _checked_values(self, names: Sequence[str], values: ArrayLike) -> np.ndarray:
        """``values`` as one finite number per joint of ``names`` (known joints)."""
        self._coordinates.check(names)
        values_arr = np.asarray(values, dtype=float).reshape(-1)
        if values_arr.shape != (len(names),) or not np.all(np.isfinite(values_arr)):
            raise InputError(f"values must be {len(names)} finite numbers, got {values!r}")
        return values_arr

    def set_joint_positions(self, names: Sequence[str], values: ArrayLike) -> None:
        """Teleport joints (no dynamics) and refresh kinematics."""
        names = list(names)
        self._coordinates.write_positions(self.data, names, self._checked_values(names, values))
        mujoco.mj_forward(self.model, self.data)

    def set_joint_velocities(self, names: Sequence[str], values: ArrayLike) -> None:
        """Set joint velocities (a ball joint's coordinates: its angular velocity)."""
        names = list(names)
        for n, v in zip(names, self._checked_values(names, values)):
            self.data.qvel[self._coordinates.dof_address[n]] = v

    def set_position_targets(
        self,
        names: Sequence[str],
        positions: ArrayLike,
        velocities: ArrayLike | None = None,
    ) -> None:
        """Command position servos; with ``velocities``, add velocity feed-forward.

        The servo law is :math:`k_p (u - q) - k_v \\dot q` (and the joint's damping
        :math:`d`); commanding :math:`u = q_{des} + ((k_v + d)/k_p) \\dot q_{des}` gives
        :math:`k_p (q_{des} - q) + (k_v + d) (\\dot q_{des} - \\dot q)`.

        Raises:
            ValueError: Positions or velocities that are not one finite number per name, or a
                joint without an actuator (nothing is written).
        """
        self._servos.command(self.data, names, positions, velocities)

    def actuator_ids(self, names: Sequence[str]) -> list[int]:
        """MuJoCo actuator id of each actuated joint of ``names``.

        Raises:
            ValueError: A joint without an actuator.
        """
        unknown = [n for n in names if n not in self._actuator_of]
        if unknown:
            raise InputError(
                f"joints {unknown} have no actuator; actuated: {self.actuated_joint_names}"
            )
        return [self._actuator_of[n] for n in names]

    def joint_position_limits(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` position limits [rad] or [m] of ``names`` in the model (-inf and
        inf for a joint without limits, and for a ball joint's coordinates: its range is an
        angle, :class:`~pinkctl.qp.BallRangeLimit`)."""
        self._coordinates.check(names)
        return self._coordinates.limits(self.model, names)

    def get_site_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """World pose of a site: (position [m] (3,), quaternion (w, x, y, z) (4,))."""
        return site_pose(self.data, self._site_ids, name)

    def get_body_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """World pose of a body: (position [m], quaternion (w, x, y, z))."""
        body = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, name)
        if body < 0:
            raise InputError(f"unknown body {name!r}")
        return self.data.xpos[body].copy(), self.data.xquat[body].copy()

    def get_robot_state(
        self,
        joint_space: Sequence[str] | None = None,
        site_space: Sequence[str] | None = None,
    ) -> RobotState:
        """Measured state: joints, sites (poses, velocities), a floating base's root state.

        Args:
            joint_space: Ordered joint space of the returned ``JointState``; default
                ``joint_names``.
            site_space: Ordered site space; default ``site_names``.
        """
        joints = self.joint_names if joint_space is None else list(joint_space)
        qpos, qvel = self.get_joint_positions(joints), self.get_joint_velocities(joints)
        space = self._joint_spaces.get(tuple(joints))  # names checked once, not every tick
        space = space or self._joint_spaces.setdefault(tuple(joints), JointSpace(joints))
        joint_state = space.state(qpos, qvel)
        sites = self.site_names if site_space is None else list(site_space)
        sites_state = site_state(self.model, self.data, self._site_ids, sites) if sites else None
        root = root_state(self.model, self.data)  # a floating base's, else None
        return RobotState(joints=joint_state, root=root, sites=sites_state)

    def apply(self, desired: RobotState | None) -> bool:
        """Apply a controller's output: joint positions (+ velocity feed-forward) to servos.

        A ``None`` command (no valid output this step) leaves the servos as they are, so the
        previous command stays in force. Joints that carry a position but no actuator are
        rejected with ``ValueError``; site, link and root fields are ignored.

        Returns:
            True if a command was written.
        """
        if desired is None or desired.joints is None:
            return False
        js = desired.joints
        names = js.position_names
        if not names:
            return False
        positions = js.positions
        assert positions is not None  # names is not empty
        same = js.velocities is not None and js.velocity_names == names
        self.set_position_targets(names, positions, js.velocities if same else None)
        return True

    @property
    def has_target_marker(self) -> bool:
        """Whether the model has the target marker (see :meth:`set_target_marker`)."""
        return self._mocap_id >= 0

    def set_target_marker(self, position: ArrayLike, quaternion: ArrayLike) -> None:
        """Move the (visual only) target marker to a world pose (quaternion w, x, y, z)."""
        if self._mocap_id < 0:
            raise InputError("this simulation was built without a target marker")
        position_checked, quaternion_checked = checked_pose(position, quaternion)
        self.data.mocap_pos[self._mocap_id] = position_checked
        self.data.mocap_quat[self._mocap_id] = quaternion_checked

    def render(
        self, width: int = 640, height: int = 480, camera: str | int = "overview"
    ) -> np.ndarray:
        """Offscreen RGB image (height, width, 3) uint8.

        Headless machines need no setting: pinkctl selects EGL or OSMesa (:mod:`pinkctl._gl`).

        Raises:
            InputError: MuJoCo cannot render here (one line: why, and what to install or set).
        """
        key = (int(width), int(height))
        renderer = self._renderers.get(key)
        if renderer is None:
            renderer = open_renderer(self.model, key[0], key[1])
            self._renderers[key] = renderer
        renderer.update_scene(self.data, camera=camera)
        return renderer.render().copy()

    def close(self) -> None:
        """Release offscreen renderers."""
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()
