"""Why an IK query stopped, in words (``IKResult.reason``), and the guarded validation callback."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .collision import CollisionCheck
from .search import SearchOutcome

__all__ = ["guarded", "local_reason", "search_reason"]


def local_reason(kind: str, max_it: int, budget: float | None, stall: int | None) -> str:
    """Why a local solve stopped without converging."""
    return {
        "iterations": f"iteration budget ({max_it}) exhausted",
        "time": f"time budget ({budget} ms) exhausted",
        "stalled": f"stalled: no progress in {stall} iterations",
        "numerical": "numerical failure (non-finite error)",
    }[kind]


def search_reason(
    out: SearchOutcome,
    budget: float | None,
    restarts_cap: int | None,
    it_cap: int | None,
    validate_errors: list[str],
    collision: CollisionCheck | None = None,
) -> str:
    """Why a global search stopped: ``"converged"``, or the budget it used up and what
    happened to the starts."""
    if out.success:
        return "converged"
    reason = {
        "time": f"time budget ({budget} ms) exhausted",
        "restarts": f"restart budget ({restarts_cap}) exhausted",
        "iterations": f"iteration budget ({it_cap}) exhausted",
    }.get(out.reason, out.reason)
    reason += f": no solution from the seed and {out.restarts} random restarts"
    if out.collided and collision is not None:
        reason += (
            f"; {out.collided} converged configurations rejected in collision (closer than "
            f"collision_margin {collision.margin * 1e3:g} mm; last: {collision.describe_last()})"
        )
    if out.rejected:
        reason += f"; {out.rejected} converged configurations rejected by validate"
    if out.skipped:
        reason += f"; {out.skipped} starts skipped by metric_threshold"
    if validate_errors:
        reason += (
            f"; validate raised {validate_errors[0]} "
            f"({len(validate_errors)} time(s); counted as a rejection)"
        )
    return reason


def guarded(
    validate: Callable[[np.ndarray], bool], errors: list[str]
) -> Callable[[np.ndarray], bool]:
    """``validate`` that counts an exception as a rejection (recorded in ``errors``)."""

    def accepts(q: np.ndarray) -> bool:
        try:
            return bool(validate(q))
        except Exception as exc:  # a user callback must not escape the search
            errors.append(f"{type(exc).__name__}: {exc}")
            return False

    return accepts
