"""KinematicScene: a loaded robot plus frames and joints added, moved and removed at run time.

The scene owns a Pinocchio model: a copy of the robot's, with every scene joint appended (in
an order where parents come first) and every dummy added as an operational frame. Structural
edits (adding, re-parenting or removing an object, a new screw lead) rebuild that model and
increment :attr:`KinematicScene.revision`, which IK groups watch to resolve their frame names
again; moving an object updates the model's placements in place.

Configurations ``q`` of the scene are the robot's coordinates first (unchanged), then the
scene joints' (an edit that adds or removes a scene joint changes ``model.nq``).
:meth:`KinematicScene.neutral` is the robot's home configuration with the scene joints at zero.

Joint intervals and dependencies (:mod:`pinkctl.groups.objects`) apply to robot joints and
scene joints alike; intervals are written into the model's position limits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pinocchio as pin

from .._validation import callable_or_none, choice, real_array, real_number
from ..core.robot import PinkRobot
from ..errors import InputError
from .objects import (
    JOINT_KINDS,
    WORLD,
    Dummy,
    JointDependency,
    JointInterval,
    SceneJoint,
    check_pose,
)

__all__ = ["KinematicScene"]

#: Interval of a new scene joint: revolute ones are cyclic, prismatic ones span ±1 m.
_DEFAULT_PRISMATIC = JointInterval(cyclic=False, lower=-1.0, range=2.0)


class KinematicScene:
    """A robot and the dummies and joints added to it (see the module docstring).

    Args:
        robot: The robot (its model is copied; the robot is not modified).
    """

    def __init__(self, robot: PinkRobot) -> None:
        if not isinstance(robot, PinkRobot):
            raise InputError(f"robot must be a PinkRobot, got {type(robot).__name__}")
        self.robot = robot
        self._objects: dict[str, Dummy | SceneJoint] = {}
        self._intervals: dict[str, JointInterval] = {}
        self._dependencies: dict[str, JointDependency] = {}
        #: Incremented by every structural edit (the model is then a new one).
        self.revision = 0
        self._rebuild()

    # ------------------------------------------------------------------ the model
    @property
    def model(self) -> pin.Model:
        """The scene's Pinocchio model (replaced by structural edits)."""
        return self._model

    @property
    def data(self) -> pin.Data:
        """Data of :attr:`model`."""
        return self._data

    @property
    def dummies(self) -> list[str]:
        """Names of the dummies, in creation order."""
        return [name for name, obj in self._objects.items() if isinstance(obj, Dummy)]

    @property
    def scene_joints(self) -> list[str]:
        """Names of the joints created at run time, in creation order."""
        return [name for name, obj in self._objects.items() if isinstance(obj, SceneJoint)]

    @property
    def build_order(self) -> list[str]:
        """Dummies and scene joints in the order the model adds them (parents first)."""
        return list(self._order)

    def object(self, name: str) -> Dummy | SceneJoint:
        """The dummy or scene joint ``name`` (read it; edit through the scene's methods)."""
        if name not in self._objects:
            raise InputError(f"{name!r} is not a dummy or joint of the scene")
        return self._objects[name]

    def neutral(self) -> np.ndarray:
        """The robot's home configuration, scene joints at zero (identity for a ball)."""
        q = pin.neutral(self._model)
        q[: self.robot.model.nq] = self.robot.q0
        return q

    def frame_id(self, name: str) -> int:
        """Index in :attr:`model` of the frame ``name`` (``"world"`` is frame 0)."""
        if name == WORLD:
            return 0
        if not isinstance(name, str) or not self._model.existFrame(name):
            raise InputError(f"{name!r} is not a frame of the scene")
        return int(self._model.getFrameId(name))

    def joint_id(self, name: str) -> int:
        """Index in :attr:`model` of the joint ``name``."""
        if not isinstance(name, str) or name == "universe" or not self._model.existJointName(name):
            raise InputError(f"{name!r} is not a joint of the scene")
        return int(self._model.getJointId(name))

    def check_configuration(self, q: Any, name: str = "q") -> np.ndarray:
        """``q`` as a new float64 array of shape ``(model.nq,)``: finite real numbers (no
        strings, booleans or complex numbers, nothing reshaped)."""
        return real_array(q, name, (self._model.nq,))

    def world_pose(self, name: str, q: Any = None) -> pin.SE3:
        """Pose of frame ``name`` in the world at ``q`` (``q`` may be None for a frame that no
        joint moves)."""
        frame = self._model.frames[self.frame_id(name)]
        if frame.parentJoint == 0:
            return pin.SE3(frame.placement)
        if q is None:
            raise InputError(f"q is needed: {name!r} moves with the joints")
        pin.forwardKinematics(self._model, self._data, self.check_configuration(q))
        return self._data.oMi[frame.parentJoint] * frame.placement

    # ------------------------------------------------------------------ objects
    def add_dummy(self, name: str, *, parent: str = WORLD, pose: Any = None) -> None:
        """Add a dummy attached to ``parent`` at ``pose`` (relative to it; identity: None)."""
        self._check_new_name(name)
        placement = pin.SE3.Identity() if pose is None else check_pose(pose, "pose")
        self._objects[name] = Dummy(parent=self._check_parent(parent), placement=placement)
        self._rebuild()

    def add_joint(
        self,
        name: str,
        kind: str = "revolute",
        *,
        parent: str = WORLD,
        pose: Any = None,
        screw_lead: float = 0.0,
    ) -> None:
        """Add a joint about (along) the z axis of its frame, placed at ``pose`` relative to
        ``parent``. Revolute joints start cyclic, prismatic ones with the interval [-1, 1] m.
        """
        self._check_new_name(name)
        choice(kind, "kind", JOINT_KINDS)
        lead = real_number(screw_lead, "screw_lead")
        if lead != 0.0 and kind != "revolute":
            raise InputError(f"screw_lead: only a revolute joint has one, got a {kind} joint")
        placement = pin.SE3.Identity() if pose is None else check_pose(pose, "pose")
        joint = SceneJoint(kind, self._check_parent(parent), placement, lead)
        self._objects[name] = joint
        if kind != "spherical":
            self._intervals[name] = (
                JointInterval(cyclic=True) if kind == "revolute" else _DEFAULT_PRISMATIC
            )
        self._rebuild()

    def placement(self, name: str) -> pin.SE3:
        """Pose of a dummy or scene joint relative to its parent (a copy)."""
        return pin.SE3(self.object(name).placement)

    def parent(self, name: str) -> str:
        """Parent frame of a dummy or scene joint."""
        return self.object(name).parent

    def set_pose(self, name: str, pose: Any, *, relative_to: str = "parent", q: Any = None) -> None:
        """Move a dummy or scene joint to ``pose`` relative to its parent (default), to the
        world (``"world"``) or to any frame; ``q`` is needed when a frame involved moves with
        the joints."""
        obj = self.object(name)
        local = check_pose(pose, "pose")
        if relative_to != "parent":
            reference = self.world_pose(relative_to, q)
            local = self.world_pose(obj.parent, q).actInv(reference * local)
        obj.placement = local
        self._sync_placements()

    def set_parent(
        self, name: str, parent: str, *, keep_in_place: bool = True, q: Any = None
    ) -> None:
        """Attach a dummy or scene joint to ``parent``, keeping its world pose at ``q``
        (default) or its placement relative to the parent (``keep_in_place=False``)."""
        obj = self.object(name)
        new_parent = self._check_parent(parent, child=name)
        if keep_in_place:
            world = self.world_pose(obj.parent, q) * obj.placement
            placement = self.world_pose(new_parent, q).actInv(world)
            obj.placement = placement
        obj.parent = new_parent
        self._rebuild()

    def remove(self, name: str) -> None:
        """Erase a dummy (its children move to its parent, rigidly in place) or a scene joint
        (which must have no children and no dependent joint)."""
        obj = self.object(name)
        children = [child for child, o in self._objects.items() if o.parent == name]
        followers = [j for j, d in self._dependencies.items() if d.master == name]
        if isinstance(obj, SceneJoint):
            if children or followers:
                raise InputError(
                    f"joint {name!r} carries {children + followers}: remove or re-attach them first"
                )
            self._intervals.pop(name, None)
            self._dependencies.pop(name, None)
        for child in children:
            child_obj = self._objects[child]
            child_obj.parent = obj.parent
            child_obj.placement = obj.placement * child_obj.placement
        del self._objects[name]
        self._rebuild()

    # ------------------------------------------------------------------ joints
    def joint_interval(self, name: str) -> JointInterval:
        """The interval of a one-coordinate joint (its override, else the model's limits)."""
        self._check_scalar_joint(name)
        if name in self._intervals:
            return self._intervals[name]
        jmodel = self._model.joints[self.joint_id(name)]
        lower = float(self._model.lowerPositionLimit[jmodel.idx_q])
        upper = float(self._model.upperPositionLimit[jmodel.idx_q])
        if not (math.isfinite(lower) and math.isfinite(upper)) or max(-lower, upper) > 1e10:
            return JointInterval(cyclic=True)
        return JointInterval(cyclic=False, lower=lower, range=upper - lower)

    def set_joint_interval(
        self, name: str, *, cyclic: bool = False, lower: Any = None, range: Any = None
    ) -> None:
        """Set a one-coordinate joint's interval: cyclic (rotational joints only) or
        ``[lower, lower + range]`` [rad or m]."""
        jmodel = self._check_scalar_joint(name)
        interval = JointInterval.make(cyclic, lower, range, name)
        if interval.cyclic and not jmodel.shortname().startswith(("JointModelR", "JointModelH")):
            raise InputError(f"cyclic: joint {name!r} is not rotational")
        self._intervals[name] = interval
        self._write_interval(self._model, name, interval)

    @property
    def intervals(self) -> dict[str, JointInterval]:
        """The intervals set on the scene (robot joints without one keep their limits)."""
        return dict(self._intervals)

    def limits(self, name: str) -> tuple[float, float]:
        """``(lower, upper)`` of a one-coordinate joint, ``(-inf, inf)`` when cyclic."""
        interval = self.joint_interval(name)
        return (-math.inf, math.inf) if interval.cyclic else (interval.lower, interval.upper)

    def joint_dependency(self, name: str) -> JointDependency | None:
        """The law joint ``name`` follows, or None."""
        self._check_scalar_joint(name)
        return self._dependencies.get(name)

    @property
    def dependencies(self) -> dict[str, JointDependency]:
        """Every dependent joint and its law."""
        return dict(self._dependencies)

    def set_joint_dependency(
        self,
        name: str,
        master: str | None,
        *,
        offset: float = 0.0,
        mult: float = 1.0,
        callback: Callable[[float], float] | None = None,
    ) -> None:
        """Make joint ``name`` follow ``master`` (``offset + mult * q_master``, or
        ``callback(q_master)``); ``master=None`` frees it."""
        self._check_scalar_joint(name)
        if master is None:
            self._dependencies.pop(name, None)
            return
        self._check_scalar_joint(master)
        if master == name or master in self._dependencies:
            raise InputError(f"master: {master!r} cannot lead {name!r} (itself or a dependent)")
        if any(d.master == name for d in self._dependencies.values()):
            raise InputError(f"{name!r} leads other joints and cannot depend on one")
        self._dependencies[name] = JointDependency(
            master=master,
            offset=real_number(offset, "offset"),
            mult=real_number(mult, "mult"),
            callback=callable_or_none(callback, "callback"),
        )

    def apply_dependencies(self, q: np.ndarray) -> np.ndarray:
        """Set the dependent joints of ``q`` (in place) from their masters; returns ``q``.

        Raises:
            ValueError: A dependency callback raised or returned no real number
                (:class:`~pinkctl.errors.InputError`), or a law gave NaN or an infinite value
                (:class:`~pinkctl.groups.objects.NonFiniteDependency`); ``q`` is then left
                as it was.
        """
        joints = self._model.joints
        values = {}
        for name, law in self._dependencies.items():
            master = joints[self.joint_id(law.master)].idx_q
            values[joints[self.joint_id(name)].idx_q] = law.value(float(q[master]), name)
        for index, value in values.items():
            q[index] = value
        return q

    def screw_lead(self, name: str) -> float:
        """Screw lead [m/turn] of a joint (0 for every robot joint and plain revolute)."""
        obj = self._objects.get(name)
        if isinstance(obj, SceneJoint):
            return obj.screw_lead
        self.joint_id(name)
        return 0.0

    def set_screw_lead(self, name: str, lead: float) -> None:
        """Make a revolute scene joint helical (``lead`` metres per turn along z; 0: plain)."""
        obj = self._objects.get(name)
        if not isinstance(obj, SceneJoint) or obj.kind != "revolute":
            raise InputError(f"{name!r} is not a revolute joint created in the scene")
        obj.screw_lead = real_number(lead, "lead")
        self._rebuild()

    # ------------------------------------------------------------------ internals
    def _check_new_name(self, name: Any) -> None:
        if not isinstance(name, str) or not name or name in (WORLD, "universe"):
            raise InputError(f"name must be a non-empty string other than 'world', got {name!r}")
        if name in self._objects or self._model.existFrame(name):
            raise InputError(f"name {name!r} is already a frame of the scene")

    def _check_parent(self, parent: Any, child: str | None = None) -> str:
        if parent != WORLD and (not isinstance(parent, str) or not self._model.existFrame(parent)):
            raise InputError(f"parent {parent!r} is not a frame of the scene")
        ancestor = parent
        while ancestor in self._objects:
            if ancestor == child:
                raise InputError(f"parent: {parent!r} is attached to {child!r} (a cycle)")
            ancestor = self._objects[ancestor].parent
        return str(parent)

    def _check_scalar_joint(self, name: str) -> Any:
        jmodel = self._model.joints[self.joint_id(name)]
        if jmodel.nq != 1 or jmodel.nv != 1:
            raise InputError(f"joint {name!r} does not have one coordinate (q and v of size 1)")
        return jmodel

    def _write_interval(self, model: pin.Model, name: str, interval: JointInterval) -> None:
        index = model.joints[model.getJointId(name)].idx_q
        lower, upper = (
            (-math.inf, math.inf) if interval.cyclic else (interval.lower, interval.upper)
        )
        model.lowerPositionLimit[index] = lower
        model.upperPositionLimit[index] = upper

    def _placed(self, model: pin.Model, obj: Dummy | SceneJoint) -> tuple[int, pin.SE3]:
        """Parent joint of ``obj`` and its placement relative to that joint."""
        parent = model.frames[0 if obj.parent == WORLD else model.getFrameId(obj.parent)]
        return parent.parentJoint, parent.placement * obj.placement

    def _rebuild(self) -> None:
        model = pin.Model(self.robot.model)
        order: list[str] = []
        pending = list(self._objects)
        while pending:  # parents first (set_parent refuses cycles)
            ready = [n for n in pending if self._objects[n].parent not in pending]
            for name in ready:
                obj = self._objects[name]
                parent_frame = 0 if obj.parent == WORLD else model.getFrameId(obj.parent)
                joint, placement = self._placed(model, obj)
                if isinstance(obj, SceneJoint):
                    index = model.addJoint(joint, obj.joint_model(), placement, name)
                    model.addJointFrame(index, parent_frame)
                else:
                    model.addFrame(
                        pin.Frame(name, joint, parent_frame, placement, pin.FrameType.OP_FRAME)
                    )
                pending.remove(name)
                order.append(name)
        for name, interval in self._intervals.items():
            self._write_interval(model, name, interval)
        self._order = order
        self._model = model
        self._data = model.createData()
        self.revision += 1

    def _sync_placements(self) -> None:
        """Write the objects' placements into the model (parents first)."""
        model = self._model
        for name in self._order:
            obj = self._objects[name]
            _, placement = self._placed(model, obj)
            if isinstance(obj, SceneJoint):
                model.jointPlacements[model.getJointId(name)] = placement
            else:
                model.frames[model.getFrameId(name)].placement = placement
