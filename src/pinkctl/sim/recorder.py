"""The tick-by-tick record a closed-loop run makes into a :class:`~pinkctl.sim.log.ClosedLoopLog`.

One :meth:`TickRecorder.record` per tick keeps what the controller saw and did (the measured
joints, its command, its status and why it was not OK, the target and the time ``forward``
took), :meth:`TickRecorder.tool` the tool pose the simulation reached after the control period;
:meth:`TickRecorder.log` assembles the arrays and the tracking errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.poses import quaternion_angle
from ..core.state import RobotState
from .log import ClosedLoopLog

__all__ = ["MAX_REASONS", "TickRecorder", "tick_status"]

#: Reasons kept per run (the first ticks that were not OK).
MAX_REASONS = 20

_NO_TARGET = np.full(3, np.nan), np.full(4, np.nan)


def tick_status(controller: Any, desired: RobotState | None) -> str:
    """What the tick produced: the controller's own ``status`` value when it reports one,
    else ``"ok"`` with an output and ``"none"`` without."""
    status = getattr(controller, "status", None)
    if status is not None:
        return str(getattr(status, "value", status))
    return "ok" if desired is not None else "none"


class TickRecorder:
    """Collects a run tick by tick (module docstring).

    Args:
        joint_names: The joint space of the estimates.
        command_names: The joints whose commands are logged (the actuated ones).
        tool_frame: The site whose pose is compared with the target.
    """

    def __init__(
        self, joint_names: Sequence[str], command_names: Sequence[str], tool_frame: str
    ) -> None:
        self._joint_names = list(joint_names)
        self._command_names = list(command_names)
        self._frame = tool_frame
        self._rows: list[tuple[Any, ...]] = []
        self._tool: list[tuple[np.ndarray, np.ndarray]] = []
        self._reasons: list[str] = []
        self._command = np.full(len(command_names), np.nan)

    def record(
        self,
        t: float,
        estimated: RobotState,
        desired: RobotState | None,
        servo: np.ndarray,
        elapsed: float,
        status: str,
        reason: str | None,
        target: tuple[np.ndarray | None, np.ndarray | None],
    ) -> None:
        """One tick: time [s], estimate, output, the servo inputs of the command joints,
        ``forward``'s wall time [s], status and ``last_error``, target position and quaternion
        (None where there is none)."""
        joints = estimated.joints
        assert joints is not None
        if desired is not None and desired.joints is not None:
            positions = desired.joints.positions
            if positions is not None:
                # the commanded position, not the feed-forward-shifted servo input
                given = dict(zip(desired.joints.position_names, positions))
                self._command = np.array(
                    [given.get(n, c) for n, c in zip(self._command_names, servo)]
                )
        if status != "ok" and len(self._reasons) < MAX_REASONS:
            self._reasons.append(f"t={t:.4f} {status}: {reason}")
        position, quaternion = target
        self._rows.append(
            (
                t,
                joints.data_array[0].copy(),
                joints.data_array[1].copy(),
                self._command,
                _NO_TARGET[0] if position is None else position,
                _NO_TARGET[1] if quaternion is None else quaternion,
                elapsed,
                status,
                desired is None,
            )
        )

    def tool(self, position: np.ndarray, quaternion: np.ndarray) -> None:
        """The tool pose after the control period of the latest tick."""
        self._tool.append((np.array(position), np.array(quaternion)))

    def log(self, lower: np.ndarray, upper: np.ndarray) -> ClosedLoopLog:
        """The log of the run (``lower``/``upper``: the command joints' position limits)."""
        n = len(self._rows)
        columns = list(zip(*self._rows)) if n else [()] * 9
        time, q, qd, command, target_p, target_q, elapsed, status, none = columns
        width = len(self._joint_names)
        tool_p = np.array([p for p, _ in self._tool]).reshape(n, 3)
        tool_q = np.array([o for _, o in self._tool]).reshape(n, 4)
        target_position = np.array(target_p, dtype=np.float64).reshape(n, 3)
        target_orientation = np.array(target_q, dtype=np.float64).reshape(n, 4)
        orientation_error = np.full(n, np.nan)
        for i in np.flatnonzero(np.all(np.isfinite(target_orientation), axis=1)):
            orientation_error[i] = quaternion_angle(tool_q[i], target_orientation[i])
        return ClosedLoopLog(
            time=np.array(time, dtype=np.float64),
            joint_names=self._joint_names,
            q=np.array(q, dtype=np.float64).reshape(n, width),
            qd=np.array(qd, dtype=np.float64).reshape(n, width),
            command_names=self._command_names,
            command=np.array(command, dtype=np.float64).reshape(n, len(self._command_names)),
            tool_frame=self._frame,
            tool_position=tool_p,
            tool_orientation=tool_q,
            target_position=target_position,
            target_orientation=target_orientation,
            position_error=np.linalg.norm(tool_p - target_position, axis=1),
            orientation_error=orientation_error,
            tick_time=np.array(elapsed, dtype=np.float64),
            status=np.array(status, dtype=str),
            returned_none=np.array(none, dtype=bool),
            lower_limits=lower,
            upper_limits=upper,
            reasons=self._reasons,
        )
