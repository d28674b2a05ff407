"""All peer rows in one command (``make bench-peers``): tick vs placo, IK vs TRAC-IK and ik_LM.

Runs :mod:`bench.peers_tick` and :mod:`bench.peers_ik` (their docstrings define the
problems), prints the tables, the ratios and a verdict per target of issue 19, and writes
them to ``bench/results/peers.md``; with ``--write-docs`` the same text replaces the block
``<!-- bench:peers:start -->`` ... ``<!-- bench:peers:end -->`` of ``docs/performance.md``.

Targets checked (each on every robot of the IK table):

- global IK: pinkctl at 100 % success (by pinkctl's FK) at a mean time at most half the
  Robotics Toolbox's ``ik_LM``'s (issue 27); ahead of TRAC-IK (success at least its own, mean
  time smaller);
- warm-started tracking: median time below ``ik_LM``'s (issue 27);
- warm-started tracking: median time at least 5x smaller than "today's" pinkctl
  (``--baseline``, the revision before the change);
- the control tick: the default controller's median within 2x of placo's;
- batches (:mod:`bench.pool_efficiency`): an ``IKPool`` of 2 workers uses at most 1.15x one
  process's CPU time and reaches 1.8x its throughput when two cores are free (issue 27).

Usage::

    python -m bench.peers --baseline ad22584 --write-docs
    python -m bench.peers --targets 200 --warm 200 --steps 300 --robots franka ur5
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

from . import peers_ik, peers_tick, pool_efficiency, step_latency
from .common import machine_line
from .readme import replace_block

__all__ = ["main", "verdicts"]

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "peers.md"
DOCS = ROOT / "docs" / "performance.md"


def _row(rows: list[dict[str, Any]], table: str, robot: str, solver: str) -> dict[str, Any]:
    for r in rows:
        if (r["table"], r["robot"], r["solver"]) == (table, robot, solver) and "note" not in r:
            return r
    return {}


def verdicts(ik_rows: list[dict[str, Any]], tick: dict[str, Any]) -> list[str]:
    """One line per target and robot: the numbers and MET / MISSED / not measured."""
    out = peers_ik.ik_verdicts(ik_rows)  # issue 27: warm and global IK against ik_LM
    robots = list(dict.fromkeys(r["robot"] for r in ik_rows))
    for robot in robots:
        mine = _row(ik_rows, "global", robot, "pinkctl")
        for peer in ("TRAC-IK",):
            theirs = _row(ik_rows, "global", robot, peer)
            if not mine or not theirs:
                out.append(f"global IK vs {peer}, {robot}: not measured")
                continue
            success_ok = mine["success_pct"] >= theirs["success_pct"]
            faster = mine["mean_us"] < theirs["mean_us"]
            reruns = mine.get("reruns", "0/0")
            rerun = (
                f"; pinkctl's failures solved when asked again: {reruns}" if reruns != "0/0" else ""
            )
            out.append(
                f"global IK vs {peer}, {robot}: success {mine['success_pct']:.2f} % vs "
                f"{theirs['success_pct']:.2f} %, mean {mine['mean_us']:.0f} µs vs "
                f"{theirs['mean_us']:.0f} µs ({theirs['mean_us'] / mine['mean_us']:.2f}x)"
                f"{rerun} -> {'MET' if success_ok and faster else 'MISSED'}"
            )
        now = _row(ik_rows, "warm", robot, "pinkctl")
        before = _row(ik_rows, "warm", robot, "pinkctl (baseline)")
        if now and before:
            ratio = before["p50_us"] / now["p50_us"]
            mean_ratio = before["mean_us"] / now["mean_us"]
            out.append(
                f"warm-started tracking vs today, {robot}: median {now['p50_us']:.1f} µs vs "
                f"{before['p50_us']:.1f} µs ({ratio:.2f}x; mean {mean_ratio:.2f}x)"
                f" -> {'MET' if ratio >= 5.0 else 'MISSED'}"
            )
        else:
            out.append(f"warm-started tracking vs today, {robot}: not measured (no --baseline)")
    if "placo_median_us" in tick:
        ratio = tick["default_median_us"] / tick["placo_median_us"]
        out.append(
            f"control tick vs placo (default settings): median {tick['default_median_us']:.1f} µs"
            f" vs {tick['placo_median_us']:.1f} µs ({ratio:.2f}x placo's) -> "
            f"{'MET' if ratio <= 2.0 else 'MISSED'}"
        )
    else:
        out.append(f"control tick vs placo: not measured ({tick.get('placo_note')})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", nargs="+", default=list(peers_ik.ROBOTS))
    parser.add_argument("--targets", type=int, default=1000, help="global IK targets per robot")
    parser.add_argument("--warm", type=int, default=1000, help="warm-started queries per robot")
    parser.add_argument("--steps", type=int, default=2000, help="control ticks")
    parser.add_argument("--pool-targets", type=int, default=4000, help="IKPool batch size")
    parser.add_argument("--baseline", default=None, help="git revision of today's pinkctl")
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the peers' deprecation and loader warnings
    machine = machine_line()
    tick = peers_tick.run(args.steps)
    phases = step_latency.profile_forward("franka", "daqp", args.steps)
    ik_rows = peers_ik.run(
        args.robots,
        args.targets,
        args.warm,
        baseline=args.baseline,
        progress=lambda m: print(f"# {m}", file=sys.stderr),
    )
    pool = pool_efficiency.run(args.pool_targets, 2, 3)  # issue 27: IKPool vs one process
    checks = "\n".join(
        f"- {line}" for line in verdicts(ik_rows, tick) + pool_efficiency.lines(pool)
    )
    baseline = f" (today: `{args.baseline}`)" if args.baseline else ""
    profile = "\n".join(
        ["| phase of `forward` (motion limits off) | median µs |", "|---|---|"]
        + [f"| {name} | {value:.1f} |" for name, value in phases.items()]
    )
    text = (
        f"**Control tick** (`python -m bench.peers_tick`)\n\n{peers_tick.markdown(tick, machine)}"
        f"\n\nWhere pinkctl's tick goes (`python -m bench.step_latency --profile`, same "
        f"problem):\n\n{profile}\n\n{peers_ik.markdown(ik_rows, machine)}\n\n"
        f"**Targets of issue 19**{baseline}\n\n{checks}\n"
    )
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    if args.write_docs:
        DOCS.write_text(replace_block(DOCS.read_text(encoding="utf-8"), "peers", text), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
