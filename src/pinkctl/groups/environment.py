"""IKEnvironment: a whole IK setup (the seed's "environment"): scene and named groups.

An environment is made on a robot or empty (``IKEnvironment()``: only the world, to which
dummies and joints are added). ``env.save(path)`` / ``IKEnvironment.load(path)`` write and
read it as TOML (:mod:`pinkctl.groups.setup_file`), ``env.dumps()`` /
``IKEnvironment.loads(text)`` as a string (the seed's ``ikSave`` / ``ikLoad`` buffers);
``env.duplicate()`` (or ``copy.deepcopy(env)``) gives an independent copy to experiment on
without touching the original. Several environments by handle:
:class:`~pinkctl.groups.workspace.IKEnvironments`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..core.robot import PinkRobot
from ..errors import InputError
from .element import IKElement
from .group import IKGroup
from .scene import KinematicScene
from .setup_file import environment_text, load_environment
from .setup_reader import parse_document, read_document
from .solve import GroupResult, solve

__all__ = ["IKEnvironment"]


class IKEnvironment:
    """A robot's kinematic scene and its IK groups, by name.

    Args:
        robot: The robot the scene is built on, or None for an empty scene.
    """

    def __init__(self, robot: PinkRobot | None = None) -> None:
        self.scene = KinematicScene(robot)
        self._groups: dict[str, IKGroup] = {}

    @property
    def groups(self) -> dict[str, IKGroup]:
        """The groups by name, in creation order (a copy of the mapping)."""
        return dict(self._groups)

    def add_group(self, name: str, elements: Iterable[IKElement] = (), **settings: Any) -> IKGroup:
        """Create a group of this scene (``settings`` as for :class:`IKGroup`) under ``name``."""
        if not isinstance(name, str) or not name:
            raise InputError(f"name must be a non-empty string, got {name!r}")
        if name in self._groups:
            raise InputError(f"name {name!r}: a group of that name exists already")
        group = IKGroup(self.scene, elements, **settings)
        self._groups[name] = group
        return group

    def group(self, name: str) -> IKGroup:
        """The group ``name``."""
        if name not in self._groups:
            raise InputError(f"no group named {name!r}; groups: {list(self._groups)}")
        return self._groups[name]

    def remove_group(self, name: str) -> IKGroup:
        """Remove and return the group ``name``."""
        group = self.group(name)
        del self._groups[name]
        return group

    def solve(self, names: Sequence[str], q: Any, *, priority: str = "cascade") -> GroupResult:
        """Solve the named groups from ``q``, the first one highest (see
        :func:`pinkctl.groups.solve`)."""
        if isinstance(names, str):
            raise InputError("names must be a sequence of group names, not one string")
        return solve([self.group(name) for name in names], q, priority=priority)

    def save(self, path: str | Path) -> None:
        """Write the setup as TOML (see :mod:`pinkctl.groups.setup_file`)."""
        Path(path).write_text(environment_text(self), encoding="utf-8")

    def dumps(self) -> str:
        """The TOML text :meth:`save` writes."""
        return environment_text(self)

    @classmethod
    def load(cls, path: str | Path) -> IKEnvironment:
        """Read a setup written by :meth:`save` (or by hand).

        Raises:
            FileNotFoundError: No such file.
            ValueError: (:class:`~pinkctl.errors.ConfigurationError`) a directory, text that is
                not UTF-8, invalid TOML, an unknown table or key, or a malformed entry; the
                message names the file and the line.
        """
        return load_environment(*read_document(path))

    @classmethod
    def loads(cls, text: str) -> IKEnvironment:
        """Read a setup from TOML text (errors name ``<string>`` and the line)."""
        return load_environment(*parse_document(text))

    def duplicate(self) -> IKEnvironment:
        """An independent copy (robot, scene and groups)."""
        return copy.deepcopy(self)
