"""A world as a TOML file: :meth:`World.save <pinkctl.world.World.save>` and
:meth:`World.load <pinkctl.world.World.load>`.

One table per obstacle under ``obstacles``, in the world's order, with its ``kind``, its
dimensions (as :meth:`World.add_box <pinkctl.world.World.add_box>` and the other ``add_``
methods name them) and its pose::

    [obstacles.table]
    kind = "box"
    size = [0.8, 1.2, 0.04]          # full edge lengths [m]
    position = [0.5, 0.0, 0.38]      # [m], world frame
    orientation = [1.0, 0.0, 0.0, 0.0]  # (w, x, y, z), optional
    movable = false                  # optional

    [obstacles.floor]
    kind = "halfspace"               # solid side: normal . x <= offset
    normal = [0.0, 0.0, 1.0]
    offset = 0.0

    [obstacles.mug]
    kind = "mesh"
    path = "meshes/mug.stl"          # relative to this file's folder
    scale = [0.001, 0.001, 0.001]

Other kinds: ``sphere`` (``radius``), ``capsule`` and ``cylinder`` (``radius``, ``length``),
``convex`` (``vertices``, a list of [x, y, z]). Floats are written so that they read back
bit for bit: a saved world loads equal to itself. An unknown key or kind, a missing key or a
bad value is a :class:`~pinkctl.errors.ConfigurationError` naming the file, the obstacle's
line and the key.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomli_w

from ..errors import ConfigurationError, DescriptionNotFoundError, InputError
from .obstacle import KINDS, Obstacle

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

if TYPE_CHECKING:
    from .world import World

__all__ = ["read_world", "write_world"]

#: Keys of each kind beside ``kind`` (the dimensions, then the pose).
KEYS: dict[str, tuple[str, ...]] = {
    "box": ("size", "position", "orientation", "movable"),
    "sphere": ("radius", "position", "orientation", "movable"),
    "capsule": ("radius", "length", "position", "orientation", "movable"),
    "cylinder": ("radius", "length", "position", "orientation", "movable"),
    "halfspace": ("normal", "offset", "movable"),
    "mesh": ("path", "scale", "position", "orientation", "movable"),
    "convex": ("vertices", "position", "orientation", "movable"),
}
#: Keys a kind cannot do without.
REQUIRED: dict[str, tuple[str, ...]] = {
    "box": ("size",),
    "sphere": ("radius",),
    "capsule": ("radius", "length"),
    "cylinder": ("radius", "length"),
    "halfspace": ("normal",),
    "mesh": ("path",),
    "convex": ("vertices",),
}
HEADER = (
    "# A pinkctl world (pinkctl.World.save): obstacles in the world frame, lengths in m,\n"
    "# orientations (w, x, y, z). Read it with pinkctl.World.load.\n\n"
)


def _line(text: str, name: str) -> str:
    """' (line N)' of the obstacle's table header, or '' when it has none of its own."""
    for number, line in enumerate(text.splitlines(), start=1):
        head = line.strip()
        if head.startswith("[obstacles.") and head.endswith("]"):
            key = head[len("[obstacles.") : -1].strip().strip("\"'")
            if key == name:
                return f" (line {number})"
    return ""


def _check_keys(entry: dict[str, Any]) -> str:
    """The ``kind`` of an obstacle table, after checking its keys are the kind's (``KEYS``)
    and hold the ones it needs (``REQUIRED``)."""
    kind = entry.get("kind")
    if kind not in KINDS:
        raise InputError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    known = ("kind", *KEYS[kind])
    unknown = sorted(set(entry) - set(known))
    if unknown:
        raise InputError(f"unknown keys {unknown} for a {kind}; known keys: {list(known)}")
    missing = [k for k in REQUIRED[kind] if k not in entry]
    if missing:
        raise InputError(f"missing keys {missing} for a {kind}")
    return kind  # type: ignore[no-any-return]


def _add(world: World, name: str, entry: dict[str, Any], folder: Path) -> None:
    """Add the obstacle of one table to ``world`` (a mesh path relative to ``folder``)."""
    kind = _check_keys(entry)
    args = {k: v for k, v in entry.items() if k != "kind"}
    if kind == "mesh":
        if not isinstance(args["path"], str):
            raise InputError(f"path must be a string, got {args['path']!r}")
        args["path"] = folder / Path(args["path"]).expanduser()
    orientation = args.pop("orientation", None) if kind == "sphere" else None
    add = getattr(world, f"add_{kind}")
    add(name, **args)
    if orientation is not None:
        world.move(name, orientation=orientation)


def read_world(world: World, path: Path) -> World:
    """Fill ``world`` from the TOML file ``path`` (module docstring) and return it."""
    if not path.is_file():
        raise DescriptionNotFoundError(f"world file not found: {path}")
    text = path.read_text(encoding="utf-8")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path}: not valid TOML: {exc}") from exc
    unknown = sorted(set(document) - {"obstacles"})
    if unknown:
        raise ConfigurationError(f"{path}: unknown keys {unknown}; known keys: ['obstacles']")
    obstacles = document.get("obstacles", {})
    if not isinstance(obstacles, dict):
        raise ConfigurationError(f"{path}: obstacles must be a table of obstacle tables")
    for name, entry in obstacles.items():
        where = f"{path}{_line(text, name)}: obstacles.{name}"
        if not isinstance(entry, dict):
            raise ConfigurationError(f"{where}: expected a table, got {entry!r}")
        try:
            _add(world, name, entry, path.parent)
        except (InputError, TypeError) as exc:
            raise ConfigurationError(f"{where}: {exc}") from exc
        except DescriptionNotFoundError as exc:
            raise DescriptionNotFoundError(f"{where}: {exc}") from exc
    return world


def _entry(obstacle: Obstacle, folder: Path) -> dict[str, Any]:
    entry: dict[str, Any] = {"kind": obstacle.kind}
    for key, value in obstacle.dimensions.items():
        if key == "path":
            file = Path(value)
            try:
                value = file.relative_to(folder).as_posix()
            except ValueError:
                value = str(file)
        entry[key] = [list(v) for v in value] if key == "vertices" else value
    if obstacle.kind != "halfspace":
        entry["position"] = list(obstacle.position)
        if obstacle.orientation != (1.0, 0.0, 0.0, 0.0):
            entry["orientation"] = list(obstacle.orientation)
    if obstacle.movable:
        entry["movable"] = True
    return entry


def write_world(world: World, path: Path) -> None:
    """Write ``world`` to ``path`` (module docstring)."""
    folder = path.resolve().parent
    document = {"obstacles": {o.name: _entry(o, folder) for o in world.obstacles}}
    path.write_text(HEADER + tomli_w.dumps(document), encoding="utf-8")
