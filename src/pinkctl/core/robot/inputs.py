"""Which files a load reads: the configuration, the description, the SRDF, the mesh folders,
and where the root link stands (:func:`~pinkctl.core.robot.loader.load_pink_robot`'s first
step).

A keyword of the call wins over the configuration; the configuration's paths are resolved by
:meth:`~pinkctl.core.robot.config.RobotConfig.path` (inside its folder unless allowed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin

from ...errors import ConfigurationError, DescriptionNotFoundError
from .config import RobotConfig, read_config

__all__ = [
    "base_placement",
    "configuration_and_file",
    "description_file",
    "package_folders",
    "srdf_file",
]


def configuration_and_file(
    urdf_path: Path | str | None, config: str | Path | Mapping[str, object] | RobotConfig | None
) -> tuple[RobotConfig | None, Path | None]:
    """The configuration (given as a ``robot.toml`` in ``urdf_path`` or as ``config``) and the
    description file given directly (None when the configuration names it)."""
    cfg = None
    if urdf_path is not None and Path(urdf_path).suffix == ".toml":
        cfg = read_config(Path(urdf_path))
        urdf_path = None
    if config is not None:
        if cfg is not None:
            raise ConfigurationError("give the configuration once: as urdf_path or as config")
        cfg = read_config(config)
    return cfg, None if urdf_path is None else Path(urdf_path)


def description_file(given: Path | None, settings: RobotConfig, allow_outside: bool) -> Path:
    """The description file: the one given, else the configuration's ``urdf`` or ``mjcf``."""
    if given is not None:
        return given
    key = "urdf" if settings.urdf else "mjcf"
    path = settings.path(key, allow_outside=allow_outside)
    if path is None:
        raise ConfigurationError(
            "no robot description: pass a URDF/MJCF path or a config naming one"
        )
    return path


def srdf_file(
    srdf_path: Path | str | None, settings: RobotConfig, allow_outside: bool
) -> Path | None:
    """The SRDF: the one given, else the configuration's (None without one)."""
    if srdf_path is not None:
        srdf: Path | None = Path(srdf_path)
    else:
        srdf = settings.path("srdf", allow_outside=allow_outside)
    if srdf is not None and not srdf.is_file():
        raise DescriptionNotFoundError(f"SRDF file not found: {srdf}")
    return srdf


def base_placement(settings: RobotConfig) -> pin.SE3 | None:
    """The root link's fixed placement in the world (``[base]``; None without one)."""
    if settings.base_position is None and settings.base_rpy is None:
        return None
    return pin.SE3(
        pin.rpy.rpyToMatrix(*(settings.base_rpy or (0.0, 0.0, 0.0))),
        np.array(settings.base_position or (0.0, 0.0, 0.0)),
    )


def package_folders(package_dirs: Sequence[str | Path] | None, settings: RobotConfig) -> list[Path]:
    """Folders for ``package://`` mesh URIs: the ones given, then the configuration's."""
    dirs = [Path(p) for p in package_dirs or ()]
    if settings.folder is not None:
        dirs += [settings.folder / p for p in settings.package_dirs]
    return dirs
