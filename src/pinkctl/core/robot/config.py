"""The robot configuration (``robot.toml``): what a description file cannot say.

Every field is optional; what is missing is inferred by the loader (see
:mod:`pinkctl.core.robot.inference`), which says what it inferred. A configuration is a TOML file
or a ``dict`` of the same shape:

=========================  ===================================================================
key                        meaning
=========================  ===================================================================
``name``                   robot name (default: the folder or file name)
``description``            one line for humans
``urdf`` / ``mjcf``        the description file, relative to the configuration's folder
``package``                ``"example-robot-data"``: ``urdf``/``srdf`` are relative to that
                           package's ``robots`` folder (the ``pinkctl[robots]`` extra)
``srdf``                   SRDF file (disabled collision pairs, groups, named states)
``package_dirs``           folders for ``package://`` mesh URIs
``tool_frame``             the IK controller's end-effector frame
``tool_frames``            more frames that get a MuJoCo site (e.g. a second arm's tool)
``controlled_joints``      joints the arm controller drives
``planning_group``         or: an SRDF group whose joints (or chain) are the controlled joints
``gripper_joints``         actuated gripper joints (driven beside the arm)
``home``                   table of joint values, or the name of an SRDF ``group_state``
``floating_base``          true: a free-flyer root joint (humanoids, mobile bases)
``floor``                  true / false, or the floor height [m] (default: below the robot)
``inertia_repairs``        links whose inertia the description gets wrong (not physical):
                           their repair is expected and silent (others warn, once per load)
``[base]``                 ``position`` [m] and ``rpy`` [rad] of the root link in the world
``[limits]``               ``velocity`` [rad/s, m/s], ``acceleration`` [/s^2], ``jerk`` [/s^3]
``[mujoco]``               ``kp`` [N m/rad], ``kv`` [N m s/rad], ``armature`` [kg m^2]
=========================  ===================================================================

The ``[limits]`` and ``[mujoco]`` values are a number (every joint) or a table by joint name.
Numbers must be finite and positive (``kv`` and ``armature``: non-negative); home values finite
and inside the joint's range. Paths must stay inside the configuration's folder unless the
loader is told to allow others.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..._validation import name_list, real_array, real_number
from ...errors import ConfigurationError, DescriptionNotFoundError, InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["RobotConfig", "read_config"]

#: Fields of :class:`RobotConfig` that are not keys of the table.
_NOT_KEYS = ("base_position", "base_rpy", "folder", "source", "raw")
_LIMIT_KEYS = ("velocity", "acceleration", "jerk")
_MUJOCO_KEYS = ("kp", "kv", "armature")
_PACKAGES = ("example-robot-data",)


def _number(value: Any, what: str, source: str, *, positive: bool) -> float:
    """A finite number >= 0 (> 0 when ``positive``)."""
    with _as_configuration_error():
        return real_number(value, f"{source}: {what}", low=0.0, low_open=positive)


@contextmanager
def _as_configuration_error() -> Iterator[None]:
    """An argument check's :class:`~pinkctl.errors.InputError` as a
    :class:`~pinkctl.errors.ConfigurationError` (a file's value, not an argument)."""
    try:
        yield
    except InputError as exc:
        raise ConfigurationError(str(exc)) from None


def _per_joint_table(
    value: Any, what: str, source: str, *, positive: bool
) -> float | dict[str, float] | None:
    """A number for every joint, or a table by joint name (each value checked)."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return {
            str(joint): _number(v, f"{what} of {joint!r}", source, positive=positive)
            for joint, v in value.items()
        }
    return _number(value, what, source, positive=positive)


def _string(value: Any, what: str, source: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigurationError(f"{source}: {what} must be a non-empty string, got {value!r}")
    return value


def _vector(value: Any, size: int, what: str, source: str) -> tuple[float, ...]:
    """``size`` finite numbers, as a tuple."""
    with _as_configuration_error():
        return tuple(real_array(value, f"{source}: {what}", (size,)).tolist())


@dataclass(frozen=True)
class RobotConfig:
    """A validated robot configuration (see the module docstring for the fields).

    Build it with :func:`read_config` (a TOML file or a dict); ``folder`` is where relative
    paths start. Joint and frame names are checked against the model by the loader.
    """

    name: str | None = None
    description: str | None = None
    urdf: str | None = None
    mjcf: str | None = None
    package: str | None = None
    srdf: str | None = None
    package_dirs: tuple[str, ...] = ()
    tool_frame: str | None = None
    tool_frames: tuple[str, ...] = ()
    controlled_joints: tuple[str, ...] | None = None
    planning_group: str | None = None
    gripper_joints: tuple[str, ...] | None = None
    home: dict[str, float] | str | None = None
    floating_base: bool = False
    floor: bool | float | None = None
    inertia_repairs: tuple[str, ...] = ()
    base_position: tuple[float, ...] | None = None
    base_rpy: tuple[float, ...] | None = None
    limits: dict[str, float | dict[str, float]] = field(default_factory=dict)
    mujoco: dict[str, float | dict[str, float]] = field(default_factory=dict)
    folder: Path | None = None
    source: str = "configuration"
    raw: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, folder: Path | None = None, source: str = "config"
    ) -> RobotConfig:
        """Validate a configuration table.

        Raises:
            ValueError: On an unknown key or a malformed value (the message names both).
        """
        _check_keys(data, source)
        floating = data.get("floating_base", False)
        if not isinstance(floating, bool):
            raise ConfigurationError(f"{source}: floating_base must be true or false")
        position, rpy = _base(data.get("base", {}), floating, source)
        strings = {key: _string(data.get(key), key, source) for key in _STRING_KEYS}
        return cls(
            **strings,
            package_dirs=_names(data.get("package_dirs", []), "package_dirs", source),
            tool_frames=_names(data.get("tool_frames", []), "tool_frames", source),
            controlled_joints=_optional_names(
                data.get("controlled_joints"), "controlled_joints", source
            ),
            gripper_joints=_optional_names(data.get("gripper_joints"), "gripper_joints", source),
            home=_home(data.get("home"), source),
            floating_base=floating,
            floor=_floor(data.get("floor"), source),
            inertia_repairs=_names(data.get("inertia_repairs", []), "inertia_repairs", source),
            base_position=position,
            base_rpy=rpy,
            limits=_section(data.get("limits"), _LIMIT_KEYS, "limits", source, positive=True),
            mujoco=_section(data.get("mujoco"), _MUJOCO_KEYS, "mujoco", source, positive=None),
            folder=folder,
            source=source,
            raw=dict(data),
        )

    def path(self, key: str, *, allow_outside: bool = False) -> Path | None:
        """The file of ``urdf``, ``mjcf`` or ``srdf``, resolved (None when not set).

        Relative paths start at the configuration's folder (or, with ``package``, at that
        package's ``robots`` folder) and must stay inside it unless ``allow_outside``.

        Raises:
            ValueError: A path leading outside its folder.
            FileNotFoundError: The package is not installed (naming the extra to install).
        """
        value = getattr(self, key)
        if value is None:
            return None
        if self.package is not None:
            base = _package_robots_folder(self.package)
        else:
            base = self.folder if self.folder is not None else Path.cwd()
        candidate = Path(value)
        resolved = (candidate if candidate.is_absolute() else base / candidate).resolve()
        if not allow_outside and not resolved.is_relative_to(base.resolve()):
            raise ConfigurationError(
                f"{self.source}: {key} {value!r} leads outside {base}; pass "
                "allow_outside_paths=True to load files elsewhere"
            )
        return resolved


#: The keys of a configuration table: the fields read from it, ``[base]`` holding
#: ``base_position`` and ``base_rpy``.
_KEYS = {f.name for f in fields(RobotConfig) if f.name not in _NOT_KEYS} | {"base"}
#: The keys whose value is a string (the fields typed ``str | None``).
_STRING_KEYS = tuple(f.name for f in fields(RobotConfig) if f.type == "str | None")


def _check_keys(data: Any, source: str) -> None:
    """A table of known keys, with at most one description file and a known package."""
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"{source}: a configuration must be a table, got {data!r}")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ConfigurationError(f"{source}: unknown keys {unknown}; known keys: {sorted(_KEYS)}")
    package = _string(data.get("package"), "package", source)
    if package is not None and package not in _PACKAGES:
        raise ConfigurationError(f"{source}: package must be one of {list(_PACKAGES)}")
    if data.get("urdf") is not None and data.get("mjcf") is not None:
        raise ConfigurationError(f"{source}: give either urdf or mjcf, not both")


def _names(value: Any, what: str, source: str) -> tuple[str, ...]:
    """A list of unique names, as a tuple."""
    return tuple(name_list(value, f"{source}: {what}"))


def _optional_names(value: Any, what: str, source: str) -> tuple[str, ...] | None:
    """A list of unique names as a tuple, or None."""
    return None if value is None else _names(value, what, source)


def _home(value: Any, source: str) -> dict[str, float] | str | None:
    """Home joint values by name, or the name of an SRDF state (None stays None)."""
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{source}: home must be a table of joint values or a name")
    with _as_configuration_error():
        return {str(k): real_number(v, f"{source}: home value of {k!r}") for k, v in value.items()}


def _floor(value: Any, source: str) -> bool | float | None:
    """``floor``: None, a boolean, or a finite height [m]."""
    if value is None or isinstance(value, bool):
        return value
    return _vector([value], 1, "floor", source)[0]


def _base(
    base: Any, floating: bool, source: str
) -> tuple[tuple[float, ...] | None, tuple[float, ...] | None]:
    """``[base]``'s position [m] and rpy [rad] (None when not given)."""
    if not isinstance(base, Mapping) or set(base) - {"position", "rpy"}:
        raise ConfigurationError(f"{source}: [base] takes position and rpy")
    position = base.get("position")
    rpy = base.get("rpy")
    if floating and (position is not None or rpy is not None):
        raise ConfigurationError(f"{source}: a floating base has no fixed [base] placement")
    return (
        None if position is None else _vector(position, 3, "base.position", source),
        None if rpy is None else _vector(rpy, 3, "base.rpy", source),
    )


def _section(
    value: Any, keys: tuple[str, ...], name: str, source: str, *, positive: bool | None
) -> dict[str, float | dict[str, float]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{source}: [{name}] must be a table")
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise ConfigurationError(
            f"{source}: unknown keys {unknown} in [{name}]; known: {list(keys)}"
        )
    out: dict[str, float | dict[str, float]] = {}
    for key, entry in value.items():
        strict = positive if positive is not None else key == "kp"
        table = _per_joint_table(entry, f"{name}.{key}", source, positive=strict)
        if table is not None:
            out[key] = table
    return out


def _package_robots_folder(package: str) -> Path:
    """The ``robots`` folder of an installed description package."""
    import importlib.metadata  # noqa: PLC0415

    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError as exc:
        raise DescriptionNotFoundError(
            f"this robot's description comes from the {package!r} package, which is not "
            "installed; install it with: pip install 'pinkctl[robots]'"
        ) from exc
    folder = Path(str(dist.locate_file(f"cmeel.prefix/share/{package}/robots")))
    if not folder.is_dir():
        raise DescriptionNotFoundError(
            f"{package} is installed but has no robots folder at {folder}"
        )
    return folder


def read_config(
    config: str | Path | Mapping[str, Any] | RobotConfig, *, folder: Path | None = None
) -> RobotConfig:
    """A :class:`RobotConfig` from a TOML file, a dict or an existing config.

    Raises:
        FileNotFoundError: The TOML file does not exist.
        ValueError: It cannot be parsed, or a value is malformed.
    """
    if isinstance(config, RobotConfig):
        return config
    if isinstance(config, Mapping):
        return RobotConfig.from_dict(config, folder=folder, source="config")
    path = Path(config)
    if not path.is_file():
        raise DescriptionNotFoundError(f"robot configuration not found: {path}")
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"cannot parse {path}: {exc}") from exc
    return RobotConfig.from_dict(data, folder=path.parent, source=str(path))
