"""The joints of a kinematic scene: types, intervals, dependencies, screw leads, IK settings,
positions and intrinsic transformations, for the robot's joints and scene joints alike.

- intervals (:class:`~pinkctl.groups.objects.JointInterval`) are written into the model's
  position limits; dependencies (:class:`~pinkctl.groups.objects.JointDependency`) make a
  joint follow another one;
- a screw lead makes a one-coordinate revolute joint helical (robot joints too: the scene's
  model gets Pinocchio's helical joint about the same axis);
- IK settings (:class:`~pinkctl.groups.joint_settings.JointSettings`: mode, weight, limit
  margin, max step) belong to the joint, as in the seed, and every group uses them unless it
  overrides a field for itself (:meth:`pinkctl.groups.IKGroup.set_joint`);
- positions live in configurations ``q`` (explicit, never stored): :meth:`SceneJoints.
  set_joint_position` and :meth:`SceneJoints.set_spherical_joint` return a new ``q``;
  :meth:`SceneJoints.joint_transform` is a joint's own motion at ``q`` (the seed's intrinsic
  transformation).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pinocchio as pin

from .._validation import callable_or_none, real_array, real_number
from ..errors import InputError
from .joint_models import joint_kind, screwable
from .joint_settings import JointSettings
from .objects import JointDependency, JointInterval, SceneJoint, check_rotation
from .scene_base import SceneBase

__all__ = ["SceneJoints"]


class SceneJoints(SceneBase):
    """Joint properties of a scene (see the module docstring)."""

    def joint_type(self, name: str) -> str:
        """``"revolute"``, ``"prismatic"``, ``"spherical"``, or the kind of a robot joint the
        seed does not have (:func:`~pinkctl.groups.joint_models.joint_kind`)."""
        return joint_kind(self._model.joints[self.joint_id(name)])

    # ------------------------------------------------------------------ intervals
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
        if interval.cyclic and joint_kind(jmodel) != "revolute":
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

    # ------------------------------------------------------------------ dependencies
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

    # ------------------------------------------------------------------ screw leads
    def screw_lead(self, name: str) -> float:
        """Screw lead [m/turn] of a joint (0: a plain revolute joint, or not revolute)."""
        obj = self._objects.get(name)
        if isinstance(obj, SceneJoint):
            return obj.screw_lead
        self.joint_id(name)
        return self._leads.get(name, 0.0)

    @property
    def screw_leads(self) -> dict[str, float]:
        """The robot joints given a screw lead (scene joints keep theirs in their object)."""
        return dict(self._leads)

    def set_screw_lead(self, name: str, lead: float) -> None:
        """Make a one-coordinate revolute joint helical: ``lead`` metres per turn along its
        axis (0: plain revolute again). Robot joints and scene joints alike."""
        value = real_number(lead, "lead")
        obj = self._objects.get(name)
        if isinstance(obj, SceneJoint):
            if obj.kind != "revolute":
                raise InputError(f"lead: joint {name!r} is {obj.kind}, not revolute")
            obj.screw_lead = value
        else:
            index = self.joint_id(name)
            assert self.robot is not None  # a joint that is not a scene joint is the robot's
            original = self.robot.model.joints[index]
            if not screwable(original):
                raise InputError(
                    f"lead: joint {name!r} ({original.shortname()}) is not a one-coordinate "
                    "revolute joint"
                )
            if value == 0.0:
                self._leads.pop(name, None)
            else:
                self._leads[name] = value
        self._rebuild()

    # ------------------------------------------------------------------ IK settings
    def joint_settings(self, name: str) -> JointSettings:
        """The IK settings of joint ``name`` (mode, weight, limit margin, max step) that every
        group uses unless it overrides them (defaults when never set)."""
        self.joint_id(name)
        return self._settings.get(name, JointSettings())

    def set_joint_settings(self, name: str, **changes: Any) -> JointSettings:
        """Change fields of a joint's IK settings (``mode``, ``weight``, ``limit_margin``,
        ``max_step``) for every group; returns the new settings."""
        try:
            settings = dataclasses.replace(self.joint_settings(name), **changes)
        except TypeError as exc:
            raise InputError(f"set_joint_settings: {exc}") from exc
        self._settings[name] = settings
        return settings

    @property
    def settings(self) -> dict[str, JointSettings]:
        """The joints whose IK settings were set, and their settings."""
        return dict(self._settings)

    # ------------------------------------------------------------------ positions
    def joint_position(self, name: str, q: Any) -> float:
        """The position [rad or m] of a one-coordinate joint in ``q``."""
        jmodel = self._check_scalar_joint(name)
        return float(self.check_configuration(q)[jmodel.idx_q])

    def set_joint_position(self, name: str, value: float, q: Any) -> np.ndarray:
        """A copy of ``q`` with the one-coordinate joint ``name`` at ``value`` [rad or m],
        clamped into its interval (dependent joints follow at the next solve, or
        :meth:`apply_dependencies`)."""
        jmodel = self._check_scalar_joint(name)
        position = real_number(value, "value")
        out = self.check_configuration(q)
        lower, upper = self.limits(name)
        out[jmodel.idx_q] = min(max(position, lower), upper)
        return out

    def set_spherical_joint(self, name: str, rotation: Any, q: Any) -> np.ndarray:
        """A copy of ``q`` with the spherical joint ``name`` at ``rotation``: a 3 x 3 rotation
        matrix, a unit quaternion (w, x, y, z) or a ``pin.Quaternion``."""
        index = self.joint_id(name)
        jmodel = self._model.joints[index]
        if jmodel.shortname() != "JointModelSpherical":
            raise InputError(f"joint {name!r} is not a spherical joint (a ball of 4 coordinates)")
        out = self.check_configuration(q)
        out[jmodel.idx_q : jmodel.idx_q + 4] = _quaternion(rotation).coeffs()
        return out

    def joint_transform(self, name: str, q: Any) -> pin.SE3:
        """The joint's own motion at ``q`` (the seed's intrinsic transformation): a rotation
        about (a translation along) its axis, a ball's rotation; ``pose(j) * joint_transform(j,
        q)`` is the frame the joint's children hang from. ``.homogeneous`` is its matrix."""
        index = self.joint_id(name)
        pin.forwardKinematics(self._model, self._data, self.check_configuration(q))
        return self._model.jointPlacements[index].actInv(self._data.liMi[index])


def _quaternion(rotation: Any) -> pin.Quaternion:
    """``rotation`` (module docstring of :meth:`SceneJoints.set_spherical_joint`) as a unit
    ``pin.Quaternion``."""
    if isinstance(rotation, pin.Quaternion):
        rotation = np.array([rotation.w, rotation.x, rotation.y, rotation.z])
    shape = np.shape(rotation)
    if shape == (3, 3):
        return pin.Quaternion(check_rotation(real_array(rotation, "rotation", (3, 3)), "rotation"))
    if shape != (4,):
        raise InputError(
            f"rotation must be a 3x3 rotation matrix or a quaternion (w, x, y, z), got {rotation!r}"
        )
    w, x, y, z = real_array(rotation, "rotation", (4,))
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if norm == 0.0:
        raise InputError("rotation: the quaternion (w, x, y, z) must not be zero")
    return pin.Quaternion(w / norm, x / norm, y / norm, z / norm)
