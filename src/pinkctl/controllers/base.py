"""The controller interface every pinkctl controller implements.

One control tick: ``desired = controller.forward(estimated, setpoint, t)``; if ``desired`` is
None the caller applies nothing and the previous command stays in force (see
:class:`BaseController` for when a controller brakes instead). Call ``reset`` once
before the first ``forward`` (and again whenever the controller is re-armed).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Any

from ..core.state import RobotState
from .status import ControllerStatus

__all__ = ["BaseController"]

_LOG = logging.getLogger("pinkctl")


class BaseController(ABC):
    """Abstract controller: maps (estimated state, setpoint, time) to a desired state.

    Contract:

    - ``t`` is the absolute clock time in seconds (simulation or wall time), never a step
      length; a controller that needs elapsed time keeps its own record of the previous ``t``.
    - ``forward`` returning **None means "no valid output this step"** (not ready, no
      target, solver failure, out of range, bad input at run time). The caller skips applying
      a command, so the previous actuator targets stay in force. A controller that owns a
      command sequence under motion limits (:class:`~pinkctl.PinkIKController`) does not stop
      it dead that way: after its first successful ``reset`` it answers a failed tick with
      the next step of a braking profile and records why (Isaac code that skips None runs
      unchanged; it just sees None less often).
    - Runtime failures never raise out of ``forward``: the controller returns None and records
      the reason in :attr:`last_error` (use :meth:`_fail`). A successful step sets
      :attr:`last_error` back to None. Programming errors found at construction (unknown
      frame, bad shapes) raise ``ValueError`` there instead.
    - Unknown keyword arguments are accepted and passed on to children by composites.

    - :attr:`status` says what the last tick produced (OK, BRAKING, NOT_READY) for a
      controller that reports it (:class:`~pinkctl.PinkIKController`, and the containers of
      such controllers); runners log it every tick.

    Attributes:
        last_error: Why the most recent ``reset``/``forward`` produced no output (or, for a
            braking controller, why it brakes), or None.
    """

    last_error: str | None = None

    def __init__(self) -> None:
        self.last_error = None

    @abstractmethod
    def reset(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> bool:
        """Put the controller in a safe start condition; call before the first ``forward``.

        Args:
            estimated_state: Measured or estimated current state of the robot.
            setpoint_state: Optional goal; some controllers ignore it here.
            t: Absolute time [s].
            **kwargs: Controller-specific options; unknown ones are ignored.

        Returns:
            True on success; False otherwise (the reason is in :attr:`last_error`).
        """

    @abstractmethod
    def forward(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> RobotState | None:
        """Compute the state the robot should track at the next step.

        Args:
            estimated_state: Measured or estimated current state of the robot.
            setpoint_state: Optional goal; None usually means "keep the current target".
            t: Absolute time [s].
            **kwargs: Controller-specific options; unknown ones are ignored.

        Returns:
            The desired state, or None for "no valid output this step" (the caller keeps the
            previous command; the reason is in :attr:`last_error`).
        """

    @property
    def status(self) -> ControllerStatus | None:
        """What the last ``forward`` produced; None for a controller that reports no status
        (its None output is then the only sign of a failed tick)."""
        return None

    def _fail(self, reason: str) -> RobotState | None:
        """Record ``reason`` in :attr:`last_error`, log it at debug level, and return None.

        Typed as the ``forward`` return type so that ``return self._fail(...)`` type-checks.

        Meant for ``return self._fail("...")`` inside ``forward``.
        """
        self.last_error = reason
        _LOG.debug("%s: %s", type(self).__name__, reason)
        return None
