"""Where a robot came from: a small picklable recipe that loads it again, identically.

A Pinocchio model does not survive pickling in every case (a model with a mimic joint
unpickles into one that crashes ``computeJointJacobians``), so a robot is sent to another
process or machine as its :class:`RobotSource` (how it was loaded: a catalog name, or the
files and configuration given to :func:`~pinkctl.load_pink_robot`) and loaded again there.
The source records a digest of the model it produced (:func:`model_digest`), so a reload
that does not give the same kinematics (files changed on disk, a model edited after
loading) is detected instead of giving different answers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from ...errors import ConfigurationError, PinkctlWarning

if TYPE_CHECKING:
    from .config import RobotConfig
    from .model import PinkRobot

__all__ = ["RobotSource", "model_digest"]


def model_digest(model: pin.Model) -> str:
    """A fingerprint of a model's kinematics: joints (type, placement, coordinates), limits,
    mimic couplings and frames. Two models with the same digest give the same forward
    kinematics, Jacobians and limits.

    Returns:
        A hexadecimal SHA-256 digest.
    """
    h = hashlib.sha256()
    h.update(f"{model.nq} {model.nv} {model.njoints} {model.nframes}".encode())
    for i in range(model.njoints):
        joint = model.joints[i]
        h.update(f"{model.names[i]}|{joint.shortname()}|{joint.idx_q}|{joint.idx_v}".encode())
        h.update(np.ascontiguousarray(model.jointPlacements[i].homogeneous).tobytes())
    for limits in (
        model.lowerPositionLimit,
        model.upperPositionLimit,
        model.velocityLimit,
        model.effortLimit,
    ):
        h.update(np.ascontiguousarray(limits, dtype=np.float64).tobytes())
    for frame in model.frames:
        h.update(f"{frame.name}|{frame.parentJoint}|{frame.type}".encode())
        h.update(np.ascontiguousarray(frame.placement.homogeneous).tobytes())
    return h.hexdigest()


@dataclass(frozen=True)
class RobotSource:
    """How a robot was loaded; :meth:`load` loads it again.

    Attributes:
        catalog: Name of a catalog robot (:func:`~pinkctl.load_pink_supported_robot`), or
            None for a robot loaded by :func:`~pinkctl.load_pink_robot`.
        arguments: Keyword arguments of that loader (paths absolute, so the recipe works
            from any working directory; the configuration as given: a path, a table or a
            :class:`~pinkctl.core.robot.RobotConfig`).
        digest: :func:`model_digest` of the model the loader gave.

    A catalog source loads on any machine where pinkctl is installed; a file source needs
    the same files at the same absolute paths.
    """

    catalog: str | None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    digest: str = ""

    def load(self) -> PinkRobot:
        """Load the robot again (the loader's warnings, already shown once, are silenced).

        Raises:
            ConfigurationError: The loaded model differs from the recorded one (its files
                changed since).
            FileNotFoundError, ValueError: As the loader raises them.
        """
        from .loader import load_pink_robot, load_pink_supported_robot

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PinkctlWarning)
            if self.catalog is not None:
                robot = load_pink_supported_robot(self.catalog, **self.arguments)
            else:
                robot = load_pink_robot(**self.arguments)
        if self.digest and model_digest(robot.model) != self.digest:
            what = self.catalog or self.arguments.get("urdf_path") or self.arguments.get("config")
            raise ConfigurationError(
                f"robot {what!r} loads into a different model than when it was first loaded "
                "(its files changed on disk, or differ on this machine)"
            )
        return robot

    @staticmethod
    def of_call(
        cfg: RobotConfig | None,
        model: pin.Model,
        *,
        urdf_path: Path,
        package_dirs: Sequence[str | Path] | None,
        srdf_path: Path | None,
        controlled_joint_names: Sequence[str] | None,
        home: Mapping[str, float] | str | None,
        gripper_joint_names: Sequence[str] | None,
        **arguments: object,
    ) -> RobotSource:
        """The :func:`~pinkctl.load_pink_robot` call that loaded ``model``, its paths resolved
        and its lists copied, so that :meth:`load` can load it again."""
        if cfg is not None and cfg.folder is None:  # a table's relative paths: from this folder
            cfg = dataclasses.replace(cfg, folder=Path.cwd())
        return RobotSource(
            catalog=None,
            arguments={
                "urdf_path": urdf_path.resolve(),
                "package_dirs": [Path(p).resolve() for p in (package_dirs or [])],
                "srdf_path": srdf_path.resolve() if srdf_path is not None else None,
                "config": cfg,
                "controlled_joint_names": _copied(controlled_joint_names),
                "home": dict(home) if isinstance(home, Mapping) else home,
                "gripper_joint_names": _copied(gripper_joint_names),
                **arguments,
            },
            digest=model_digest(model),
        )

    def matches(self, model: pin.Model) -> bool:
        """Whether ``model`` is still the model this source loads (not edited since)."""
        return model_digest(model) == self.digest


def _copied(names: Sequence[str] | None) -> list[str] | None:
    return list(names) if names is not None else None
