"""The standing-humanoid reach of ``pinkctl demo g1 --whole-body`` and
``examples/humanoid_reach.py``.

A catalog humanoid is loaded with a floating base and its legs, waist and reaching arm
controlled (:data:`HUMANOIDS`), simulated standing under gravity
(:mod:`pinkctl.sim.stance`), and a :class:`~pinkctl.controllers.PinkIKController` with the
feet as contacts and the CoM kept inside their support polygon (strict priorities: the hand
above the posture) moves the hand to targets around the body and toward the floor in front,
each reached along a minimum-jerk path and then held. Every tick is checked against the
acceptance of issue 26: the pelvis does not drop more than :data:`MAX_DROP` below the stance,
no body but the feet touches the floor, each foot moves less than :data:`MAX_FOOT_MOTION`,
the simulated CoM stays inside the support polygon, the command stays within the position and
velocity limits; at the end of each hold the hand is within :data:`HAND_TOLERANCE` of its
target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from ..controllers import PinkIKController
from ..core.robot import PinkRobot, load_pink_supported_robot
from ..core.state import RobotState, SpatialState
from ..errors import InputError
from ..sim import MujocoSimulation

__all__ = [
    "HAND_TOLERANCE",
    "HUMANOIDS",
    "MAX_DROP",
    "MAX_FOOT_MOTION",
    "Humanoid",
    "ReachReport",
    "ReachRow",
    "reach_demo",
    "reach_targets",
    "run_reach",
]

#: Acceptance of each reach (issue 26): pelvis drop [m], foot motion [m], hand error [m].
MAX_DROP = 0.15
MAX_FOOT_MOTION = 0.005
HAND_TOLERANCE = 0.005


@dataclass(frozen=True)
class Humanoid:
    """What the reach needs to know about a catalog humanoid.

    Attributes:
        feet: The contact frames (soles or ankles).
        sole: Sole rectangle ``(x_min, x_max, y_min, y_max)`` [m] in each foot frame.
        held: Substrings of the joints left to the hold servos (the other arm, head, grippers).
    """

    feet: tuple[str, str]
    sole: tuple[float, float, float, float]
    held: tuple[str, ...]


HUMANOIDS = {
    "g1": Humanoid(
        ("left_ankle_roll_link", "right_ankle_roll_link"),
        (-0.05, 0.12, -0.03, 0.03),
        ("right_shoulder", "right_elbow", "right_wrist"),
    ),
    "talos": Humanoid(
        ("left_sole_link", "right_sole_link"),
        (-0.06, 0.05, -0.03, 0.03),
        ("arm_right", "gripper", "head"),
    ),
}


@dataclass
class ReachRow:
    """One target: the hand's error at the end of its hold and the worst tick of its reach.

    Attributes:
        target: World position [m].
        error: Simulated hand to target at the end of the hold [m].
        drop: Largest pelvis drop below the stance [m].
        foot: Largest motion of a foot since the stance [m].
        com_margin: Smallest distance of the simulated CoM inside the support polygon [m].
        floor_bodies: Bodies other than the feet that touched the floor.
        within_limits: Every command within the position and velocity limits.
        braking: Ticks that braked.
    """

    target: np.ndarray
    error: float = 0.0
    drop: float = 0.0
    foot: float = 0.0
    com_margin: float = np.inf
    floor_bodies: set[str] = field(default_factory=set)
    within_limits: bool = True
    braking: int = 0

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list[str]:
        """The checks this target missed."""
        missed = []
        if self.error > HAND_TOLERANCE:
            missed.append(f"hand {self.error * 1e3:.1f} mm")
        if self.drop > MAX_DROP:
            missed.append(f"pelvis drop {self.drop:.3f} m")
        if self.foot > MAX_FOOT_MOTION:
            missed.append(f"foot moved {self.foot * 1e3:.1f} mm")
        if self.com_margin < 0.0:
            missed.append("CoM left the support polygon")
        if self.floor_bodies:
            missed.append(f"on the floor: {sorted(self.floor_bodies)}")
        if not self.within_limits:
            missed.append("command beyond a limit")
        return missed


@dataclass
class ReachReport:
    """The rows of a reach run, and its table."""

    robot: str
    rows: list[ReachRow]

    @property
    def passed(self) -> int:
        return sum(row.passed for row in self.rows)

    @property
    def table(self) -> str:
        """One line per target: position, hand error, drop, foot motion, CoM margin, verdict."""
        lines = [
            f"{'target [m]':<24} {'hand [mm]':>9} {'drop [mm]':>9} {'foot [mm]':>9} "
            f"{'CoM in [mm]':>11}  verdict"
        ]
        for row in self.rows:
            x, y, z = row.target
            verdict = "ok" if row.passed else "; ".join(row.failures)
            lines.append(
                f"({x:6.3f}, {y:6.3f}, {z:6.3f}) {row.error * 1e3:9.1f} {row.drop * 1e3:9.1f} "
                f"{row.foot * 1e3:9.2f} {row.com_margin * 1e3:11.1f}  {verdict}"
            )
        lines.append(f"{self.robot}: {self.passed}/{len(self.rows)} targets pass")
        return "\n".join(lines)


def load_humanoid(name: str) -> tuple[PinkRobot, Humanoid]:
    """The catalog humanoid ``name`` with a floating base, its legs, waist and one arm
    controlled."""
    if name not in HUMANOIDS:
        raise InputError(f"no whole-body set-up for {name!r}; humanoids: {sorted(HUMANOIDS)}")
    spec = HUMANOIDS[name]
    arms = load_pink_supported_robot(name, floating_base=True)
    joints = [
        j
        for j in arms.model.names[2:]
        if arms.model.joints[arms.model.getJointId(j)].nv == 1
        and not any(part in j for part in spec.held)
    ]
    robot = load_pink_supported_robot(name, floating_base=True, controlled_joint_names=joints)
    return robot, spec


def reach_targets(hand: np.ndarray, floor: float, count: int = 10) -> list[np.ndarray]:
    """``count`` targets around the hand's stance position ``hand``: in front, to the side, up,
    down, and last 0.2 m above the floor (at height ``floor``) in front of the hand."""
    offsets = [
        (0.15, 0.0, 0.0),
        (0.10, 0.10, 0.10),
        (0.15, -0.10, -0.05),
        (0.05, 0.15, -0.10),
        (0.20, 0.0, -0.15),
        (0.10, -0.15, 0.05),
        (0.0, 0.10, 0.15),
        (0.20, 0.05, -0.25),
        (0.15, -0.05, -0.30),
    ]
    targets = [hand + np.array(offset) for offset in offsets[: count - 1]]
    targets.append(np.array([hand[0] + 0.25, hand[1] - 0.05, floor + 0.2]))
    return targets


def _controller(
    name: str, robot: PinkRobot, sim: MujocoSimulation, sites: list[str], dt: float
) -> PinkIKController:
    """The whole-body controller of humanoid ``name`` (module docstring), reset on the
    stance of ``sim``.

    Raises:
        InputError: The controller did not reset.
    """
    spec = HUMANOIDS[name]
    feet = list(spec.feet)
    controller = PinkIKController(
        robot,
        robot.controlled_joint_names,
        sites,
        dt=dt,
        integrate_from="command",
        orientation_cost=0.0,
        posture_cost=1e-2,
        contacts=feet,
        sole=spec.sole,
        support_margin=0.05,
        priority_levels=[["frame"], ["posture"]],
        self_collision=False,  # the feet stand on the floor: contacts, not obstacles
    )
    posture = controller.get_posture_task()
    assert posture is not None
    posture.gain = 0.02  # the posture level returns home slowly, not dead-beat
    estimate = sim.get_robot_state(robot.controlled_joint_names, sites)
    if not controller.reset(estimate, None, sim.time):
        raise InputError(f"{name}: the controller did not reset ({controller.last_error})")
    return controller


class _Reach:
    """One humanoid standing in MuJoCo under its whole-body controller, with the stance
    every tick is checked against (module docstring)."""

    def __init__(self, name: str, dt: float) -> None:
        robot, spec = load_humanoid(name)
        self.tool, self.feet = str(robot.tool_frame), list(spec.feet)
        self.sites = [self.tool, *self.feet]
        self.sim = sim = MujocoSimulation.from_robot(robot, site_frames=self.sites)
        sim.step(int(round(0.5 / sim.timestep)))  # settle into the stance
        self.joints = robot.controlled_joint_names
        self.controller = _controller(name, robot, sim, self.sites, dt)
        model = sim.model
        self.floor = int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor"))
        self.support = self.controller._problem.whole_body.support
        assert self.support is not None
        foot_bodies = [int(model.site_bodyid[model.site(f).id]) for f in self.feet]
        # the feet and their soles' parents
        self.foot_ids = set(foot_bodies) | {int(model.body_parentid[b]) for b in foot_bodies}
        self.root = int(model.body_rootid[foot_bodies[0]])
        self.stance_z = float(sim.data.qpos[2])
        self.stance_feet = [sim.get_site_pose(f)[0] for f in self.feet]
        self.lower, self.upper = sim.joint_position_limits(self.joints)
        self.velocity = np.array([robot.velocity_limits[j] for j in self.joints])
        self.dt, self.steps = dt, int(round(dt / sim.timestep))

    def hand(self) -> np.ndarray:
        """The hand's (tool frame's) world position [m]."""
        return self.sim.get_site_pose(self.tool)[0]

    def tick(self, row: ReachRow, point: np.ndarray) -> None:
        """One control tick toward the hand position ``point`` [m], world frame, then the
        physics steps of one period, with the checks written into ``row``."""
        sim, controller = self.sim, self.controller
        setpoint = RobotState(
            sites=SpatialState.from_name(self.sites, positions=([self.tool], point[None]))
        )
        command = controller.forward(
            sim.get_robot_state(self.joints, self.sites), setpoint, sim.time
        )
        row.braking += controller.status.value == "braking"
        if command is not None and command.joints is not None:
            row.within_limits &= self._within_limits(command)
        sim.apply(command)
        sim.step(self.steps)
        self._measure(row)

    def _within_limits(self, command: RobotState) -> bool:
        """Whether a command's positions are within the joints' range and its velocities (if
        any) within the velocity limits (1e-9 of rounding)."""
        q, v = command.joints.positions, command.joints.velocities  # type: ignore[union-attr]
        assert q is not None
        inside = bool(np.all(q >= self.lower - 1e-9) and np.all(q <= self.upper + 1e-9))
        return inside and (v is None or bool(np.all(np.abs(v) <= self.velocity + 1e-9)))

    def _measure(self, row: ReachRow) -> None:
        """The stance checks after a tick: pelvis drop, foot motion, CoM margin [m] and the
        bodies other than the feet touching the floor."""
        sim, model = self.sim, self.sim.model
        row.drop = max(row.drop, self.stance_z - float(sim.data.qpos[2]))
        moved = [
            np.linalg.norm(sim.get_site_pose(f)[0] - p) for f, p in zip(self.feet, self.stance_feet)
        ]
        row.foot = max(row.foot, *(float(m) for m in moved))
        com = sim.data.subtree_com[self.root]
        row.com_margin = min(row.com_margin, float(self.support.distances(com).min()))  # type: ignore[union-attr]
        for contact in sim.data.contact[: sim.data.ncon]:
            if self.floor in (contact.geom1, contact.geom2):
                body = int(model.geom_bodyid[contact.geom1 + contact.geom2 - self.floor])
                if body not in self.foot_ids:
                    row.floor_bodies.add(model.body(body).name)


def run_reach(
    name: str,
    *,
    targets: list[np.ndarray] | None = None,
    offsets: list[tuple[float, float, float]] | None = None,
    seconds: float = 3.0,
    hold: float = 1.0,
    dt: float = 0.01,
    on_tick: Callable[[MujocoSimulation], None] | None = None,
) -> ReachReport:
    """Stand ``name`` in MuJoCo and reach each target (module docstring).

    Args:
        name: A humanoid of :data:`HUMANOIDS`.
        targets: World positions; default :func:`reach_targets` around the stance.
        offsets: Or targets given relative to the hand's position in the stance [m].
        seconds: Duration of each reach [s] (a minimum-jerk path).
        hold: Time the target is held before the hand is measured [s].
        dt: Control period [s].
        on_tick: Called with the simulation after every control tick (e.g. a video recorder).
    """
    reach = _Reach(name, dt)
    sim = reach.sim
    hand = reach.hand()
    if offsets is not None:
        targets = [hand + np.asarray(offset, dtype=float) for offset in offsets]
    elif targets is None:
        targets = reach_targets(hand, float(sim.model.geom_pos[reach.floor][2]))
    rows, start = [], hand
    for target in targets:
        row = ReachRow(target=np.asarray(target, dtype=float))
        sim.set_target_marker(row.target, [1.0, 0.0, 0.0, 0.0])
        for k in range(int(round((seconds + hold) / dt))):
            s = min(1.0, k * dt / seconds)
            reach.tick(row, start + (10 * s**3 - 15 * s**4 + 6 * s**5) * (row.target - start))
            if on_tick is not None:
                on_tick(sim)
        row.error = float(np.linalg.norm(reach.hand() - row.target))
        rows.append(row)
        start = row.target
    return ReachReport(name, rows)


def reach_demo(args: Any) -> int:
    """``pinkctl demo NAME --whole-body`` (the parsed arguments): run the reach, print its
    table; the exit status (0: every target passed, 1: one missed)."""
    report = run_reach(args.robot_option or args.robot or "g1")
    print(report.table)
    return 0 if report.passed == len(report.rows) else 1
