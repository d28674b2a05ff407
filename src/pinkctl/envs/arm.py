"""CartesianArm: Cartesian position actions turned into servo targets by pinkctl's IK.

One control step of an environment is one :class:`~pinkctl.PinkIKController` tick and many
physics steps:

1. The action's position part moves a *target* for the action point (a frame of the robot,
   e.g. the tool frame or a grasp point between the jaws): ``target += action_scale * delta``,
   then the target is clipped to the Cartesian bounds (base frame, metres). A zero delta
   holds: on the step where the deltas become zero the target is set to where the point
   *is*, so an overshooting accumulated target is not chased.
2. The controller, integrating its own command (``integrate_from="command"``, dead-beat gain
   with a small Levenberg-Marquardt damping, the configuration and velocity limits of the
   robot), solves one QP for the new joint command of the arm at ``dt = control_dt``.
3. During the ``n_substeps`` physics steps the position servos follow a straight line from
   the previous command to the new one, with velocity feed-forward
   (``ctrl = q_ramp + kv/kp * (q_new - q_prev) / control_dt``): the servo law runs at the
   physics rate, the joints are never written directly.

Orientation of the action point (``orientation``):

* ``"free"``: position only (the orientation follows from the posture task and the motion);
* ``"down"``: the point's z axis is kept pointing straight down (world -z), the rotation
  about it is left free; the target orientation is the smallest rotation of the current
  command's orientation that points z down (top-down grasping with a 5-DoF arm);
* ``"hold"``: the orientation at :meth:`CartesianArm.reset` is held.

Everything the arm takes and reports is in the robot's **base frame** (the frame of the
Pinocchio model; the world frame unless the scene was moved by a
:class:`~pinkctl.envs.placement.Placement`, which places the base by a yaw and a translation,
so "down" is the same in both).
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from pinkctl import MujocoSimulation, PinkIKController, PinkRobot, RobotState, SpatialState

from .._validation import choice, positive_number, real_array, real_number
from ..controllers._arguments import DT_RANGE
from ..core.poses import matrix_to_quaternion
from ..errors import InputError
from ..world import World
from .gripper import ctrl_to_normalized, gripper_servo, normalized_to_ctrl
from .placement import Placement

__all__ = ["CONTROL_DT_RANGE", "PHYSICS_DT_RANGE", "CartesianArm", "substeps"]

#: Allowed ``control_dt`` [s]: the IK controller's ``dt`` (one solve per control step).
CONTROL_DT_RANGE = DT_RANGE
#: Allowed ``physics_dt`` [s]: MuJoCo's step as :class:`~pinkctl.MujocoSimulation` takes it.
PHYSICS_DT_RANGE = (1e-6, 0.1)
ORIENTATIONS = ("free", "down", "hold")
ZERO_ACTION_TOLERANCE = 1e-6  # norm of the raw (unscaled) position delta below which it holds
DOWN = np.array([0.0, 0.0, -1.0])
# Levenberg-Marquardt damping of the frame task: a full (dead-beat) step at 10 Hz can flip
# between two poses of a redundant arm around a fixed target (Talos with its torso); this much
# damping, scaled by the squared error, stops that and leaves small steps exact
LM_DAMPING = 0.01


def substeps(control_dt: float, physics_dt: float) -> int:
    """Physics steps per control step: ``floor(control_dt / physics_dt)``.

    A relative tolerance of 1e-9 absorbs binary rounding (0.3 / 0.1 gives 3, not 2).

    Raises:
        ValueError: A step outside its ``*_DT_RANGE``, or ``control_dt < physics_dt``.
    """
    control_dt = real_number(control_dt, "control_dt [s]", low=DT_RANGE[0], high=DT_RANGE[1])
    low, high = PHYSICS_DT_RANGE
    physics_dt = real_number(physics_dt, "physics_dt [s]", low=low, high=high)
    count = int(np.floor(control_dt / physics_dt * (1.0 + 1e-9)))
    if count < 1:
        raise InputError(
            f"control_dt ({control_dt:g} s) must be at least physics_dt ({physics_dt:g} s)"
        )
    return count


def _down_rotation(rotation: np.ndarray) -> np.ndarray:
    """The smallest rotation of ``rotation`` (3x3) that points its z axis along world -z."""
    z = rotation[:, 2]
    if float(z @ DOWN) < -1.0 + 1e-12:  # pointing straight up: half a turn about x
        return pin.exp3(np.pi * rotation[:, 0]) @ rotation
    return pin.Quaternion.FromTwoVectors(z, DOWN).matrix() @ rotation


def _box(bounds: ArrayLike) -> np.ndarray:
    """``bounds`` as a (2, 3) array of finite lower and upper corners, lower <= upper."""
    try:
        box = np.array(bounds, dtype=float)
    except (TypeError, ValueError):
        box = np.full(1, np.nan)
    if box.shape != (2, 3) or not np.all(np.isfinite(box)) or np.any(box[0] > box[1]):
        raise InputError(
            "cartesian_bounds must be a (2, 3) array of finite [lower, upper] corners "
            f"with lower <= upper, got {bounds!r}"
        )
    return box


class CartesianArm:
    """An arm in a :class:`~pinkctl.MujocoSimulation` moved by Cartesian position actions.

    Args:
        sim: The simulation (servos on the controlled joints and on ``gripper_joint``).
        robot: The robot of ``sim``; ``point`` must be one of its frames.
        point: Action point: a frame of ``robot.model`` and a site of ``sim.model`` of the
            same name (:func:`~pinkctl.envs.scene.add_point_frame` and
            :func:`~pinkctl.envs.scene.add_point_site`, or the tool frame).
        control_dt: Control period [s]: one IK solve per step.
        physics_dt: MuJoCo step [s]; ``sim`` is set to it.
        action_scale: Metres per unit of position action, > 0.
        bounds: (2, 3) lower and upper corners of the box the target is clipped to [m],
            base frame.
        orientation: ``"free"``, ``"down"`` or ``"hold"`` (see the module docstring).
        orientation_cost: Frame-task orientation cost [cost]/[rad] of ``"down"`` and
            ``"hold"`` (the position cost is 1 [cost]/[m]).
        gripper_joint: Joint commanded by :meth:`apply`'s opening (None: no gripper). Its
            opening 0 and 1 are its range narrowed by the joint-limit margin
            (:func:`~pinkctl.envs.scene.limit_margin`), like the arm's IK range, unless
            ``gripper_range`` says otherwise.
        gripper_range: ``(closed, open)`` servo targets of opening 0 and 1 [rad] or [m];
            None: the joint's range narrowed by the margin.
        gripper_speed: Largest speed of the gripper's servo target [rad/s] or [m/s]: the
            target moves toward the commanded opening at most this fast, one physics step at
            a time (None: it jumps there).
        placement: Where the robot's base stands in ``sim``'s world (None: at the origin).
        world: Obstacles the controller avoids (a :class:`~pinkctl.world.World` in the
            robot's base frame, e.g. the scene's table and floor), or None: the robot's own
            floor. Self-collision is the controller's default either way.
        collision_margin: Smallest distance the controller keeps between the robot and an
            obstacle or itself [m].

    Raises:
        ValueError: On a malformed argument (the message names it).
    """

    def __init__(
        self,
        sim: MujocoSimulation,
        robot: PinkRobot,
        *,
        point: str,
        control_dt: float,
        physics_dt: float,
        action_scale: float,
        bounds: ArrayLike,
        orientation: str = "free",
        orientation_cost: float = 0.2,
        gripper_joint: str | None = None,
        gripper_range: tuple[float, float] | None = None,
        gripper_speed: float | None = None,
        placement: Placement | None = None,
        world: World | None = None,
        collision_margin: float = 0.01,
    ) -> None:
        self.n_substeps = substeps(control_dt, physics_dt)
        self.control_dt = float(control_dt)
        self.action_scale = positive_number(action_scale, "action_scale")
        self.orientation = choice(orientation, "orientation", ORIENTATIONS)
        weight = positive_number(orientation_cost, "orientation_cost")
        self.bounds = _box(bounds)
        site = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_SITE, point)
        if site < 0 or not robot.model.existFrame(point):
            raise InputError(f"point {point!r} must be a frame of the robot and a site of sim")
        self.sim = sim
        self.robot = robot
        self.point = point
        self._site = int(site)
        self.placement = placement if placement is not None else Placement()
        sim.model.opt.timestep = float(physics_dt)

        costs: dict[str, float | list[float]] = {
            "free": 0.0,
            "down": [weight, weight, 0.0],
            "hold": weight,
        }
        self.controller = PinkIKController(
            robot,
            sim.joint_names,
            [point],
            tool_frame=point,
            dt=self.control_dt,
            integrate_from="command",
            position_cost=1.0,
            orientation_cost=costs[self.orientation],
            motion_limits=False,
            lm_damping=LM_DAMPING,
            world=world,
            collision_margin=collision_margin,
        )
        model = sim.model
        arm = list(robot.controlled_joint_names)
        self._arm_names = arm
        self._arm_actuators = np.array(
            [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, n) for n in arm]
        )
        if np.any(self._arm_actuators < 0):
            raise InputError(f"every arm joint {arm} needs a servo in sim")
        self._arm_qpos = np.array([model.joint(n).qposadr[0] for n in arm])
        self._arm_dofs = np.array([model.joint(n).dofadr[0] for n in arm])
        acts = self._arm_actuators
        self._feed_forward = -model.actuator_biasprm[acts, 2] / model.actuator_gainprm[acts, 0]
        self._ramp = np.arange(1, self.n_substeps + 1) / self.n_substeps
        self.gripper_joint = gripper_joint
        self.gripper_range = (0.0, 1.0)
        self._gripper_actuator = -1
        self._gripper_goal = self._gripper_ctrl = 0.0
        speed = math.inf
        if gripper_speed is not None:
            speed = positive_number(gripper_speed, "gripper_speed")
        self._gripper_step = speed * float(physics_dt)
        if gripper_joint is not None:
            self._gripper_actuator, self._gripper_qpos, self.gripper_range = gripper_servo(
                model, gripper_joint, gripper_range
            )
        self._target = np.zeros(3)
        self._held_rotation = np.eye(3)
        self._command = np.zeros(len(arm))
        self._last_zero = False
        self._time = 0.0

    # ------------------------------------------------------------------ state
    @property
    def target(self) -> np.ndarray:
        """The action point's current target [m], base frame (a copy)."""
        return self._target.copy()

    @property
    def command(self) -> np.ndarray:
        """The arm's last joint command [rad] (controlled joints, in the robot's order)."""
        return self._command.copy()

    def point_position(self) -> np.ndarray:
        """Measured position of the action point [m], base frame."""
        return self.placement.to_base(self.sim.data.site_xpos[self._site])

    def point_rotation(self) -> np.ndarray:
        """Measured orientation (3, 3) of the action point, base frame."""
        rotation = self.sim.data.site_xmat[self._site].reshape(3, 3)
        return self.placement.rotation_to_base(rotation)

    def point_velocity(self) -> np.ndarray:
        """Measured velocity of the action point: linear [m/s], angular [rad/s], base axes."""
        velocity = np.empty(6)
        mujoco.mj_objectVelocity(
            self.sim.model, self.sim.data, mujoco.mjtObj.mjOBJ_SITE, self._site, velocity, 0
        )
        to_base = self.placement.vector_to_base
        return np.concatenate([to_base(velocity[3:]), to_base(velocity[:3])])

    def joint_positions(self) -> np.ndarray:
        """Measured arm joint positions [rad] (controlled joints, in the robot's order)."""
        return self.sim.data.qpos[self._arm_qpos].copy()

    def joint_velocities(self) -> np.ndarray:
        """Measured arm joint velocities [rad/s]."""
        return self.sim.data.qvel[self._arm_dofs].copy()

    def gripper_opening(self) -> float:
        """Measured gripper opening, normalised (0 closed, 1 open); 0 without a gripper."""
        if self.gripper_joint is None:
            return 0.0
        return ctrl_to_normalized(float(self.sim.data.qpos[self._gripper_qpos]), self.gripper_range)

    # ------------------------------------------------------------------ control
    def hold_at(self, positions: np.ndarray) -> None:
        """Put the arm's joints at ``positions`` [rad] (controlled joints, the robot's order)
        at rest, the servos commanded there, kinematics refreshed; call :meth:`reset` next."""
        data = self.sim.data
        data.qpos[self._arm_qpos] = positions
        data.qvel[self._arm_dofs] = 0.0
        data.ctrl[self._arm_actuators] = positions
        mujoco.mj_forward(self.sim.model, data)

    def reset(self) -> None:
        """Start from the simulation's current state (call after resetting ``sim``).

        The controller is re-seeded at the measured joints, the target is the action point's
        position and the held orientation the point's current one.
        """
        estimated = self.sim.get_robot_state(site_space=[])
        if not self.controller.reset(estimated, None, 0.0):
            raise RuntimeError(f"IK controller reset failed: {self.controller.last_error}")
        self._time = 0.0
        self._target = self.point_position()
        self._held_rotation = self.point_rotation()
        self._command = self.joint_positions()
        self.sim.data.ctrl[self._arm_actuators] = self._command
        if self._gripper_actuator >= 0:
            self._gripper_ctrl = float(self.sim.data.ctrl[self._gripper_actuator])
            self._gripper_goal = self._gripper_ctrl
        self._last_zero = False

    def _orientation_target(self) -> np.ndarray:
        """Quaternion (w, x, y, z) of this tick's frame-task orientation target."""
        if self.orientation == "hold":
            rotation = self._held_rotation
        else:
            configuration = self.controller.configuration
            assert configuration is not None  # reset succeeded
            current = configuration.get_transform_frame_to_world(self.point).rotation
            rotation = _down_rotation(current) if self.orientation == "down" else current
        return matrix_to_quaternion(rotation)

    def apply(self, delta: np.ndarray, opening: float | None = None) -> None:
        """One control step: move the target by ``delta``, solve the IK, run the physics.

        Args:
            delta: Raw position action (3,) in action units (scaled by ``action_scale``).
            opening: Gripper opening in [0, 1] (0 closed, 1 open), an absolute servo target;
                None leaves the gripper command as it is.

        Raises:
            ValueError: ``delta`` is not 3 finite reals or ``opening`` not finite (no change).
        """
        self._take_action(delta, opening)
        point = [self.point]
        setpoint = RobotState(
            sites=SpatialState.from_name(
                point,
                positions=(point, self._target[None, :]),
                orientations=(point, self._orientation_target()[None, :]),
            )
        )
        self._time += self.control_dt
        desired = self.controller.forward(
            self.sim.get_robot_state(site_space=[]), setpoint, self._time
        )
        previous = self._command
        new = self._arm_positions(desired)
        if new is None:
            new = previous
        self._step_servos(previous, new)
        self._command = new

    def _take_action(self, delta: ArrayLike, opening: float | None) -> None:
        """Move the target by a position action (a zero action after a move: the target
        snaps to the point, so the arm settles where it is), inside the bounds, and set the
        gripper's goal to ``opening`` (both checked first: a rejected action changes nothing)."""
        raw = real_array(delta, "delta", (3,))
        opening = None if opening is None else real_number(opening, "opening")
        zero = float(np.linalg.norm(raw)) < ZERO_ACTION_TOLERANCE
        if zero and not self._last_zero:
            self._target = self.point_position()
        elif not zero:
            self._target = self._target + self.action_scale * raw
        self._last_zero = zero
        np.clip(self._target, self.bounds[0], self.bounds[1], out=self._target)
        if opening is not None and self.gripper_joint is not None:
            self._gripper_goal = normalized_to_ctrl(opening, self.gripper_range)

    def _arm_positions(self, desired: RobotState | None) -> np.ndarray | None:
        """The arm joints' positions of a controller output, in the robot's order (None
        when it gives none)."""
        joints = None if desired is None else desired.joints
        positions = None if joints is None else joints.positions
        if joints is None or positions is None:
            return None
        if joints.position_names == self._arm_names:
            return np.asarray(positions, dtype=float)
        by_name = dict(zip(joints.position_names, positions))  # the joints in another order
        return np.array([by_name[name] for name in self._arm_names])

    def _step_servos(self, previous: np.ndarray, new: np.ndarray) -> None:
        """Ramp the arm servos from ``previous`` to ``new`` over the substeps."""
        model, data = self.sim.model, self.sim.data
        change = new - previous
        base = previous + self._feed_forward * change / self.control_dt
        actuators = self._arm_actuators
        jaw = self._gripper_actuator
        goal, jaw_ctrl, jaw_step = self._gripper_goal, self._gripper_ctrl, self._gripper_step
        for fraction in self._ramp:
            data.ctrl[actuators] = base + fraction * change
            if jaw >= 0:
                jaw_ctrl += min(max(goal - jaw_ctrl, -jaw_step), jaw_step)
                data.ctrl[jaw] = jaw_ctrl
            mujoco.mj_step(model, data)
        self._gripper_ctrl = jaw_ctrl
