"""Whole-body tasks of an IK controller: several frames, the centre of mass, contacts, balance.

:class:`~pinkctl.controllers.PinkIKController` takes them as keyword arguments:

- ``frames``: frame tasks besides the tool frame's, each with its own costs: a list of frame
  names (the controller's ``position_cost`` / ``orientation_cost``) or a dict ``{name: costs}``
  whose values are :class:`FrameCosts`, dicts of its fields, or None (the controller's costs).
  Each frame must be a site of ``robot_site_space``: its target is read from the setpoint's
  site pose of that name (held at reset, kept while the setpoint lacks it). Naming the tool
  frame there gives the tool-frame task those costs.
- ``com_cost``: a centre-of-mass task (pink's ``ComTask``) with this cost [cost]/[m]; its
  target is the position of the setpoint's site :data:`COM_SITE` (``"com"``), held at the
  reset's CoM while the setpoint has none.
- ``contacts``: frames held where they were at reset (the feet of a standing humanoid), as
  rows of the QP (:class:`~pinkctl.qp.contact_rows.ContactLimit`); with ``priority_levels``
  the entry ``"contacts"`` makes them a level of tasks instead (the highest, usually).
- ``support_margin``: with contacts, the CoM's horizontal position is kept inside their support
  polygon, shrunk by this margin [m] (:class:`~pinkctl.qp.contact_rows.SupportPolygonLimit`);
  None: no such rows. The polygon is the convex hull of every contact's ``sole`` rectangle
  ``(x_min, x_max, y_min, y_max)`` [m] in its frame, projected on the floor at reset.

Priority levels name these tasks ``"com"``, ``"contacts"`` and each frame by its name, besides
``"frame"`` and ``"posture"`` (:mod:`pinkctl.controllers.priority_levels`): for a humanoid,
``[["contacts"], ["com"], ["frame", "right_hand"], ["posture"]]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin
from pink import Configuration
from pink.limits import Limit
from pink.tasks import ComTask, FrameTask, Task

from .._validation import name_list, real_array, real_number
from ..core.poses import SitePoseReader
from ..core.robot import PinkRobot
from ..core.state import SpatialState
from ..errors import InputError
from ..qp.contact_rows import ContactLimit, SupportPolygonLimit, convex_hull
from ._arguments import check_cost
from .frame_target import FrameTarget

__all__ = ["COM_SITE", "DEFAULT_SOLE", "FrameCosts", "WholeBody", "WholeBodyTargets"]

#: Name of the setpoint site whose position is the CoM target.
COM_SITE = "com"
#: Default sole rectangle ``(x_min, x_max, y_min, y_max)`` [m] in a contact frame: small
#: enough to lie under the foot of the catalog's humanoids (a conservative polygon).
DEFAULT_SOLE = (-0.05, 0.05, -0.025, 0.025)


@dataclass(frozen=True)
class FrameCosts:
    """Costs of one frame task.

    Attributes:
        position_cost: [cost]/[m], scalar or per axis of the frame.
        orientation_cost: [cost]/[rad], scalar or per axis.
    """

    position_cost: float | Sequence[float] | np.ndarray = 1.0
    orientation_cost: float | Sequence[float] | np.ndarray = 1.0


def _frame_costs(frames: Any, default: FrameCosts) -> dict[str, FrameCosts]:
    """The ``frames`` argument as costs by frame name."""
    if frames is None:
        return {}
    if not isinstance(frames, Mapping):
        return dict.fromkeys(name_list(frames, "frames"), default)
    costs: dict[str, FrameCosts] = {}
    for name, value in frames.items():
        if not isinstance(name, str):
            raise InputError(f"frames: keys must be frame names, got {name!r}")
        if value is None:
            value = default
        elif isinstance(value, Mapping):
            unknown = set(value) - {"position_cost", "orientation_cost"}
            if unknown:
                raise InputError(f"frames[{name!r}]: unknown costs {sorted(unknown)}")
            value = FrameCosts(**{**default.__dict__, **value})
        elif not isinstance(value, FrameCosts):
            raise InputError(f"frames[{name!r}] must be FrameCosts, a dict or None, got {value!r}")
        costs[name] = value
    return costs


def _frame_tasks(
    model: pin.Model,
    tool_frame: str,
    site_space: Sequence[str],
    costs: Mapping[str, FrameCosts],
    gain: float,
) -> tuple[dict[str, FrameTask], FrameCosts | None]:
    """The frame tasks by name (the tool frame's excepted) and the tool frame's costs."""
    tasks: dict[str, FrameTask] = {}
    tool_costs = None
    for name, cost in costs.items():
        if not model.existFrame(name) or name not in site_space:
            raise InputError(f"frames: {name!r} is not a frame of the model in the site space")
        position = check_cost(cost.position_cost, f"frames[{name!r}].position_cost")
        orientation = check_cost(cost.orientation_cost, f"frames[{name!r}].orientation_cost")
        if name == tool_frame:
            tool_costs = FrameCosts(position, orientation)
        else:
            tasks[name] = FrameTask(name, position, orientation, gain=gain)
    return tasks, tool_costs


def _contact_rows(
    model: pin.Model, options: Mapping[str, Any]
) -> tuple[ContactLimit | None, SupportPolygonLimit | None]:
    """The contact rows of ``options["contacts"]`` and the support rows of its
    ``support_margin`` (None: not asked)."""
    contacts = name_list(options.get("contacts") or [], "contacts")
    unknown = [c for c in contacts if not model.existFrame(c)]
    if unknown:
        raise InputError(f"contacts: {unknown} are not frames of the model")
    if not contacts:
        return None, None
    margin = options.get("support_margin")
    if margin is None:
        return ContactLimit(contacts), None
    return ContactLimit(contacts), SupportPolygonLimit(
        model, real_number(margin, "support_margin", low=0.0)
    )


def _sole(value: Any) -> np.ndarray:
    """The ``sole`` argument checked: ``(x_min, x_max, y_min, y_max)`` [m]."""
    sole = real_array(value, "sole", shape=(4,))
    if sole[0] >= sole[1] or sole[2] >= sole[3]:
        raise InputError(f"sole must be (x_min, x_max, y_min, y_max), got {tuple(sole)}")
    return sole


class WholeBody:
    """The whole-body tasks and rows of a controller (module docstring).

    Args:
        robot: The robot.
        tool_frame: The controller's tool frame.
        site_space: The controller's site space (every frame of ``frames`` is in it).
        options: The controller's ``frames``, ``com_cost``, ``contacts``, ``support_margin``
            and ``sole`` arguments, and its default ``position_cost`` / ``orientation_cost``.
        gain: Gain of the frame and CoM tasks.

    Attributes:
        frames: The frame tasks by name (the tool frame's excepted).
        tool_costs: Costs given to the tool frame in ``frames``, or None.
        com: The CoM task, or None.
        contacts: The contact rows, or None.
        support: The support-polygon rows, or None.

    Raises:
        InputError: An unknown frame, a frame outside the site space, a bad cost or sole.
    """

    def __init__(
        self,
        robot: PinkRobot,
        tool_frame: str,
        site_space: Sequence[str],
        options: Mapping[str, Any],
        *,
        gain: float,
    ) -> None:
        model = robot.model
        default = FrameCosts(options["position_cost"], options["orientation_cost"])
        costs = _frame_costs(options.get("frames"), default)
        self.frames, self.tool_costs = _frame_tasks(model, tool_frame, site_space, costs, gain)
        self._targets = [FrameTarget(task) for task in self.frames.values()]
        com_cost = check_cost(options.get("com_cost"), "com_cost")
        self.com = ComTask(com_cost, gain=gain) if np.any(com_cost) else None
        self._com_reader = SitePoseReader(COM_SITE)
        self.contacts, self.support = _contact_rows(model, options)
        self.sole = _sole(options.get("sole", DEFAULT_SOLE))
        self.contacts_as_tasks = False

    @property
    def tasks(self) -> tuple[Task, ...]:
        """Frame tasks, the CoM task, and the contacts' when they are a priority level."""
        com = () if self.com is None else (self.com,)
        contacts = self.contacts.tasks if self.contacts and self.contacts_as_tasks else ()
        return (*self.frames.values(), *com, *contacts)

    @property
    def limits(self) -> tuple[Limit, ...]:
        """The contact rows (unless they are a priority level) and the support rows."""
        rows: list[Limit] = []
        if self.contacts is not None and not self.contacts_as_tasks:
            rows.append(self.contacts)
        if self.support is not None:
            rows.append(self.support)
        return tuple(rows)

    def named(self) -> dict[str, tuple[Task, ...]]:
        """The tasks a priority level can name: each frame, ``"com"``, ``"contacts"``."""
        named: dict[str, tuple[Task, ...]] = {n: (t,) for n, t in self.frames.items()}
        if self.com is not None:
            named["com"] = (self.com,)
        if self.contacts is not None:
            named["contacts"] = self.contacts.tasks
        return named

    def reset(self, configuration: Configuration) -> None:
        """Targets where the robot is: frames, CoM, contacts; the support polygon."""
        for task in self.frames.values():
            task.set_target(configuration.get_transform_frame_to_world(task.frame))
        if self.com is not None:
            self.com.set_target_from_configuration(configuration)
        if self.contacts is not None:
            self.contacts.hold(configuration)
            if self.support is not None:
                self.support.set_polygon(self.support_polygon(self.contacts.poses()))

    def support_polygon(self, poses: Sequence[pin.SE3]) -> np.ndarray:
        """Counter-clockwise vertices (k, 2) of the convex hull of the soles at ``poses``."""
        x0, x1, y0, y1 = self.sole
        corners = np.array([[x0, y0, 0.0], [x1, y0, 0.0], [x1, y1, 0.0], [x0, y1, 0.0]])
        points = [pose.translation[:2] + (corners @ pose.rotation.T)[:, :2] for pose in poses]
        return convex_hull(np.vstack(points))

    @property
    def reads_nothing(self) -> bool:
        """Whether no target comes from the setpoint (no frame, no CoM task)."""
        return not self._targets and self.com is None

    def read(self, sites: SpatialState) -> str | None:
        """Frame and CoM targets from the setpoint's sites; why a target was refused, or None."""
        for target in self._targets:
            refused = target.read(sites)
            if refused is not None:
                return refused
        if self.com is not None:
            pose = self._com_reader.pose(sites, None)
            if pose is not None:
                self.com.set_target(pose.translation)
        return None


class WholeBodyTargets:
    """The targets a controller reads from a setpoint: the tool frame's, then the whole-body
    ones (what :class:`~pinkctl.controllers.frame_target.FrameTarget` does for one frame).

    Args:
        tool: The tool frame's target.
        whole_body: The whole-body tasks.
    """

    def __init__(self, tool: FrameTarget, whole_body: WholeBody) -> None:
        self.tool = tool
        self.whole_body = whole_body

    def read(self, sites: SpatialState) -> str | None:
        """Set every target found in ``sites``; why one was refused, or None."""
        return self.tool.read(sites) or self.whole_body.read(sites)
