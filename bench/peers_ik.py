"""Global and warm-started IK against the C++-backed peers, same targets, interleaved.

Peers (the ``bench-peers`` extra): TRAC-IK through its Python bindings ``pytracik`` (KDL-RR
and an SQP solver run concurrently in two threads, "Speed" mode: the first solution wins) and
the Robotics Toolbox for Python's ``ik_LM`` (``roboticstoolbox-python``: Levenberg-Marquardt
in C++ with random restarts, called through ``ETS.ik_LM``). A peer that is not installed is
left out of the table with the reason.

Problem, per robot (pinkctl's bundled and catalog robots):

- the chain: from the URDF's root link to the robot's tool frame (a URDF link); its movable
  joints are exactly the robot's controlled joints (checked), the IK's moved joints for
  every solver; every peer reads the same URDF file as pinkctl, and its forward kinematics
  is checked against pinkctl's at random configurations (1e-9) before timing;
- **global** (TRAC-IK's protocol): targets are the tool poses of configurations drawn
  uniformly within the joint limits (a continuous joint in [-pi, pi]); every query starts
  from the nominal configuration (the middle of each range, 0 for a continuous joint);
  pinkctl ``find`` with its default options (a deterministic count budget: 1,000 residual
  evaluations, restarts drawn from seed 0), TRAC-IK with a 5 ms budget (it has no count
  budget), ``ik_LM`` with its default 100 searches of 30 iterations at most; the mean time
  counts failures at the time they took;
- **warm-started tracking**: targets 1 cm apart on a 10 cm circle (y-z plane, fixed
  orientation) starting near the robot's home configuration, each query seeded with the
  previous solution (pinkctl ``IKSolver.solve``, TRAC-IK with the same 5 ms budget,
  ``ik_LM``); not for arms with fewer than 6 joints, which cannot hold the orientation;
- **success** is checked by pinkctl's forward kinematics on every solver's answer: every
  axis within 1e-5 (x, y, z [m]; the world-frame rotation vector ``log3(R R*ᵀ)`` [rad]) and
  every joint within its limits (1e-6 slack: TRAC-IK stores limits in single precision). Each
  solver's own verdict is reported too ("own %"): TRAC-IK checks its 1e-5 in the target
  frame, ``ik_LM`` a squared-error threshold (``tol`` 5e-11, i.e. an error norm of 1e-5).

Timing: ``time.perf_counter_ns`` around each call (the peers get their targets and seeds as
prepared arrays), with the garbage collector on (what a user's loop sees; ``--gc-off`` turns
it off while timing). Solvers take turns per target (``--chunk 1``, the default): each
solver's query on a target runs between the other solvers' queries, as in a program that
does other work between IK calls, and load changes hit every solver alike. TRAC-IK takes its
turns in blocks of 50 targets (:data:`SEPARATE`).

:func:`ik_verdicts` prints issue 27's lines: warm-started median below ``ik_LM``'s, global
mean at most half of ``ik_LM``'s at 100 % success, per robot, with the machine's load.

"Today's" pinkctl (``--baseline REV``, a git revision, e.g. the commit before a change) runs
the warm-started rows in a worker process importing that revision's sources
(:mod:`bench.peer_process`), in turns with the others.

Usage::

    python -m bench.peers_ik                       # 2,000 global targets per robot
    python -m bench.peers_ik --targets 300 --robots franka ur5 kinova xarm7
    python -m bench.peers_ik --baseline ad22584

``run(...) -> list[dict]`` returns the rows; ``markdown(rows)`` formats them.
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .common import machine_line
from .peer_process import ChunkWorker
from .peers_ik_solvers import ROBOTS, Chain, make_solvers, peer_versions, timed_turn, warm_targets

__all__ = ["ROBOTS", "ik_verdicts", "markdown", "run"]

ROOT = Path(__file__).resolve().parents[1]
#: Solvers that take their turns in blocks of SEPARATE_TURN targets: TRAC-IK runs two threads
#: for up to 5 ms per query, which leaves whatever runs next with cold caches (measured: the
#: next solver's Python code 6x slower), so the others alternate per target between them.
SEPARATE = ("TRAC-IK",)
SEPARATE_TURN = 50


def _summary(
    times: list[int], fk_ok: list[bool], own_ok: list[bool], cpu: list[int]
) -> dict[str, Any]:
    t = np.asarray(times, dtype=np.float64) * 1e-3  # µs
    return {
        "cpu_mean_us": float(np.mean(cpu)) * 1e-3,
        "queries": len(times),
        "success_pct": 100.0 * float(np.mean(fk_ok)),
        "own_success_pct": 100.0 * float(np.mean(own_ok)),
        "mean_us": float(t.mean()),
        "p50_us": float(np.percentile(t, 50)),
        "p99_us": float(np.percentile(t, 99)),
    }


def _baseline_worker(revision: str, robot: str, n: int, seed: int, tmp: Path) -> ChunkWorker:
    """A worker running the warm-started rows with ``revision``'s pinkctl sources."""
    tree = tmp / "baseline"
    if not tree.is_dir():
        tree.mkdir(parents=True)
        archive = subprocess.run(
            ["git", "archive", revision, "src", "robot_configurations"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    command = [sys.executable, "-m", "bench.peers_ik_solvers", robot, str(n), str(seed)]
    return ChunkWorker(command, env={"PYTHONPATH": f"{tree / 'src'}:{ROOT}"}, cwd=str(ROOT))


def _robot_rows(
    name: str,
    n_targets: int,
    n_warm: int,
    seed: int,
    chunk: int,
    worker: ChunkWorker | None,
    gc_off: bool,
) -> list[dict[str, Any]]:
    chain = Chain(name)
    solvers, notes = make_solvers(chain)
    targets = chain.global_targets(n_targets, seed)
    # An arm with fewer than 6 joints cannot hold a fixed orientation along the circle.
    warm_note = "no warm rows: fewer than 6 joints hold no fixed orientation on a circle"
    n_warm = n_warm if chain.n >= 6 else 0
    start, warm = warm_targets(chain, n_warm, seed)
    for solver in solvers.values():
        solver.start_warm(start)
    acc: dict[tuple[str, str], list[list[Any]]] = {}
    for label in solvers:
        acc["global", label] = [[], [], [], []]
        acc["warm", label] = [[], [], [], []]
    if worker is not None and n_warm > 0:
        acc["warm", "pinkctl (baseline)"] = [[], [], [], []]
    gc.collect()
    if gc_off:
        gc.disable()
    try:
        for first in range(0, max(n_targets, n_warm), chunk):
            for label, solver in solvers.items():
                turn = max(chunk, SEPARATE_TURN) if label in SEPARATE else chunk
                if first % turn:
                    continue
                for table, query, queries in (
                    ("global", solver.global_query, targets),
                    ("warm", solver.warm_query, warm),
                ):
                    if first >= len(queries):
                        continue
                    got = timed_turn(query, queries, first, first + turn, chain)
                    for into, values in zip(acc[table, label], got, strict=True):
                        into.extend(values)
            if worker is not None and first < n_warm:
                reply = worker.request({"start": first, "stop": first + chunk})
                for into, key in zip(
                    acc["warm", "pinkctl (baseline)"],
                    ("times", "fk_ok", "own_ok", "cpu"),
                    strict=True,
                ):
                    into.extend(reply[key])
    finally:
        gc.enable()
    rows = [
        {"table": table, "robot": name, "solver": label, **_summary(*values)}
        for (table, label), values in sorted(acc.items(), key=lambda kv: kv[0][0])
        if values[0]
    ]
    for row in rows:
        remark = getattr(solvers.get(row["solver"]), "remark", None)
        if remark is not None:
            row["remark"] = remark
        if row["table"] == "global" and row["solver"] == "pinkctl":
            row["reruns"] = _rerun_failures(solvers["pinkctl"], targets, acc["global", "pinkctl"])
    if n_warm == 0:
        rows.append({"table": "warm", "robot": name, "solver": "all", "note": warm_note})
    for label, note in notes.items():
        rows += [
            {"table": t, "robot": name, "solver": label, "note": note} for t in ("global", "warm")
        ]
    return rows


def _rerun_failures(solver: Any, targets: list[Any], results: list[list[Any]]) -> str:
    """``"solved/failed"``: pinkctl's failed global queries asked once more, untimed. A
    query that then succeeds within its 5 ms ran out of wall-clock time the first time (the
    process was descheduled on a loaded machine), not out of search."""
    failed = [k for k, ok in enumerate(results[1]) if not ok]
    solved = sum(bool(solver.global_query(targets[k], k)[1]) for k in failed)
    return f"{solved}/{len(failed)}"


def run(
    robots: tuple[str, ...] | list[str] = ROBOTS,
    n_targets: int = 2000,
    n_warm: int = 1000,
    *,
    seed: int = 0,
    chunk: int = 1,
    baseline: str | None = None,
    progress: Any = None,
    gc_off: bool = False,
) -> list[dict[str, Any]]:
    """Global and warm-started rows of every robot (module docstring).

    Returns:
        Rows with keys ``table`` ("global" or "warm"), ``robot``, ``solver``, ``queries``,
        ``success_pct`` (pinkctl's FK check), ``own_success_pct``, ``mean_us``, ``p50_us``,
        ``p99_us``; a solver that could not run has ``note`` instead of numbers. With
        ``baseline``, the warm table has a row "pinkctl (baseline)".
    """
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in robots:
            if progress is not None:
                progress(name)
            worker = (
                _baseline_worker(baseline, name, n_warm, seed, Path(tmp))
                if baseline is not None
                else None
            )
            try:
                rows += _robot_rows(name, n_targets, n_warm, seed, chunk, worker, gc_off)
            finally:
                if worker is not None:
                    worker.close()
    return rows


def _ratio(rows: list[dict[str, Any]], table: str, robot: str, peer: str, key: str) -> str:
    mine = [r for r in rows if (r["table"], r["robot"], r["solver"]) == (table, robot, "pinkctl")]
    theirs = [r for r in rows if (r["table"], r["robot"], r["solver"]) == (table, robot, peer)]
    if not mine or not theirs or key not in theirs[0] or key not in mine[0]:
        return "n/a"
    return f"{theirs[0][key] / mine[0][key]:.2f}x"


def markdown(rows: list[dict[str, Any]], machine: str | None = None) -> str:
    """Two tables (global, warm-started) with pinkctl's speed-up over each peer."""
    out = []
    for table, key, title in (
        ("global", "mean_us", "Global IK, TRAC-IK protocol (nominal seed, 1e-5)"),
        ("warm", "p50_us", "Warm-started tracking (seed = previous solution, 1 cm steps)"),
    ):
        subset = [r for r in rows if r["table"] == table]
        if not subset:
            continue
        out += [
            f"**{title}**",
            "",
            "| robot | solver | success % (FK) | own % | mean µs | p50 µs | p99 µs | CPU mean µs | "
            f"peer {'mean' if key == 'mean_us' else 'p50'} / pinkctl |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in subset:
            if "note" in r:
                out.append(f"| {r['robot']} | {r['solver']} | {r['note']} |  |  |  |  |  |  |")
                continue
            ratio = (
                ""
                if r["solver"] == "pinkctl"
                else _ratio(rows, table, r["robot"], r["solver"], key)
            )
            out.append(
                f"| {r['robot']} | {r['solver']} | {r['success_pct']:.2f} | "
                f"{r['own_success_pct']:.2f} | {r['mean_us']:.0f} | {r['p50_us']:.0f} | "
                f"{r['p99_us']:.0f} | {r['cpu_mean_us']:.0f} | {ratio} |"
            )
        out.append("")
    remarks = sorted({f"{r['robot']}, {r['solver']}: {r['remark']}" for r in rows if "remark" in r})
    out += [f"Note: {remark}." for remark in remarks]
    out.append(f"Peers: {peer_versions()}. Machine: {machine or machine_line()}.")
    return "\n".join(out)


def ik_verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """Issue 27's lines per robot: warm-started median below ``ik_LM``'s; global mean at
    most 0.5x ``ik_LM``'s with pinkctl at 100 % success. MET / MISSED / not measured."""
    out = []
    for robot in dict.fromkeys(r["robot"] for r in rows):
        for table, key, rule in (("warm", "p50_us", "median"), ("global", "mean_us", "mean")):
            pair = [
                next((r for r in rows if (r["table"], r["robot"], r["solver"]) == k), None)
                for k in ((table, robot, "pinkctl"), (table, robot, "RTB ik_LM"))
            ]
            mine, theirs = pair
            label = "warm-started IK" if table == "warm" else "global IK"
            if mine is None or theirs is None or "note" in mine or "note" in theirs:
                out.append(f"{label} vs ik_LM, {robot}: not measured")
                continue
            ratio = mine[key] / theirs[key]
            met = ratio < 1.0 if table == "warm" else ratio <= 0.5 and mine["success_pct"] == 100
            cpu = ""
            if "cpu_mean_us" in mine and "cpu_mean_us" in theirs:
                cpu = (
                    f"; CPU-time mean {mine['cpu_mean_us']:.1f} vs {theirs['cpu_mean_us']:.1f} "
                    f"µs, {mine['cpu_mean_us'] / theirs['cpu_mean_us']:.2f}x"
                )
            out.append(
                f"{label} vs ik_LM, {robot}: {rule} {mine[key]:.1f} µs vs {theirs[key]:.1f} µs "
                f"({ratio:.2f}x ik_LM's{cpu}), success "
                f"{mine['success_pct']:.1f} % vs {theirs['success_pct']:.1f} % "
                f"-> {'MET' if met else 'MISSED'}"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", nargs="+", default=list(ROBOTS))
    parser.add_argument("--targets", type=int, default=2000, help="global targets per robot")
    parser.add_argument("--warm", type=int, default=1000, help="warm-started queries per robot")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=1, help="queries per solver per turn")
    parser.add_argument("--gc-off", action="store_true", help="garbage collector off in timing")
    parser.add_argument("--baseline", default=None, help="git revision of today's pinkctl")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the peers' deprecation and loader warnings
    rows = run(
        args.robots,
        args.targets,
        args.warm,
        seed=args.seed,
        chunk=args.chunk,
        baseline=args.baseline,
        progress=lambda m: print(f"# {m}", file=sys.stderr),
        gc_off=args.gc_off,
    )
    machine = machine_line()
    print(markdown(rows, machine))
    print("\n".join(f"- {line}" for line in ik_verdicts(rows)))
    print(f"(load at the end: {machine})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
