"""What a controller's last tick produced."""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

__all__ = ["ControllerStatus", "combined_status"]


class ControllerStatus(str, Enum):
    """What the last :meth:`~pinkctl.PinkIKController.forward` produced.

    Attributes:
        NOT_READY: No command: ``reset`` has not succeeded yet (``forward`` returned None).
        OK: The tick was solved; the command follows the tasks.
        BLOCKED: The tick was solved, but collision avoidance holds the command back: it
            stops (or slides) at the margin of the pair named in ``last_error``.
        BRAKING: The tick could not be solved (reason in ``last_error``); the command is the
            next step of a braking profile within the limits.
    """

    NOT_READY = "not_ready"
    OK = "ok"
    BLOCKED = "blocked"
    BRAKING = "braking"


def combined_status(statuses: Iterable[ControllerStatus | None]) -> ControllerStatus | None:
    """The status of controllers run together: BRAKING if one brakes, else NOT_READY if one
    is not ready, else BLOCKED if one is blocked, else OK if one reports OK; None when none
    reports a status."""
    reported = {status for status in statuses if status is not None}
    order = (
        ControllerStatus.BRAKING,
        ControllerStatus.NOT_READY,
        ControllerStatus.BLOCKED,
        ControllerStatus.OK,
    )
    for status in order:
        if status in reported:
            return status
    return None
