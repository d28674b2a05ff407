"""What travels between the caller and the workers of a batch, in a compact form.

A global IK query takes about 0.1 ms, so pickling its target and its result must cost much
less than that, or a pool spends its time in transport. Two forms keep it cheap, both exact
(the workers' answers are bit for bit the caller's):

- :func:`portable_chain`: ``pin.SE3`` targets travel as their (4, 4) homogeneous matrix (a
  spelling every solver accepts, parsed to the same position and rotation); pickling a
  ``pin.SE3`` costs several times more;
- :class:`PackedResults`: a chunk's results travel as a few stacked arrays instead of one
  object per target, and become :class:`~pinkctl.ik.IKResult` objects again in the caller.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from .result import IKResult
from .targets import IKTarget

if TYPE_CHECKING:
    from .job import Chain

__all__ = ["PackedResults", "portable_chain"]


def _portable(target: IKTarget) -> IKTarget:
    if isinstance(target, pin.SE3):
        return target.homogeneous
    if isinstance(target, Mapping):
        return {frame: _portable(t) for frame, t in target.items()}
    return target


def portable_chain(chain: Chain) -> Chain:
    """``chain`` with its ``pin.SE3`` targets (also in multi-frame mappings) as (4, 4) arrays."""
    return dataclasses.replace(chain, targets=tuple(_portable(t) for t in chain.targets))


@dataclass(frozen=True)
class PackedResults:
    """Results of one chunk as stacked arrays (one row per target, in order).

    Attributes:
        q, q_full: ``(n, dof)`` and ``(n, nq)`` configurations.
        errors: ``(n, 3)`` position error, orientation error, time [s].
        counts: ``(n, 4)`` success (0/1), iterations, restarts, solutions.
        reasons: Why each solve stopped.
        joint_names: The moved joints (shared by every result).
        method: The step method (shared by every result).
    """

    q: np.ndarray
    q_full: np.ndarray
    errors: np.ndarray
    counts: np.ndarray
    reasons: tuple[str, ...]
    joint_names: tuple[str, ...]
    method: str

    @classmethod
    def pack(cls, results: Sequence[IKResult]) -> PackedResults:
        """Stack ``results`` (at least one; every result of the same solver)."""
        return cls(
            q=np.array([r.q for r in results], dtype=np.float64),
            q_full=np.array([r.q_full for r in results], dtype=np.float64),
            errors=np.array(
                [(r.position_error, r.orientation_error, r.time_s) for r in results],
                dtype=np.float64,
            ),
            counts=np.array(
                [(r.success, r.iterations, r.restarts, r.solutions) for r in results],
                dtype=np.int64,
            ),
            reasons=tuple(r.reason for r in results),
            joint_names=results[0].joint_names,
            method=results[0].method,
        )

    def __len__(self) -> int:
        return len(self.reasons)

    def unpack(self) -> list[IKResult]:
        """The results, as :class:`~pinkctl.ik.IKResult` objects again."""
        out = []
        for i, (errors, counts) in enumerate(zip(self.errors.tolist(), self.counts.tolist())):
            position_error, orientation_error, time_s = errors
            success, iterations, restarts, solutions = counts
            out.append(
                IKResult(
                    q=self.q[i].copy(),
                    joint_names=self.joint_names,
                    q_full=self.q_full[i].copy(),
                    success=bool(success),
                    position_error=position_error,
                    orientation_error=orientation_error,
                    iterations=iterations,
                    restarts=restarts,
                    time_s=time_s,
                    reason=self.reasons[i],
                    method=self.method,
                    solutions=solutions,
                )
            )
        return out
