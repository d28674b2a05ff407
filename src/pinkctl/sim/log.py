"""The record of a closed-loop run (:class:`ClosedLoopLog`): metrics, a table, a plot, a file.

:func:`~pinkctl.sim.run_closed_loop` fills one row per control tick; :meth:`ClosedLoopLog.save`
writes every array to an ``.npz`` file and :meth:`ClosedLoopLog.load` reads it back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, MissingDependencyError

__all__ = ["STATUSES", "ClosedLoopLog"]

#: Fields stored as text in the ``.npz`` file (the others are arrays).
_NAME_LISTS = ("joint_names", "command_names", "reasons")

#: What a tick's ``status`` entry can be: a controller's own status (``ControllerStatus``
#: values), or for a controller that reports none, whether it returned a state.
STATUSES = ("ok", "braking", "not_ready", "none")


@dataclass
class ClosedLoopLog:
    """Per-tick record of a closed-loop run; arrays are indexed by tick.

    Attributes:
        time: Tick times [s], shape (K,).
        joint_names: Joint space of ``q`` and ``qd``.
        q: Measured joint positions at each tick [rad], (K, N).
        qd: Measured joint velocities [rad/s], (K, N).
        command_names: Joints of ``command``.
        command: Servo position command in force after the tick, (K, C); NaN before the first.
        tool_frame: Site whose pose is logged.
        tool_position: Tool position after the control period [m], (K, 3).
        tool_orientation: Tool quaternion (w, x, y, z) after the control period, (K, 4).
        target_position: Target position of the tick [m], (K, 3); NaN when there is none.
        target_orientation: Target quaternion, (K, 4); NaN when there is none.
        position_error: ‖tool − target‖ [m], (K,); NaN without a target.
        orientation_error: Rotation angle between tool and target [rad], (K,).
        tick_time: Wall time of ``controller.forward`` [s], (K,).
        status: What each tick produced, (K,) strings: the controller's ``status``
            (``"ok"``, ``"braking"``, ``"not_ready"``; a container's combines its children's),
            or for a controller that reports none ``"ok"`` with an output and ``"none"``
            without one.
        returned_none: True where ``forward`` returned None (the servos kept the previous
            command), (K,).
        reasons: ``t``, status and ``last_error`` of the first 20 ticks that were not OK.
        lower_limits, upper_limits: Position limits of ``command_names`` [rad].
    """

    time: np.ndarray
    joint_names: list[str]
    q: np.ndarray
    qd: np.ndarray
    command_names: list[str]
    command: np.ndarray
    tool_frame: str
    tool_position: np.ndarray
    tool_orientation: np.ndarray
    target_position: np.ndarray
    target_orientation: np.ndarray
    position_error: np.ndarray
    orientation_error: np.ndarray
    tick_time: np.ndarray
    status: np.ndarray
    returned_none: np.ndarray
    lower_limits: np.ndarray
    upper_limits: np.ndarray
    reasons: list[str] = field(default_factory=list)

    @property
    def limit_violations(self) -> int:
        """Number of ticks whose command puts a joint outside its position limits."""
        cmd = self.command
        with np.errstate(invalid="ignore"):
            bad = (cmd < self.lower_limits - 1e-9) | (cmd > self.upper_limits + 1e-9)
        return int(np.count_nonzero(np.any(bad, axis=1)))

    def summary(self, skip: float = 0.0) -> dict[str, float]:
        """Metrics of the run, ignoring the first ``skip`` seconds for the error statistics.

        Keys: ``rms_position_error_mm``, ``max_position_error_mm``,
        ``rms_orientation_error_mrad``, ``max_orientation_error_mrad``, ``tick_median_us``,
        ``tick_p99_us``, ``ticks``, ``ticks_ok``, ``ticks_braking``, ``ticks_not_ready``,
        ``ticks_none`` (ticks returning None), ``limit_violations``.
        """
        sel = self.time >= self.time[0] + skip if len(self.time) else np.zeros(0, bool)
        pos = self.position_error[sel]
        ori = self.orientation_error[sel]
        pos = pos[np.isfinite(pos)]
        ori = ori[np.isfinite(ori)]

        def rms(x: np.ndarray) -> float:
            return float(np.sqrt(np.mean(x**2))) if x.size else float("nan")

        def peak(x: np.ndarray) -> float:
            return float(np.max(x)) if x.size else float("nan")

        ticks = self.tick_time * 1e6
        return {
            "rms_position_error_mm": rms(pos) * 1e3,
            "max_position_error_mm": peak(pos) * 1e3,
            "rms_orientation_error_mrad": rms(ori) * 1e3,
            "max_orientation_error_mrad": peak(ori) * 1e3,
            "tick_median_us": float(np.median(ticks)) if ticks.size else float("nan"),
            "tick_p99_us": float(np.percentile(ticks, 99)) if ticks.size else float("nan"),
            "ticks": float(len(self.time)),
            **{f"ticks_{s}": float(np.count_nonzero(self.status == s)) for s in STATUSES[:3]},
            "ticks_none": float(np.count_nonzero(self.returned_none)),
            "limit_violations": float(self.limit_violations),
        }

    def format_summary(
        self, skip: float = 0.0, limit_rows: Sequence[tuple[str, str]] | None = None
    ) -> str:
        """The summary as an aligned two-column table.

        Args:
            skip: Seconds ignored at the start for the error statistics.
            limit_rows: Rows of a fuller limit check (for example
                :meth:`~pinkctl.motion.check.LimitReport.summary_rows`), shown instead of the
                row counting position-limit violations.
        """
        s = self.summary(skip)

        def value(key: str, unit: str, digits: int = 3) -> str:
            x = s[key]
            return f"{x:.{digits}f} {unit}" if np.isfinite(x) else "n/a"

        rows = [
            ("ticks", f"{int(s['ticks'])}"),
            ("ticks braking", f"{int(s['ticks_braking'])}"),
            ("ticks not ready", f"{int(s['ticks_not_ready'])}"),
            ("ticks returning None", f"{int(s['ticks_none'])}"),
            ("position error RMS", value("rms_position_error_mm", "mm")),
            ("position error max", value("max_position_error_mm", "mm")),
            ("orientation error RMS", value("rms_orientation_error_mrad", "mrad")),
            ("orientation error max", value("max_orientation_error_mrad", "mrad")),
            ("controller tick median", value("tick_median_us", "us", 1)),
            ("controller tick p99", value("tick_p99_us", "us", 1)),
            *(limit_rows or [("joint-limit violations", f"{int(s['limit_violations'])}")]),
        ]
        width = max(len(r[0]) for r in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)

    def save(self, path: str | Path) -> Path:
        """Write every field to a compressed ``.npz`` file (read it back with :meth:`load`)."""
        path = Path(path)
        arrays = {
            f.name: np.array(getattr(self, f.name), dtype=str)
            if f.name in _NAME_LISTS
            else np.asarray(getattr(self, f.name))
            for f in fields(self)
        }
        np.savez_compressed(path, **arrays)  # type: ignore[arg-type]
        return path

    @classmethod
    def load(cls, path: str | Path) -> ClosedLoopLog:
        """Read a log written by :meth:`save`.

        Raises:
            FileNotFoundError: No such file.
            InputError: The file is not a saved log (a field is missing).
        """
        with np.load(Path(path), allow_pickle=False) as data:
            missing = [f.name for f in fields(cls) if f.name not in data.files]
            if set(missing) - {"reasons"}:  # "reasons" may be absent
                raise InputError(f"{path}: not a saved ClosedLoopLog (no {missing[0]!r} array)")
            values: dict[str, object] = {
                f.name: data[f.name] for f in fields(cls) if f.name in data
            }
        for name in _NAME_LISTS:
            if name in values:
                values[name] = [str(x) for x in values[name]]  # type: ignore[attr-defined]
        values["tool_frame"] = str(values["tool_frame"])
        return cls(**values)  # type: ignore[arg-type]

    def plot(self, path: str | Path, title: str | None = None) -> Path:
        """Save a PNG: the tracking error over time, and the tool's path over the target's.

        The target's path is a wide translucent band and the tool's a thin line on top, so
        both stay visible when they agree to a fraction of a millimetre.

        Raises:
            MissingDependencyError: matplotlib is not installed (``pinkctl[plot]``).
        """
        plt = _pyplot()
        path = Path(path)
        fig = plt.figure(figsize=(11, 4.6))
        ax_err = fig.add_subplot(1, 2, 1)
        ax_err.plot(self.time, self.position_error * 1e3, label="position [mm]", lw=1.0)
        ax_err.plot(
            self.time,
            self.orientation_error * 1e3,
            label="orientation [mrad]",
            lw=1.0,
            color="tab:green",
        )
        ax_err.set(xlabel="time [s]", ylabel="tracking error")
        ax_err.set_title("Tracking error (MuJoCo closed loop)")
        ax_err.grid(alpha=0.3)
        ax_err.legend()
        ax_path = fig.add_subplot(1, 2, 2)
        target = self.target_position
        tool = self.tool_position
        ok = np.all(np.isfinite(target), axis=1)
        # project on the two axes along which the target moves most
        spread = np.ptp(target[ok], axis=0) if ok.any() else np.ptp(tool, axis=0)
        a, b = np.argsort(spread)[::-1][:2]
        a, b = sorted((int(a), int(b)))
        axis = "xyz"
        ax_path.plot(
            target[ok, a],
            target[ok, b],
            color="tab:orange",
            lw=9,
            alpha=0.35,
            solid_capstyle="round",
            label="target",
        )
        ax_path.plot(
            tool[:, a], tool[:, b], color="tab:blue", lw=1.0, label=f"tool ({self.tool_frame})"
        )
        ax_path.plot(tool[0, a], tool[0, b], "o", color="tab:blue", ms=5, label="start")
        ax_path.set(xlabel=f"{axis[a]} [m]", ylabel=f"{axis[b]} [m]")
        ax_path.set_aspect("equal", adjustable="datalim")
        ax_path.set_title("Traced path: tool (line) over target (band)")
        ax_path.grid(alpha=0.3)
        ax_path.legend(loc="best", fontsize="small")
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg back-end (files only, no window)."""
    try:
        import matplotlib  # noqa: PLC0415  (optional dependency)

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError as exc:
        raise MissingDependencyError(
            "plotting needs matplotlib: pip install 'pinkctl[plot]'"
        ) from exc
    return plt
