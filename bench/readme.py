"""Run the benchmarks and rewrite the README's benchmark tables.

The README holds one block per benchmark between marker comments::

    <!-- bench:step_latency:start --> ... <!-- bench:step_latency:end -->
    <!-- bench:tracking:start --> ... <!-- bench:tracking:end -->
    <!-- bench:ik:start --> ... <!-- bench:ik:end -->

Only the text between a pair of markers is replaced; the rest of the README is left byte for
byte. A block whose markers are missing is appended at the end of the README, under a
``## Benchmarks`` heading (added once if the README has none). Each block states the machine
(CPU, cores, load), the versions (Python, numpy, pin, pink, mink, mujoco, qpsolvers), the
OpenBLAS overrides of the environment (used as they are) and the date.

Usage (from the repository root; ``make bench-readme`` runs the first line)::

    python -m bench.readme                        # all three, 2000 IK targets per robot
    python -m bench.readme --full                 # 10,000 IK targets per robot (TRAC-IK's count)
    python -m bench.readme --only tracking        # rerun one block
    python -m bench.readme --quick --dry-run      # short runs, print instead of writing
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from .common import machine_line

__all__ = ["BLOCKS", "main", "replace_block"]

ROOT = Path(__file__).resolve().parents[1]
#: Block names, in README order.
BLOCKS = ("step_latency", "tracking", "ik")
_TITLES = {
    "step_latency": "Step latency",
    "tracking": "Tracking",
    "ik": "One-shot and global IK (TRAC-IK protocol)",
}
_HEADING = "## Benchmarks"


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with the block ``name`` set to ``body``.

    Replaces what lies between the block's start and end markers; if either marker is
    missing, appends the block (with a ``###`` title) at the end, under ``## Benchmarks``
    (added if the text has no such heading).

    Raises:
        ValueError: If the markers appear more than once or the end marker precedes the start.
    """
    start, end = _markers(name)
    n_start, n_end = text.count(start), text.count(end)
    if n_start > 1 or n_end > 1:
        raise ValueError(f"README has the {name!r} markers more than once")
    block = f"{start}\n{body.strip()}\n{end}"
    if n_start == 1 and n_end == 1:
        i, j = text.index(start), text.index(end)
        if j < i:
            raise ValueError(f"README's {name!r} end marker comes before its start marker")
        return text[:i] + block + text[j + len(end) :]
    out = text.rstrip("\n") + "\n"
    if not any(line.strip() == _HEADING for line in text.splitlines()):
        out += f"\n{_HEADING}\n"
    return out + f"\n### {_TITLES.get(name, name)}\n\n{block}\n"


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _progress(msg: str) -> None:
    print(f"# {msg}", file=sys.stderr, flush=True)


def _step_latency_block(steps: int) -> str:
    from . import step_latency

    rows = step_latency.run(steps, progress=_progress)
    return (
        "Per-tick time of `PinkIKController.forward` against raw pink and mink `solve_ik` "
        "on the same problem, in the same run (`python -m bench.step_latency`).\n\n"
        + step_latency.markdown(rows, machine_line())
    )


def _tracking_block(quick: bool) -> str:
    from . import tracking

    rows = tracking.run(quick=quick, progress=_progress)
    return (
        "Figure-eight tracking errors per solver (`python -m bench.tracking`).\n\n"
        + tracking.markdown(rows, machine_line())
    )


def _ik_block(n_targets: int) -> str:
    from . import ik_protocol

    _progress(f"IK protocol, {n_targets} targets per robot")
    rows = ik_protocol.run(n_targets, 0)
    return (
        "TRAC-IK's protocol with pinkctl's one-shot and global IK "
        f"(`python -m bench.ik_protocol --targets {n_targets}`).\n\n"
        + ik_protocol.markdown(rows)
        + f"\n\nMachine: {machine_line()}."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--full", action="store_true", help="10,000 IK targets per robot (default 2000)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="short runs: 300 latency steps, one figure-eight period, 200 IK targets",
    )
    parser.add_argument("--steps", type=int, default=None, help="latency steps (default 2000)")
    parser.add_argument("--only", nargs="+", choices=list(BLOCKS), default=list(BLOCKS))
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    parser.add_argument("--dry-run", action="store_true", help="print the blocks, write nothing")
    args = parser.parse_args(argv)

    steps = args.steps if args.steps is not None else (300 if args.quick else 2000)
    n_targets = 10_000 if args.full else (200 if args.quick else 2000)
    makers: dict[str, Callable[[], str]] = {
        "step_latency": lambda: _step_latency_block(steps),
        "tracking": lambda: _tracking_block(args.quick),
        "ik": lambda: _ik_block(n_targets),
    }
    if not args.dry_run and not args.readme.is_file():
        parser.error(f"README not found: {args.readme}")
    for name in BLOCKS:
        if name not in args.only:
            continue
        body = makers[name]()
        if args.dry_run:
            print(f"{_markers(name)[0]}\n{body}\n{_markers(name)[1]}\n")
            continue
        # Re-read each time: the README may have been edited while a benchmark ran.
        text = args.readme.read_text(encoding="utf-8")
        _write_atomic(args.readme, replace_block(text, name, body))
        _progress(f"README block {name!r} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
