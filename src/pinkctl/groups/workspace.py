"""Several IK environments by handle, one of them current (the seed's environment functions).

The seed keeps environments behind integer handles and directs every call to the current
one (``ikCreateEnvironment``, ``ikSwitchEnvironment``, ``ikEraseEnvironment``,
``ikDuplicateEnvironment``). :class:`IKEnvironments` does the same with
:class:`~pinkctl.groups.environment.IKEnvironment` objects: handles are integers from 0, never
reused; ``-1`` means none. An environment object stays usable on its own (``envs[h]``); the
registry only names them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .._validation import integer
from ..core.robot import PinkRobot
from ..errors import InputError
from .environment import IKEnvironment

__all__ = ["NO_ENVIRONMENT", "IKEnvironments"]

#: The handle meaning "no environment" (the seed's -1).
NO_ENVIRONMENT = -1


class IKEnvironments:
    """Environments by handle, one of them current (see the module docstring)."""

    def __init__(self) -> None:
        self._environments: dict[int, IKEnvironment] = {}
        self._next = 0
        self._current = NO_ENVIRONMENT

    def _add(self, env: IKEnvironment) -> int:
        handle = self._next
        self._next += 1
        self._environments[handle] = env
        return handle

    def create(self, robot: PinkRobot | None = None) -> int:
        """A new environment (on ``robot``, or empty) that becomes the current one; its
        handle."""
        handle = self._add(IKEnvironment(robot))
        self._current = handle
        return handle

    def load(self, path: str | Path) -> int:
        """An environment read from a setup file (:meth:`IKEnvironment.load`), made current;
        its handle."""
        handle = self._add(IKEnvironment.load(path))
        self._current = handle
        return handle

    def duplicate(self) -> int:
        """An independent copy of the current environment (the current one stays current);
        its handle."""
        return self._add(self.current.duplicate())

    def erase(self) -> int:
        """Erase the current environment and switch to the most recently created one left;
        returns its handle, or :data:`NO_ENVIRONMENT` when none is left."""
        if self._current == NO_ENVIRONMENT:
            raise InputError("no current environment to erase")
        del self._environments[self._current]
        self._current = max(self._environments, default=NO_ENVIRONMENT)
        return self._current

    def switch(self, handle: int) -> None:
        """Make environment ``handle`` the current one."""
        self._current = self._check(handle)

    @property
    def current(self) -> IKEnvironment:
        """The current environment."""
        if self._current == NO_ENVIRONMENT:
            raise InputError("no current environment: create() or load() one first")
        return self._environments[self._current]

    @property
    def current_handle(self) -> int:
        """The current environment's handle, :data:`NO_ENVIRONMENT` when none."""
        return self._current

    @property
    def handles(self) -> list[int]:
        """The handles of the environments, in creation order."""
        return list(self._environments)

    def _check(self, handle: int) -> int:
        value = integer(handle, "handle", low=0)
        if value not in self._environments:
            raise InputError(f"handle {value} is not an environment; handles: {self.handles}")
        return value

    def __getitem__(self, handle: int) -> IKEnvironment:
        return self._environments[self._check(handle)]

    def __contains__(self, handle: object) -> bool:
        return handle in self._environments

    def __len__(self) -> int:
        return len(self._environments)

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._environments))
