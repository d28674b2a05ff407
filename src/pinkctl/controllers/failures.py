"""Failures inside a control tick: the ones a tick expects, and the bugs it must not hide.

A tick that cannot be solved for a known runtime reason (an infeasible QP, an estimate without
the controlled joints, a user callback raising, a target out of range) brakes and says why in
``last_error``. An *unexpected* exception inside pinkctl during a tick is a bug: it is never
swallowed silently.

- By default the tick brakes (the arm is never left without a safe command), the reason names
  the exception, and its traceback is logged at ERROR level on the ``pinkctl`` logger.
- With the environment variable ``PINKCTL_DEBUG=1`` (read when the exception happens) it is
  re-raised out of ``forward`` instead, with its original traceback.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

__all__ = ["DEBUG_ENVIRONMENT_VARIABLE", "debug_mode", "internal_error", "run_callback"]

#: Set to ``1`` to re-raise unexpected exceptions out of a control tick.
DEBUG_ENVIRONMENT_VARIABLE = "PINKCTL_DEBUG"

_LOG = logging.getLogger("pinkctl")


def debug_mode() -> bool:
    """Whether ``PINKCTL_DEBUG`` asks for unexpected exceptions to be re-raised."""
    return os.environ.get(DEBUG_ENVIRONMENT_VARIABLE, "0").strip() not in ("", "0")


def internal_error(owner: object, error: BaseException) -> str:
    """Log ``error`` with its traceback on the ``pinkctl`` logger; the reason of the braking
    tick it caused."""
    name = type(owner).__name__
    _LOG.error("%s: unexpected %s during a tick", name, type(error).__name__, exc_info=error)
    return (
        f"internal error: {type(error).__name__}: {error} (traceback logged on the 'pinkctl' "
        f"logger; {DEBUG_ENVIRONMENT_VARIABLE}=1 re-raises it)"
    )


def run_callback(callback: Callable[..., Any] | None, *arguments: Any) -> str | None:
    """Run the user's ``callback(*arguments)``; why the tick brakes when it raised, else None.

    The user's code failing is a known runtime condition of a tick (it brakes, the loop goes
    on), not a bug of pinkctl: the reason names the exception.
    """
    if callback is None:
        return None
    try:
        callback(*arguments)
    except Exception as exc:  # the user's code, whatever it raises
        return f"pre_step_callback raised {type(exc).__name__}: {exc}"
    return None
