"""The named joint coordinates of a MuJoCo model: scalar joints, and ball joints as three.

A simulation's joint space (``MujocoSimulation.joint_names``) lists every named hinge and
slide joint, and every named ball joint as its three coordinates ``<joint>:x``, ``:y``,
``:z``: the rotation vector of its quaternion (:mod:`pinkctl.core.ball_joints`; MuJoCo's
``qpos`` holds it as ``(w, x, y, z)``), whose velocities are the rates of the rotation vector.
Free joints have no named coordinates (a floating base is the robot state's root).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..core.ball_joints import ball_coordinate_names, rotation_rate
from ..core.mujoco_qpos import from_mujoco_qpos, to_mujoco_qpos
from ..errors import InputError

if TYPE_CHECKING:
    from ..core.robot import PinkRobot

__all__ = ["ConfigurationMap", "JointCoordinates"]

_SCALAR = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
_BALL = int(mujoco.mjtJoint.mjJNT_BALL)


def _rotation(qpos: np.ndarray, address: int) -> np.ndarray:
    """The rotation vector of the ball quaternion ``(w, x, y, z)`` at ``qpos[address:]``."""
    w, x, y, z = qpos[address : address + 4]
    norm = float(np.sqrt(w * w + x * x + y * y + z * z))
    if not np.isfinite(norm) or norm < 1e-9:
        raise InputError(f"ball joint quaternion at qpos[{address}] is zero or not finite")
    return np.asarray(pin.log3(pin.Quaternion(w / norm, x / norm, y / norm, z / norm).matrix()))


class JointCoordinates:
    """Where each named coordinate of ``model`` lives in ``qpos`` and ``qvel``.

    Attributes:
        names: Every coordinate, in model order (a ball joint's three together).
        qpos_address: ``qpos`` address of each scalar joint (a ball's: of its quaternion).
        dof_address: ``qvel`` address of each coordinate (a ball's: of its axis).
        joint_id: MuJoCo joint id of each coordinate.
    """

    def __init__(self, model: mujoco.MjModel) -> None:
        self.names: list[str] = []
        self.qpos_address: dict[str, int] = {}
        self.dof_address: dict[str, int] = {}
        self.joint_id: dict[str, int] = {}
        #: ``(qpos address, dof address, axis)`` of each ball coordinate.
        self._ball: dict[str, tuple[int, int, int]] = {}
        for j in range(model.njnt):
            name, kind = model.joint(j).name, int(model.jnt_type[j])
            if not name or kind not in (*_SCALAR, _BALL):
                continue
            qpos, dof = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
            coordinates = (name,) if kind in _SCALAR else ball_coordinate_names(name)
            for axis, coordinate in enumerate(coordinates):
                self.names.append(coordinate)
                self.qpos_address[coordinate] = qpos
                self.dof_address[coordinate] = dof + axis
                self.joint_id[coordinate] = j
                if kind == _BALL:
                    self._ball[coordinate] = (qpos, dof, axis)

    def is_ball(self, name: str) -> bool:
        """Whether ``name`` is a ball joint's coordinate."""
        return name in self._ball

    def limits(self, model: mujoco.MjModel, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` position limits of ``names`` (infinite without a range, and for
        ball coordinates: a ball joint's range bounds its angle)."""
        lower, upper = np.full(len(names), -np.inf), np.full(len(names), np.inf)
        for k, name in enumerate(names):
            j = self.joint_id[name]
            if name not in self._ball and model.jnt_limited[j]:
                lower[k], upper[k] = model.jnt_range[j]
        return lower, upper

    @staticmethod
    def add_mimic_followers(model: mujoco.MjModel, positions: dict[str, float]) -> None:
        """Add to ``positions`` the mimic followers of the masters it holds (the model's joint
        equalities: ``follower = c0 + c1 · master``)."""
        for i in range(model.neq):
            if int(model.eq_type[i]) != int(mujoco.mjtEq.mjEQ_JOINT) or model.eq_obj2id[i] < 0:
                continue
            follower = model.joint(int(model.eq_obj1id[i])).name
            master = model.joint(int(model.eq_obj2id[i])).name
            if master in positions:
                c = model.eq_data[i]
                positions[follower] = float(c[0] + c[1] * positions[master])

    def check(self, names: Sequence[str]) -> None:
        """Raise InputError naming the unknown ``names``."""
        unknown = [n for n in names if n not in self.dof_address]
        if unknown:
            raise InputError(f"unknown joints {unknown}; joints are {self.names}")

    def positions(self, data: mujoco.MjData, names: Sequence[str]) -> np.ndarray:
        """Positions [rad] or [m] of ``names`` (ball coordinates: the rotation vector)."""
        qpos = data.qpos
        out = np.empty(len(names))
        rotations: dict[int, np.ndarray] = {}
        for k, name in enumerate(names):
            ball = self._ball.get(name)
            if ball is None:
                out[k] = qpos[self.qpos_address[name]]
                continue
            rotation = rotations.get(ball[0])
            if rotation is None:
                rotation = rotations.setdefault(ball[0], _rotation(qpos, ball[0]))
            out[k] = rotation[ball[2]]
        return out

    def velocities(self, data: mujoco.MjData, names: Sequence[str]) -> np.ndarray:
        """Velocities [rad/s] or [m/s] of ``names`` (ball coordinates: the rate of the
        rotation vector)."""
        out = np.empty(len(names))
        rates: dict[int, np.ndarray] = {}
        for k, name in enumerate(names):
            ball = self._ball.get(name)
            if ball is None:
                out[k] = data.qvel[self.dof_address[name]]
                continue
            rate = rates.get(ball[0])
            if rate is None:
                omega = data.qvel[ball[1] : ball[1] + 3]
                rate = rates.setdefault(
                    ball[0], rotation_rate(_rotation(data.qpos, ball[0]), omega)
                )
            out[k] = rate[ball[2]]
        return out

    def write_positions(self, data: mujoco.MjData, names: Sequence[str], values: ArrayLike) -> None:
        """Write positions (no dynamics): a ball joint's named coordinates replace those of
        its rotation vector, the others kept."""
        qpos = data.qpos
        rotations: dict[int, np.ndarray] = {}
        for name, value in zip(names, np.asarray(values, dtype=float).reshape(-1)):
            ball = self._ball.get(name)
            if ball is None:
                qpos[self.qpos_address[name]] = value
                continue
            if ball[0] not in rotations:
                rotations[ball[0]] = _rotation(qpos, ball[0])
            rotations[ball[0]][ball[2]] = value
        for address, rotation in rotations.items():
            x, y, z, w = pin.Quaternion(pin.exp3(rotation)).coeffs().tolist()
            qpos[address : address + 4] = (w, x, y, z)


class ConfigurationMap:
    """A robot's Pinocchio ``q`` and a MuJoCo model's ``qpos``, both ways: the one pair
    :func:`~pinkctl.to_mujoco_qpos` / :func:`~pinkctl.from_mujoco_qpos`, with the Pinocchio
    joints MuJoCo lacks left out (they keep the robot's home)."""

    def __init__(self, robot: PinkRobot, model: mujoco.MjModel) -> None:
        self.robot = robot
        self.model = model
        self._joint_map: dict[str, str | None] = {
            name: None
            for name in robot.model.names[1:]
            if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name) < 0
        }

    @staticmethod
    def of(sim: Any) -> ConfigurationMap:
        """The map of a simulation; InputError for one without a robot."""
        bridge = getattr(sim, "_configurations", None)
        if bridge is None:
            raise InputError("this simulation has no robot: build it with from_robot")
        return bridge

    def home_qpos(self) -> np.ndarray:
        """``qpos`` of the robot's home ``q0`` (the model's ``qpos0`` elsewhere)."""
        return to_mujoco_qpos(self.robot, self.model, self.robot.q0, joint_map=self._joint_map)

    def qpos(self, q: ArrayLike, qpos: ArrayLike) -> np.ndarray:
        """``qpos`` with the robot at ``q`` (the other joints as in ``qpos``)."""
        return to_mujoco_qpos(self.robot, self.model, q, qpos=qpos, joint_map=self._joint_map)

    def q(self, qpos: ArrayLike) -> np.ndarray:
        """The robot's ``q`` of ``qpos``."""
        return from_mujoco_qpos(
            self.robot, self.model, qpos, q=self.robot.q0, joint_map=self._joint_map
        )
