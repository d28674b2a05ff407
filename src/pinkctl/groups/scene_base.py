"""The core of a kinematic scene: its Pinocchio model and the names that address it.

The scene owns a Pinocchio model: a copy of the robot's (an empty model, only the world,
without a robot), its revolute joints given a screw lead made helical, every scene joint
appended (in an order where parents come first) and every dummy added as an operational
frame. Structural edits (adding, re-parenting or removing an object, a new screw lead) rebuild
that model and increment ``revision``, which IK groups watch to resolve their frame names
again; moving an object updates the model's placements in place.

Configurations ``q`` of the scene are the robot's coordinates first (unchanged), then the
scene joints' (an edit that adds or removes a scene joint changes ``model.nq``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pinocchio as pin

from .._validation import real_array
from ..core.robot import PinkRobot
from ..errors import InputError
from .joint_models import helical_model
from .joint_settings import JointSettings
from .objects import WORLD, Dummy, JointDependency, JointInterval, SceneJoint

__all__ = ["SceneBase"]


class SceneBase:
    """The model of a scene and its name lookups (see the module docstring).

    Args:
        robot: The robot (its model is copied; the robot is not modified), or None for an
            empty scene: only the world, to which dummies and joints are added.
    """

    def __init__(self, robot: PinkRobot | None = None) -> None:
        if robot is not None and not isinstance(robot, PinkRobot):
            raise InputError(f"robot must be a PinkRobot or None, got {type(robot).__name__}")
        self.robot = robot
        self._objects: dict[str, Dummy | SceneJoint] = {}
        self._intervals: dict[str, JointInterval] = {}
        self._dependencies: dict[str, JointDependency] = {}
        self._settings: dict[str, JointSettings] = {}
        self._leads: dict[str, float] = {}  # robot joints made helical: lead [m/turn]
        self._targets: dict[str, str] = {}  # tip frame -> target frame
        self._order: list[str] = []
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
    def robot_nq(self) -> int:
        """Number of the robot's coordinates (0 without a robot): they come first in ``q``."""
        return 0 if self.robot is None else int(self.robot.model.nq)

    def neutral(self) -> np.ndarray:
        """The robot's home configuration, scene joints at zero (identity for a ball)."""
        q = pin.neutral(self._model)
        if self.robot is not None:
            q[: self.robot_nq] = self.robot.q0
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

    def is_joint(self, name: str) -> bool:
        """Whether ``name`` is a joint of the scene (robot joint or scene joint)."""
        return isinstance(name, str) and name != "universe" and self._model.existJointName(name)

    def check_configuration(self, q: Any, name: str = "q") -> np.ndarray:
        """``q`` as a new float64 array of shape ``(model.nq,)``: finite real numbers (no
        strings, booleans or complex numbers, nothing reshaped)."""
        return real_array(q, name, (self._model.nq,))

    def world_pose(self, name: str, q: Any = None) -> pin.SE3:
        """Pose of frame ``name`` in the world at ``q`` (``q`` may be None for a frame that no
        joint moves). A joint's frame moves with the joint (its children's frame)."""
        frame = self._model.frames[self.frame_id(name)]
        if frame.parentJoint == 0:
            return pin.SE3(frame.placement)
        return self._joint_poses(q, name)[frame.parentJoint] * frame.placement

    def _joint_poses(self, q: Any, name: str) -> Any:
        """``data.oMi`` at ``q`` (``name``: the frame that needs it, for the message)."""
        if q is None:
            raise InputError(f"q is needed: {name!r} moves with the joints")
        pin.forwardKinematics(self._model, self._data, self.check_configuration(q))
        return self._data.oMi

    # ------------------------------------------------------------------ internals
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

    def _base_model(self) -> pin.Model:
        """A copy of the robot's model (empty without a robot), screw leads applied."""
        if self.robot is None:
            return pin.Model()
        model = pin.Model(self.robot.model)
        for name, lead in self._leads.items():
            index = model.getJointId(name)
            model.joints[index] = helical_model(model.joints[index], lead)
        return model

    def _rebuild(self) -> None:
        model = self._base_model()
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
