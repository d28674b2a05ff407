"""PinkIKController: reactive differential IK as one QP per control tick.

Each :meth:`PinkIKController.forward` solves

.. math::

    \\min_{v} \\; \\sum_i \\| J_i(q) v - \\alpha_i e_i(q) / \\Delta t \\|^2_{W_i}
        + \\lambda \\| v \\|^2
    \\quad \\text{s.t.} \\quad
    q_{\\min} \\le q \\oplus v \\Delta t \\le q_{\\max},\\;
    |v| \\le v_{\\max},\\; G v \\le h \\text{ (barriers, extra limits)}

over the velocities :math:`v` [rad/s] of the *controlled* joints only: a frame task on the tool
frame, a posture task, the user's extra tasks, pink's configuration and velocity limits plus the
user's, and the user's barriers. A :class:`~pinkctl.motion.MotionShaper` then turns :math:`v`
into the next command of the command sequence it owns, within the robot's position, velocity
and (by default) acceleration and jerk limits *relative to the previous command*.

Which configuration the QP linearises at is a documented choice (``integrate_from``):

* ``"measured"`` (default, the Isaac PINK extension's choice): the measured joint positions.
  The tasks' errors are the *measured* errors, so the command keeps moving until the measured
  pose reaches the target (integral action: a position servo that sags or lags is corrected).
* ``"command"``: the controller's own previous command (a kinematic reference trajectory):
  the measurement of the controlled joints is not used after :meth:`reset`; other
  (uncontrolled) joints are still read from it.

In both modes the command continues from the previous command, never from the measurement:
``q_k = q_{k-1} + v dt`` with ``v`` within the limits, whatever the measurement does (noise,
a blocked arm, a dropped estimate). Note that a blocked arm in ``"measured"`` mode keeps a
constant error, so its command moves on toward the target (within every limit).

A tick that cannot be solved (an infeasible or failing QP, an estimate without the controlled
joints, a failing ``pre_step_callback``) does not stop the arm dead: the output is the next
step of a braking profile from the last command (:attr:`ControllerStatus.BRAKING`, the reason
in ``last_error``). ``forward`` returns None only before a successful :meth:`reset`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pinocchio as pin
from pink import Configuration

from ..core.state import RobotState, RootState
from ..qp import EXACT_SOLVERS, QPSolveError
from ._arguments import MAX_TARGET_DISTANCE, check_states
from .pink_ik_setup import PinkIKSetup
from .status import ControllerStatus

__all__ = ["ControllerStatus", "EXACT_SOLVERS", "MAX_TARGET_DISTANCE", "PinkIKController"]


class PinkIKController(PinkIKSetup):
    """Reactive differential-IK controller (pink tasks, limits and barriers; one QP per tick).

    The API is the Isaac Sim PINK extension's: targets come from the setpoint's site poses and
    complete joint setpoints; the output is a :class:`~pinkctl.state.RobotState` with joint
    positions and velocities for the controlled joints.

    Args:
        pink_robot: Robot from :func:`~pinkctl.robot.load_pink_robot` or
            :func:`~pinkctl.robot.load_pink_supported_robot`.
        robot_joint_space: Ordered joint names of the robot as the caller sees it (e.g.
            ``MujocoSimulation.joint_names``). Must contain every controlled joint.
        robot_site_space: Ordered frame names the setpoints use; must contain the tool frame.
        tool_frame: End-effector frame of the frame task; None: the robot's configured tool
            frame, else the model's last frame.
        position_cost: Frame-task position cost [cost]/[m], scalar or per axis (tool frame),
            in ``[0, MAX_WEIGHT]``.
        orientation_cost: Frame-task orientation cost [cost]/[rad], scalar or per axis.
        posture_cost: Posture-task cost [cost]/[rad]; 0 or None disables the posture task.
        damping: Tikhonov damping of the QP Hessian [cost]/[rad/s]^2.
        gain: Task gain in (0, 1] of the frame and posture tasks (1: dead-beat).
        lm_damping: Levenberg–Marquardt damping of the frame task.
        solver: QP backend; any installed qpsolvers name (default ``"daqp"``).
        extra_tasks: More pink tasks in the objective.
        extra_limits: More pink limits, added to the configuration and velocity limits.
        extra_barriers: pink barriers (e.g. ``SelfCollisionBarrier``, ``PositionBarrier``).
        pre_step_callback: ``callback(configuration, setpoint_state)`` called each tick after
            the configuration is updated and before the QP is solved.
        dt: Integration step [s] (the control period), in ``DT_RANGE``.
        integrate_from: ``"measured"`` or ``"command"`` (see the module docstring).
        qp_backend: ``"pinkctl"`` (the fast in-place QP layer) or ``"pink"`` (pink's own
            ``build_ik`` + qpsolvers; the reference path).
        fallback_solver: Second backend tried when the first one fails.
        solver_options: Extra keyword arguments for the backend (checked by a trial solve).
        configuration_limit_gain: Gain of pink's configuration limit in (0, 1].
        motion_limits: Enforce joint acceleration and jerk limits on the command sequence
            (with position and velocity limits; see :mod:`pinkctl.motion_limits`). None
            (default): on when the robot declares acceleration limits (every bundled robot
            does), off otherwise; True: on with whatever the robot declares; False: position
            and velocity limits only; or a :class:`~pinkctl.motion_limits.MotionLimits` over
            the controlled joints. Velocity limits are ``robot.velocity_limits`` (the
            configured ones) in every case.
        priority_levels: Strict priorities instead of one weighted sum: tasks per level, highest
            first, each ``"frame"``, ``"posture"`` or a task of ``extra_tasks``; the tick is
            then a :class:`~pinkctl.qp.cascade_step.CascadeStep` (``qp_backend="pinkctl"``).
        priority_method: ``"cascade"`` (exact, a QP per level, every limit at every level) or
            ``"nullspace"`` (null-space projection; position and velocity limits only).

    Raises:
        InputError: (a ``ValueError``) on any malformed argument, naming it and what was
            expected: an unknown tool frame or solver, controlled joints missing from
            ``robot_joint_space``, costs outside ``[0, MAX_WEIGHT]``, ``dt`` outside
            ``DT_RANGE``, invalid solver options, extra objects that are not pink's or that
            name unknown frames, a callback that is not callable.
    """

    def reset(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> bool:
        """Seed the controller from the measured state.

        The frame target becomes the current tool pose, the posture target the current
        configuration, and the command sequence starts at rest at the measured positions;
        the setpoint is ignored. Returns False (controller not ready) if a controlled joint
        has no measured position.

        Raises:
            ValueError: If the states are not RobotState objects (see :meth:`forward`).
        """
        check_states(estimated_state, setpoint_state)
        read = self.read_estimate(estimated_state)
        if read is None:
            self._configuration = None
            self._status = ControllerStatus.NOT_READY
            return False
        positions, q = read
        robot = self.robot
        if self._base is not None:
            self._base.reset(estimated_state.root)
            self._base.write(q)
        self._configuration = Configuration(
            robot.model,
            robot.data,
            q,
            # distances are computed every tick only when a barrier reads them
            collision_model=robot.collision_model if self._needs_collisions else None,
            collision_data=robot.collision_data if self._needs_collisions else None,
            copy_data=True,
            forward_kinematics=True,
        )
        self._frame_task.set_target(
            self._configuration.get_transform_frame_to_world(self.tool_frame)
        )
        if self._posture_task is not None:
            self._posture_task.set_target(q)
        self._shaper.reset(positions)
        self._last_target = None
        self._status = ControllerStatus.OK
        self.last_error = None
        return True

    # ------------------------------------------------------------------ the tick's phases
    def read_estimate(
        self, estimated_state: RobotState | None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Phase 1: the measured controlled positions and the Pinocchio ``q`` of the estimate.

        Uncontrolled joints present in the estimate take their measured values, the others
        their home value. Returns None (reason in ``last_error``) when a controlled position
        is missing.
        """
        joints = None if estimated_state is None else estimated_state.joints
        if joints is None:
            self.last_error = "estimated state has no joint state"
            return None
        if self._all_map is not None:
            every = self._all_map.positions_from_state(joints)
            if every is not None:
                return every[: self._n_controlled], self._all_map.to_configuration(
                    every, self.robot.q0
                )
        positions = self._map.positions_from_state(joints)
        if positions is None:
            self.last_error = (
                "estimated state lacks a valid position for some of the controlled joints "
                f"{self._map.controlled_joint_names}"
            )
            return None
        q_base = self.robot.q0
        if self._passive_map is not None:
            passive = self._passive_map.positions_from_state(joints)
            if passive is not None:
                q_base = self._passive_map.to_configuration(passive, q_base)
        return positions, self._map.to_configuration(positions, q_base)

    def update_configuration(
        self, measured: np.ndarray, q: np.ndarray, root: RootState | None = None
    ) -> None:
        """Phase 2: forward kinematics and Jacobians where the QP linearises.

        ``"command"`` integration replaces the controlled positions of ``q`` by the last
        command; a floating base is placed at the estimate's root (``"measured"``) or where
        the controller holds it.
        """
        configuration = self._configuration
        assert configuration is not None
        if self._continuous.size:
            self._follow_winding(measured)
        if self._integrate_from == "command":
            q = self._map.to_configuration(self._shaper.position, q)
        if self._base is not None:
            self._base_start = self._base.read(root) if self._integrate_from == "measured" else None
            self._base.write(q, self._base_start)
        if configuration.collision_model is None:
            # pink's Configuration.update without collisions, minus its copy of our new q:
            # joint Jacobians (with forward kinematics) and frame placements
            q.setflags(write=False)
            configuration.q = q
            pin.computeJointJacobians(configuration.model, configuration.data, q)
            pin.updateFramePlacements(configuration.model, configuration.data)
        else:
            configuration.update(q)

    def update_targets(self, setpoint_state: RobotState | None) -> bool:
        """Phase 3: frame and posture targets from the setpoint.

        Returns False (reason recorded) when the frame target lies beyond
        :data:`MAX_TARGET_DISTANCE`; the previous target is kept.
        """
        if setpoint_state is None:
            return True
        sites = setpoint_state.sites
        task = self._frame_task
        # states are immutable: the same site state sets the same target again, unless the
        # user replaced the target through get_frame_task() in between
        if sites is not None and not (
            sites is self._last_sites and task.transform_target_to_world is self._last_target_se3
        ):
            target = self._target_reader.pose(sites, task.transform_target_to_world)
            if target is not None:
                x, y, z = target.translation.tolist()
                if x * x + y * y + z * z > MAX_TARGET_DISTANCE**2:
                    distance = math.sqrt(x * x + y * y + z * z)
                    self.last_error = (
                        f"target of {self.tool_frame!r} is {distance:.3g} m from the world "
                        f"origin, beyond {MAX_TARGET_DISTANCE:g} m: ignored"
                    )
                    return False
                task.set_target(target)
            self._last_sites = sites
            self._last_target_se3 = task.transform_target_to_world
        joints = setpoint_state.joints
        if joints is not None and self._posture_task is not None:
            # only a complete joint setpoint (every controlled joint) replaces the posture target
            positions = self._map.positions_from_state(joints)
            if positions is not None:
                self._posture_task.set_target(self._map.to_configuration(positions, self.robot.q0))
        return True

    def solve(self) -> np.ndarray | None:
        """Phase 4: this tick's QP: the velocity [rad/s] of every QP variable (floating base
        first, then the controlled joints), or None (reason in ``last_error``).

        With motion limits and no QP rows, the tasks' velocity with only the position range
        as a limit (the shaper scales it); with QP rows (barriers, extra limits), the QP
        inside the shaper's box, so that the rows keep holding.
        """
        configuration = self._configuration
        assert configuration is not None
        full, approach = self._steps
        shaper = self._shaper
        try:
            if not shaper.smooth:
                x = full.step(configuration, self.dt)
            elif approach is not full:
                x = approach.step(configuration, self.dt)
            else:
                lower, upper = self._with_base_bounds(*shaper.box())
                try:
                    x = full.step(configuration, self.dt, lower, upper)
                except QPSolveError:
                    # the rows ask for a stop the joints cannot make under their acceleration
                    # and jerk limits (e.g. a barrier reached at speed): the hardware limits
                    # win, the rows are met as closely as the box allows
                    x = full.step(configuration, self.dt)
        except QPSolveError as exc:
            self.last_error = f"QP failed: {exc}"
            return None
        return np.divide(x, self.dt, out=x)

    def shape(self, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray, RootState | None]:
        """Phase 5: the next command from the QP's velocity (see
        :class:`~pinkctl.motion.MotionShaper`): positions and velocity of the controlled
        joints, and the floating base's desired root state (None without one)."""
        shaper = self._shaper
        n_base = self._n_base
        scale = 1.0
        if shaper.smooth and self._steps[1] is not self._steps[0]:
            positions, command_velocity = shaper.follow(
                velocity[n_base:],
                holding=self._target_holds(),
                gain=float(self._frame_task.gain),
            )
            scale = shaper.scale
        else:
            positions, command_velocity = shaper.commit(velocity[n_base:])
        root = None
        if self._base is not None:
            root = self._base.step(velocity[:n_base] * scale, self.dt, self._base_start)
        return positions, command_velocity, root

    def write_command(
        self, positions: np.ndarray, velocity: np.ndarray, root: RootState | None = None
    ) -> RobotState:
        """Phase 6: the output state (controlled joints; the root for a floating base)."""
        joints = self._map.command_state(positions, velocity)
        return RobotState(joints=joints) if root is None else RobotState(joints=joints, root=root)

    def forward(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> RobotState | None:
        """One control tick: :meth:`read_estimate`, :meth:`update_configuration`,
        :meth:`update_targets` (then the ``pre_step_callback``), :meth:`solve`,
        :meth:`shape`, :meth:`write_command`.

        Returns None (with ``last_error`` set) only before a successful reset. A tick that
        cannot be solved returns the next braking step (``status`` is
        :attr:`ControllerStatus.BRAKING`, the reason in ``last_error``); never raises for
        those.

        Raises:
            ValueError: If ``estimated_state`` is not a RobotState or ``setpoint_state`` is
                neither a RobotState nor None (a programming error, not a runtime condition).
        """
        if type(estimated_state) is not RobotState or (
            setpoint_state is not None and type(setpoint_state) is not RobotState
        ):
            check_states(estimated_state, setpoint_state)  # subclasses pass, others raise
        if self._configuration is None:
            self._status = ControllerStatus.NOT_READY
            return self._fail("forward called before a successful reset")
        read = self.read_estimate(estimated_state)
        if read is None:
            return self._brake()
        measured, q = read
        self.update_configuration(measured, q, estimated_state.root)
        if not self.update_targets(setpoint_state):
            return self._brake()
        callback = self._pre_step_callback
        if callback is not None:
            try:
                callback(self._configuration, setpoint_state)
            except Exception as exc:  # a user callback must not kill the control loop
                self.last_error = f"pre_step_callback raised {type(exc).__name__}: {exc}"
                return self._brake()
        velocity = self.solve()
        if velocity is None:
            return self._brake()
        positions, command_velocity, root = self.shape(velocity)
        self._status = ControllerStatus.OK
        self.last_error = None
        return self.write_command(positions, command_velocity, root)

    def _target_holds(self) -> bool:
        """Whether the frame target is the same as on the previous tick."""
        target = self._frame_task.transform_target_to_world
        last = self._last_target
        holding = target is not None and last is not None and target.isApprox(last, 1e-14)
        self._last_target = None if target is None else target.copy()
        return holding

    def _with_base_bounds(
        self, lower: np.ndarray, upper: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The joints' velocity box, unbounded for the floating base's coordinates."""
        if not self._n_base:
            return lower, upper
        free = np.full(self._n_base, np.inf)
        return np.concatenate([-free, lower]), np.concatenate([free, upper])

    def _follow_winding(self, measured: np.ndarray) -> None:
        """Re-anchor continuous joints on the measured winding (whole turns apart)."""
        index = self._continuous
        turns = np.round((measured[index] - self._shaper.position[index]) / (2.0 * np.pi))
        if np.any(turns):
            every = np.zeros(self._n_controlled)
            every[index] = turns
            self._shaper.rewind(every)

    def _brake(self) -> RobotState:
        """The next braking step from the last command (the reason is in ``last_error``)."""
        positions, velocity = self._shaper.brake()
        self._status = ControllerStatus.BRAKING
        self._last_target = None
        root = None if self._base is None else self._base.step(np.zeros(6), self.dt)
        return self.write_command(positions, velocity, root)
