"""Smoke tests of the benchmark scripts (behaviour, not speed).

The step-latency bench must produce well-formed rows in which the controller's fast QP path
and its pink reference path command the same joints; the tracking bench must track; the
README tool must only touch its own blocks. mink is a bench-only dependency: nothing here
needs it.
"""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if not (ROOT / "bench" / "step_latency.py").is_file():  # e.g. tests run from an sdist
    pytest.skip("the bench/ scripts are not available", allow_module_level=True)
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

step_latency = importlib.import_module("bench.step_latency")
tracking = importlib.import_module("bench.tracking")
readme = importlib.import_module("bench.readme")

TIMING_KEYS = ("median_us", "p90_us", "p99_us", "mean_us")


def _check_timings(row: dict, label: str) -> None:
    values = [row[f"{label}_{k}"] for k in TIMING_KEYS]
    assert all(isinstance(v, float) and math.isfinite(v) and v > 0 for v in values), values
    assert row[f"{label}_median_us"] <= row[f"{label}_p90_us"] <= row[f"{label}_p99_us"]
    assert row[f"{label}_failures"] == 0


def test_step_latency_fast_path_matches_pink_path():
    rows = step_latency.run(
        30,
        warmup=5,
        robots=["franka"],
        solvers=["daqp"],
        problems=[step_latency.PLAIN],
        peers=["pink"],
    )
    assert len(rows) == 1
    row = rows[0]
    assert (row["table"], row["robot"], row["problem"], row["solver"]) == (
        "step_latency",
        "franka",
        step_latency.PLAIN,
        "daqp",
    )
    assert row["steps"] == 30 and row["warmup"] == 5
    for label in ("pinkctl", "pinkpath", "pink"):
        _check_timings(row, label)
    # correctness columns: same joints as pink's own QP, over the run and tick by tick
    assert row["pinkpath_max_dq"] < 1e-9
    assert row["pinkpath_tick_max_dq"] < 1e-9
    assert row["pink_max_dq"] < 1e-9  # raw pink on the model with locked fingers
    assert row["pink_speedup"] == pytest.approx(row["pink_median_us"] / row["pinkctl_median_us"])
    assert row["mink_median_us"] is None and row["mink_note"] == "not requested"
    text = step_latency.markdown(rows, "test machine")
    assert "| franka | frame+posture | daqp |" in text
    assert "Machine: test machine." in text
    verdicts = {t["target"]: t["met"] for t in step_latency.check_targets(rows)}
    assert any(v is None for v in verdicts.values())  # osqp/clarabel/barrier not measured


def test_step_latency_runs_without_mink(monkeypatch):
    monkeypatch.setattr(step_latency, "mink", None)
    rows = step_latency.run(
        5, warmup=1, robots=["ur10"], solvers=["daqp"], problems=[step_latency.PLAIN]
    )
    assert rows[0]["mink_median_us"] is None
    assert rows[0]["mink_note"] == "mink not installed"
    assert "n/a" in step_latency.markdown(rows, "m")


def test_step_latency_self_collision_barrier_tick_matches_pink():
    rows = step_latency.run(
        10,
        warmup=1,
        robots=["franka"],
        solvers=["daqp"],
        problems=[step_latency.BARRIER],
    )
    row = rows[0]
    _check_timings(row, "pinkctl")
    assert row["pinkpath_tick_max_dq"] < 1e-9
    assert row["mink_note"] == "no equivalent barrier"


def test_tracking_kinematic_loop_tracks():
    rows = tracking.run(loops=["kinematic"], solvers=["daqp"], duration=0.05)
    assert len(rows) == 1
    row = rows[0]
    assert (row["table"], row["loop"], row["solver"]) == ("tracking", "kinematic", "daqp")
    assert row["ticks"] == 50 and row["ticks_none"] == 0
    assert 0.0 <= row["rms_position_error_mm"] <= row["max_position_error_mm"] < 0.1
    assert 0.0 <= row["rms_orientation_error_mrad"] <= row["max_orientation_error_mrad"] < 0.1
    assert "kinematic, 1 kHz" in tracking.markdown(rows, "m")


def test_readme_blocks_replace_only_between_markers():
    text = (
        "# Title\n\nintro\n<!-- bench:tracking:start -->\nold\n<!-- bench:tracking:end -->\ntail\n"
    )
    new = readme.replace_block(text, "tracking", "new table")
    assert new == (
        "# Title\n\nintro\n<!-- bench:tracking:start -->\nnew table\n"
        "<!-- bench:tracking:end -->\ntail\n"
    )
    assert readme.replace_block(new, "tracking", "new table") == new


def test_readme_missing_block_is_appended_under_benchmarks():
    text = "# Title\n\nintro\n"
    once = readme.replace_block(text, "ik", "ik table")
    assert once.startswith(text)
    assert once.count("## Benchmarks") == 1
    assert "<!-- bench:ik:start -->\nik table\n<!-- bench:ik:end -->" in once
    twice = readme.replace_block(once, "step_latency", "latency table")
    assert twice.startswith(once.rstrip("\n"))
    assert twice.count("## Benchmarks") == 1
    with pytest.raises(ValueError, match="more than once"):
        readme.replace_block(twice + twice, "ik", "x")


# ---------------------------------------------------------------------------- peers
# The peers (pytracik, roboticstoolbox-python, placo in .venv-placo) are bench-only: without
# them their rows carry a note and pinkctl's rows still run.
peers = importlib.import_module("bench.peers")
peers_ik = importlib.import_module("bench.peers_ik")
peers_tick = importlib.import_module("bench.peers_tick")
peer_process = importlib.import_module("bench.peer_process")


def test_peer_ik_rows_are_checked_by_pinkctl_forward_kinematics():
    rows = peers_ik.run(["ur5"], 20, 20, chunk=10)
    mine = {r["table"]: r for r in rows if r["solver"] == "pinkctl"}
    assert set(mine) == {"global", "warm"}
    for row in mine.values():
        assert row["queries"] == 20
        assert row["success_pct"] == row["own_success_pct"] == 100.0
        assert 0.0 < row["p50_us"] <= row["p99_us"]
    for row in rows:  # every other solver either ran on the same queries or says why not
        assert row.get("queries") == 20 or row["note"].startswith("not run")
    text = peers_ik.markdown(rows, "test machine")
    assert "| ur5 | pinkctl |" in text and "test machine" in text


def test_peer_tick_row_runs_with_or_without_placo():
    row = peers_tick.run(40, warmup=10, chunk=15)
    for label in ("default", "pinkctl"):
        assert row[f"{label}_median_us"] > 0.0
    assert row["pinkctl_max_error_mm"] < 0.1  # the tool follows the moving target
    if row["placo_note"] is None:  # placo's environment is there: same joint path
        assert row["placo_max_dq"] < 1e-3
        assert row["placo_max_error_mm"] < 0.1
    assert "pinkctl `forward`" in peers_tick.markdown(row, "test machine")
    labels = ("default_step", "default_states", "default_forward", "default_python")
    for label in (*labels, "default_step_python"):
        assert row[f"{label}_median_us"] > 0.0
    assert row["default_rows_max_dq"] < 1e-9  # the same commands, compiled or not
    assert not row["compiled"]["default_python"]


def test_tick_phases_split_both_paths():
    tick_phases = importlib.import_module("bench.tick_phases")
    row = tick_phases.run(20, warmup=5)
    assert set(row["python"]) == {*tick_phases.PYTHON_PHASES, "sum"}
    if row["compiled_available"]:
        assert set(row["compiled"]) == {*tick_phases.COMPILED_PHASES, "sum"}
        assert row["max_dq"] < 1e-9
    assert row["step"] > 0.0 and "test machine" in tick_phases.markdown(row, "test machine")


def test_verdicts_name_met_and_missed_targets():
    def row(table, solver, **numbers):
        return {"table": table, "robot": "r", "solver": solver, **numbers}

    rows = [
        row("global", "pinkctl", success_pct=100.0, mean_us=100.0),
        row("global", "RTB ik_LM", success_pct=100.0, mean_us=250.0),
        row("global", "TRAC-IK", success_pct=99.0, mean_us=90.0),
        row("warm", "pinkctl", p50_us=20.0, mean_us=25.0, success_pct=100.0),
        row("warm", "RTB ik_LM", p50_us=18.0, mean_us=25.0, success_pct=100.0),
        row("warm", "pinkctl (baseline)", p50_us=120.0, mean_us=130.0),
    ]
    tick = {"default_median_us": 50.0, "placo_median_us": 10.0}
    lines = peers.verdicts(rows, tick)
    assert any("global IK vs ik_LM, r" in line and line.endswith("MET") for line in lines)
    assert any("warm-started IK vs ik_LM, r" in line and line.endswith("MISSED") for line in lines)
    assert any("vs TRAC-IK, r" in line and line.endswith("MISSED") for line in lines)
    assert any("tracking vs today, r" in line and line.endswith("MET") for line in lines)
    assert any("control tick" in line and line.endswith("MISSED") for line in lines)


def test_chunk_worker_round_trip():
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from bench.peer_process import serve\n"
        "serve({'ready': 1}, lambda r: {'sum': r['a'] + r['b']})\n"
    )
    worker = peer_process.ChunkWorker([sys.executable, "-c", code, str(ROOT)])
    try:
        assert worker.ready == {"ready": 1}
        assert worker.request({"a": 2, "b": 3}) == {"sum": 5}
    finally:
        worker.close()
    assert worker.process.returncode == 0


def test_ik_collision_bench_rows_are_well_formed():
    ik_collision = importlib.import_module("bench.ik_collision")
    rows, note = ik_collision.robot_rows("franka", 6, 0, repeats=1)
    assert note.startswith("franka: 6 targets")
    by_variant = {row["variant"]: row for row in rows}
    assert set(by_variant) == {
        "blind",
        "blind + final filter",
        "self-collision",
        "default (self + floor)",
        "default, margin 0",
    }
    default = by_variant["default (self + floor)"]
    assert default["success_pct"] == 100.0 and default["collision_pct"] == 0.0
    assert by_variant["default, margin 0"]["penetration_pct"] == 0.0
    assert all(math.isfinite(row["mean_ms"]) and row["mean_ms"] > 0 for row in rows)


def test_collision_bench_rows():
    collision = importlib.import_module("bench.collision")
    rows = collision.tick_rows(4, chunk=2, warmup=1)
    names = [row["variant"] for row in rows]
    assert names[:3] == [
        "pinkctl, no collision",
        "pinkctl + pink SelfCollisionBarrier",
        "pink solve_ik + SelfCollisionBarrier",
    ]
    assert rows[0]["ratio"] == 1.0 and all(row["failures"] == 0 for row in rows)
    assert all(row["pairs"] == 165 for row in rows[1:3])
    blind, checked = collision.ik_rows(6)
    assert checked["in_collision"] == 0.0 and 0.0 < checked["success"] <= 1.0
    assert blind["variant"] == "find_ik, collision-blind"


def test_whole_body_bench_rows():
    whole_body = importlib.import_module("bench.whole_body")
    rows = whole_body.run(20, warmup=5, chunk=10)
    assert [r["variant"] for r in rows] == list(whole_body.VARIANTS)
    for row in rows:
        assert 0 < row["median_us"] <= row["p99_us"]
        assert row["max_foot_motion_mm"] < 1.0  # contacts held in every variant
    assert rows[0]["ratio"] == 1.0
    assert "× weighted" in whole_body.markdown(rows)


def test_default_solver_bench_rows():
    """bench.default_solver (docs/isaac.md's numbers): one row per solver, the same commands."""
    rows = importlib.import_module("bench.default_solver").run(ticks=20, warmup=5)
    assert [row["solver"] for row in rows] == ["box", "daqp", "osqp"]
    for row in rows:
        assert 0.0 < row["median_us"] <= row["p90_us"]
        assert row["max_dq"] < 1e-6


def test_pool_efficiency_runs_alone_and_prints_the_load_beside_each_figure():
    """bench.pool_efficiency in a fresh interpreter (what bench.report runs): the same answers
    as one process (and as the workers' code run here), the CPU ratio split into the busy-core
    part and the pool's own, the load on every line."""
    pool_efficiency = importlib.import_module("bench.pool_efficiency")
    result = pool_efficiency.run_fresh(20, workers=1, repeats=1)
    assert result["same_answers"] and result["targets"] == 20
    split = result["busy_core_ratio"] * result["pool_own_ratio"]
    assert math.isclose(split, result["cpu_ratio"], rel_tol=1e-9)
    # the workers' own clocks: their solve_chunk time is part of their CPU time, the rest is
    # what the processes and pipes cost
    assert 0.0 < result["worker_solve_cpu"] < result["pool_cpu"]
    own = result["pool_cpu"] - result["worker_solve_cpu"]
    assert math.isclose(result["worker_own_ratio"] * result["one_cpu"], own, rel_tol=1e-9)
    lines = pool_efficiency.lines(result)
    assert all("1-min load" in line for line in lines[1:])
    assert any(line.startswith("CPU time split:") for line in lines)
    # the plain loop (each generator built alone) is a row beside the in-process baseline
    assert result["loop_ratio"] > 0.0 and any(line.startswith("a loop of") for line in lines)
