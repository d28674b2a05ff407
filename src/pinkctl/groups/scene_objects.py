"""The objects of a kinematic scene: the robot's frames and joints, and dummies and joints added.

Every frame of the scene's model but the world is an object (the seed's object tree):

- the robot's own frames (links, fixed joints, operational frames) and joints, read-only:
  they are listed, typed, parented and posed like the others, but cannot be moved,
  re-parented or erased;
- dummies and joints added at run time (:meth:`SceneObjects.add_dummy`,
  :meth:`SceneObjects.add_joint`), which can.

An object's type is ``"joint"`` (a robot joint or a scene joint) or ``"dummy"`` (any other
frame). Its parent is the frame it hangs from (``"world"`` for the root of the tree): a
robot link's parent is the joint that moves it, a joint's parent the link before it.

Poses (:meth:`SceneObjects.pose`): an object's pose is its frame's, except that a joint's
excludes the joint's own motion (the seed's rule: ``pose(j) * joint_transform(j, q)`` is the
frame its children hang from, :meth:`~pinkctl.groups.scene_base.SceneBase.world_pose`). A pose
is relative to the world, to the object's parent, or to any frame (the frame its children
would hang from).

Each tip frame may have a *target* (:meth:`SceneObjects.set_target`, the seed's target dummy):
IK elements on that tip take it as theirs.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pinocchio as pin

from .._validation import choice, real_number
from ..errors import InputError
from .joint_models import joint_kind
from .objects import JOINT_KINDS, WORLD, Dummy, JointInterval, SceneJoint, check_pose
from .scene_base import SceneBase

__all__ = ["PARENT", "SceneObject", "SceneObjects"]

#: ``relative_to`` value meaning the object's parent (the seed's ``ik_handle_parent``).
PARENT = "parent"

#: Interval of a new scene joint: revolute ones are cyclic, prismatic ones span ±1 m.
_DEFAULT_PRISMATIC = JointInterval(cyclic=False, lower=-1.0, range=2.0)


class SceneObject(NamedTuple):
    """One object of the scene (:meth:`SceneObjects.objects`).

    Attributes:
        name: Its name (its handle).
        type: ``"joint"`` or ``"dummy"``.
        joint_type: For a joint, ``"revolute"``, ``"prismatic"``, ``"spherical"`` (or the
            Pinocchio kind of a robot joint the seed does not have); None for a dummy.
        parent: The frame it hangs from (``"world"``: none).
        added: Added at run time (it can be moved, re-parented and erased).
    """

    name: str
    type: str
    joint_type: str | None
    parent: str
    added: bool


class SceneObjects(SceneBase):
    """The object tree of a scene (see the module docstring)."""

    # ------------------------------------------------------------------ queries
    @property
    def dummies(self) -> list[str]:
        """Names of the dummies added, in creation order."""
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
            if self.exists(name):
                raise InputError(
                    f"{name!r} is not a dummy or joint added to the scene: the robot's own "
                    "frames and joints cannot be moved, re-parented or erased"
                )
            raise InputError(f"{name!r} is not a dummy or joint of the scene")
        return self._objects[name]

    def exists(self, name: Any) -> bool:
        """Whether ``name`` is an object: a frame or joint of the robot, a dummy or a scene
        joint (the world is not an object)."""
        return (
            isinstance(name, str)
            and name not in (WORLD, "universe")
            and bool(self._model.existFrame(name))
        )

    def _frame(self, name: str) -> Any:
        if not self.exists(name):
            raise InputError(f"{name!r} is not an object of the scene")
        return self._model.frames[self._model.getFrameId(name)]

    def object_type(self, name: str) -> str:
        """``"joint"`` or ``"dummy"`` (module docstring)."""
        return "joint" if self._frame(name).type == pin.FrameType.JOINT else "dummy"

    def parent(self, name: str) -> str:
        """The frame ``name`` hangs from (``"world"`` for a root)."""
        if name in self._objects:
            return self._objects[name].parent
        parent = self._frame(name).parentFrame
        return WORLD if parent == 0 else str(self._model.frames[parent].name)

    def objects(self) -> list[SceneObject]:
        """Every object, in the model's frame order (robot frames first)."""
        frames = list(self._model.frames)
        out = []
        for frame in frames[1:]:
            name = str(frame.name)
            joint = frame.type == pin.FrameType.JOINT
            kind = joint_kind(self._model.joints[frame.parentJoint]) if joint else None
            parent = WORLD if frame.parentFrame == 0 else str(frames[frame.parentFrame].name)
            added = name in self._objects
            out.append(SceneObject(name, "joint" if joint else "dummy", kind, parent, added))
        return out

    def placement(self, name: str) -> pin.SE3:
        """Pose of a dummy or scene joint relative to its parent (a copy)."""
        return pin.SE3(self.object(name).placement)

    def pose(self, name: str, relative_to: str = WORLD, *, q: Any = None) -> pin.SE3:
        """Pose of object ``name`` relative to the world (default), to its parent
        (``"parent"``) or to any frame, at ``q`` (needed when a frame involved moves).
        A joint's pose excludes its own motion (module docstring)."""
        frame = self._frame(name)
        if frame.type == pin.FrameType.JOINT:
            index = frame.parentJoint
            placement = self._model.jointPlacements[index]
            above = self._model.parents[index]
            world = (
                pin.SE3(placement) if above == 0 else self._joint_poses(q, name)[above] * placement
            )
        else:
            world = self.world_pose(name, q)
        if relative_to == WORLD:
            return world
        reference = self.parent(name) if relative_to == PARENT else relative_to
        return self._reference(reference, q).actInv(world)

    def _reference(self, name: Any, q: Any) -> pin.SE3:
        try:
            return self.world_pose(name, q)
        except InputError as exc:
            raise InputError(f"relative_to: {exc}") from exc

    # ------------------------------------------------------------------ targets
    def target(self, tip: str) -> str | None:
        """The target of frame ``tip`` (the seed's target dummy), or None."""
        self._check_tip(tip)
        return self._targets.get(tip)

    @property
    def targets(self) -> dict[str, str]:
        """Every tip and its target."""
        return dict(self._targets)

    def set_target(self, tip: str, target: str | None) -> None:
        """Make ``target`` the target of ``tip`` (None: remove the association); every IK
        element on that tip follows it."""
        self._check_tip(tip)
        if target is None:
            self._targets.pop(tip, None)
            return
        if target == tip or not (target == WORLD or self.exists(target)):
            raise InputError(f"target {target!r} is not a frame of the scene other than the tip")
        self._targets[tip] = target

    def _check_tip(self, tip: Any) -> None:
        if not self.exists(tip):
            raise InputError(f"tip {tip!r} is not a frame of the scene")

    # ------------------------------------------------------------------ edits
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

    def set_pose(self, name: str, pose: Any, relative_to: str = PARENT, *, q: Any = None) -> None:
        """Move a dummy or scene joint to ``pose`` relative to its parent (default), to the
        world (``"world"``) or to any frame (as :meth:`pose` reads it); ``q`` is needed when
        a frame involved moves with the joints."""
        obj = self.object(name)
        local = check_pose(pose, "pose")
        if relative_to != PARENT:
            self._check_not_carried(relative_to, name)
            reference = self._reference(relative_to, q)
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
            self._settings.pop(name, None)
        for child in children:
            child_obj = self._objects[child]
            child_obj.parent = obj.parent
            child_obj.placement = obj.placement * child_obj.placement
        self._targets.pop(name, None)
        del self._objects[name]
        self._rebuild()

    def _check_not_carried(self, reference: Any, name: str) -> None:
        """Refuse a reference frame that moves with ``name`` (itself or a descendant)."""
        ancestor = reference
        while isinstance(ancestor, str) and self.exists(ancestor):
            if ancestor == name:
                raise InputError(
                    f"relative_to: {reference!r} moves with {name!r}; place it relative to a "
                    "frame it does not carry"
                )
            ancestor = self.parent(ancestor)

    def _check_new_name(self, name: Any) -> None:
        if not isinstance(name, str) or not name or name in (WORLD, "universe", PARENT):
            raise InputError(
                f"name must be a non-empty string other than 'world' and 'parent', got {name!r}"
            )
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
