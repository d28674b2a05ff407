"""The robot's contacts in a simulation: with obstacles, with itself, with anything else.

:func:`robot_contacts` sorts MuJoCo's active contacts (``data.contact``) by what touches the
robot: an **obstacle** (a geom of a body that nothing moves: the world body, bodies welded to
it, mocap bodies; the simulation's floor and a :class:`~pinkctl.world.World`'s obstacles
alike), the robot **itself** (two robot bodies: MuJoCo already leaves out the excluded pairs),
or **other** bodies that physics moves (a free block). A contact counts when its geoms touch
or penetrate (MuJoCo's ``dist <= 0``; a contact inside a geom margin does not). Depths are
penetration depths [m] (``-dist``, >= 0).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mujoco
import pinocchio as pin

if TYPE_CHECKING:
    from ..core.robot import PinkRobot

__all__ = ["ContactReport", "robot_body_ids", "robot_contacts"]


@dataclass(frozen=True)
class ContactReport:
    """The robot's contacts at one instant (module docstring).

    Attributes:
        obstacle_contacts: Contacts between the robot and an obstacle.
        self_contacts: Contacts between two robot bodies.
        other_contacts: Contacts between the robot and another moving body.
        obstacle_depth: Largest penetration among the obstacle contacts [m] (0 without any).
        self_depth: Largest penetration among the self contacts [m] (0 without any).
        pairs: ``(robot body, other body or obstacle geom, depth [m])`` of each obstacle and
            self contact, deepest first (an obstacle is named by its geom, the others by their
            body).
    """

    obstacle_contacts: int
    self_contacts: int
    other_contacts: int
    obstacle_depth: float
    self_depth: float
    pairs: tuple[tuple[str, str, float], ...]

    @property
    def depth(self) -> float:
        """Largest penetration of an obstacle or self contact [m]."""
        return max(self.obstacle_depth, self.self_depth)


def robot_body_ids(model: mujoco.MjModel, robot: PinkRobot) -> list[int]:
    """The MuJoCo bodies that are links of ``robot`` (bodies named as its body frames)."""
    links = {f.name for f in robot.model.frames if f.type == pin.FrameType.BODY}
    return [b for b in range(1, model.nbody) if model.body(b).name in links]


def fixed_bodies(model: mujoco.MjModel) -> set[int]:
    """Bodies nothing moves: the world body, bodies welded to it, mocap bodies."""
    return {b for b in range(model.nbody) if int(model.body_weldid[b]) == 0} | {
        b for b in range(model.nbody) if int(model.body_mocapid[b]) >= 0
    }


def _robot_first(
    model: mujoco.MjModel, contact: Any, robot: set[int]
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """``(geom ids, body ids)`` of an active contact (penetrating or touching, not
    excluded) with a robot body, the robot's first; None for any other contact."""
    if contact.dist > 0.0 or contact.exclude != 0:
        return None
    geoms = (int(contact.geom[0]), int(contact.geom[1]))
    bodies = (int(model.geom_bodyid[geoms[0]]), int(model.geom_bodyid[geoms[1]]))
    if bodies[0] not in robot:
        geoms, bodies = geoms[::-1], bodies[::-1]
    return (geoms, bodies) if bodies[0] in robot else None


def _kind(other: int, robot: set[int], fixed: set[int]) -> str:
    """What a robot body touches: ``"self"`` (a robot body), ``"obstacle"`` (a body nothing
    moves) or ``"other"`` (a free object)."""
    if other in robot:
        return "self"
    return "obstacle" if other in fixed else "other"


def robot_contacts(
    model: mujoco.MjModel, data: mujoco.MjData, robot_bodies: Collection[int]
) -> ContactReport:
    """Sort ``data``'s contacts by what touches the bodies ``robot_bodies`` (ids).

    A robot body that is welded to the world (a fixed base) counts as robot, not obstacle.
    """
    robot = set(robot_bodies)
    fixed = fixed_bodies(model) - robot
    counts = {"obstacle": 0, "self": 0, "other": 0}
    depths = {"obstacle": 0.0, "self": 0.0}
    pairs = []
    for k in range(data.ncon):
        contact = data.contact[k]
        touching = _robot_first(model, contact, robot)
        if touching is None:
            continue
        geoms, bodies = touching
        kind = _kind(bodies[1], robot, fixed)
        counts[kind] += 1
        if kind == "other":
            continue
        depth = max(0.0, -float(contact.dist))
        depths[kind] = max(depths[kind], depth)
        name = model.geom(geoms[1]).name if kind == "obstacle" else ""
        pairs.append((model.body(bodies[0]).name, name or model.body(bodies[1]).name, depth))
    pairs.sort(key=lambda p: -p[2])
    return ContactReport(
        obstacle_contacts=counts["obstacle"],
        self_contacts=counts["self"],
        other_contacts=counts["other"],
        obstacle_depth=depths["obstacle"],
        self_depth=depths["self"],
        pairs=tuple(pairs),
    )
