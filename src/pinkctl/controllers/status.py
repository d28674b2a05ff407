"""What a controller's last tick produced."""

from __future__ import annotations

from enum import Enum

__all__ = ["ControllerStatus"]


class ControllerStatus(str, Enum):
    """What the last :meth:`~pinkctl.PinkIKController.forward` produced.

    Attributes:
        NOT_READY: No command: ``reset`` has not succeeded yet (``forward`` returned None).
        OK: The tick was solved; the command follows the tasks.
        BRAKING: The tick could not be solved (reason in ``last_error``); the command is the
            next step of a braking profile within the limits.
    """

    NOT_READY = "not_ready"
    OK = "ok"
    BRAKING = "braking"
