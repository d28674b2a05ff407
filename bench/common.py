"""Helpers shared by the benchmark scripts: machine description, statistics, solver list."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import time
from typing import Any

import numpy as np

__all__ = [
    "BENCH_SOLVERS",
    "bench_solvers",
    "machine_info",
    "machine_line",
    "time_phases",
    "timing_stats_us",
]

#: Backends the benchmarks compare, in table order (those installed are used).
BENCH_SOLVERS = ("daqp", "quadprog", "proxqp", "osqp", "clarabel")


def bench_solvers(requested: list[str] | None = None) -> list[str]:
    """Installed solvers among ``requested`` (default :data:`BENCH_SOLVERS`), in that order.

    Raises:
        ValueError: If a requested solver is not installed.
    """
    import qpsolvers

    installed = set(qpsolvers.available_solvers)
    if requested is None:
        return [s for s in BENCH_SOLVERS if s in installed]
    missing = [s for s in requested if s not in installed]
    if missing:
        raise ValueError(f"solvers {missing} are not installed; installed: {sorted(installed)}")
    return list(requested)


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "n/a"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    """Machine, versions, OpenBLAS overrides, load and date, as a flat dict of strings."""
    try:
        load = f"{os.getloadavg()[0]:.2f}"
    except OSError:
        load = "n/a"
    return {
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "load_1min": load,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pin": _version("pin"),
        "pink": _version("pin-pink"),
        "mink": _version("mink"),
        "mujoco": _version("mujoco"),
        "qpsolvers": _version("qpsolvers"),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "unset"),
        "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE", "unset"),
        "date": datetime.date.today().isoformat(),
    }


def machine_line(info: dict[str, Any] | None = None) -> str:
    """One line: CPU, cores, load, versions, OpenBLAS overrides and date."""
    i = machine_info() if info is None else info
    return (
        f"{i['cpu']}, {i['cores']} cores (1-min load {i['load_1min']}); "
        f"Python {i['python']}, numpy {i['numpy']}, pin {i['pin']}, pink {i['pink']}, "
        f"mink {i['mink']}, mujoco {i['mujoco']}, qpsolvers {i['qpsolvers']}; "
        f"OPENBLAS_CORETYPE={i['OPENBLAS_CORETYPE']}, OPENBLAS_L2_SIZE={i['OPENBLAS_L2_SIZE']}; "
        f"{i['date']}"
    )


def timing_stats_us(samples_ns: np.ndarray | list[int]) -> dict[str, float]:
    """Median, p90, p99 and mean [µs] of durations given in nanoseconds."""
    a = np.asarray(samples_ns, dtype=np.float64) * 1e-3
    if a.size == 0:
        nan = float("nan")
        return {"median_us": nan, "p90_us": nan, "p99_us": nan, "mean_us": nan}
    p50, p90, p99 = np.percentile(a, [50, 90, 99])
    return {
        "median_us": float(p50),
        "p90_us": float(p90),
        "p99_us": float(p99),
        "mean_us": float(a.mean()),
    }


def time_phases(controller: Any, variant: Any, k: int) -> tuple[int, int, int, int, int, int]:
    """Tick ``k`` of ``variant`` (a :mod:`bench.step_latency` variant, prepared for tick ``k``)
    run through ``controller``'s six public phases of ``forward`` one by one: read the
    estimate, forward kinematics, target update, QP, shaping, output state. Sets
    ``variant.output``; returns each phase's duration [ns].

    Raises:
        AssertionError: The estimate is unreadable or the QP has no solution.
    """
    perf = time.perf_counter_ns
    estimate, setpoint = variant.estimated, variant.setpoints[k]
    t0 = perf()
    read = controller.read_estimate(estimate)
    t1 = perf()
    assert read is not None
    controller.update_configuration(read[0], read[1], estimate.root)
    t2 = perf()
    controller.update_targets(setpoint)
    t3 = perf()
    velocity = controller.solve()
    t4 = perf()
    assert velocity is not None, controller.last_error
    positions, rates, root = controller.shape(velocity)
    t5 = perf()
    variant.output = controller.write_command(positions, rates, root)
    t6 = perf()
    return (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5)
