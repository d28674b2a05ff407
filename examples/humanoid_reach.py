"""A standing humanoid reaching with one hand, its feet fixed and its CoM over its feet.

What it shows: whole-body control. The catalog humanoid (g1 or talos) is loaded with a
floating base (``load_pink_supported_robot(name, floating_base=True)``) and its legs, waist
and left arm controlled; ``MujocoSimulation.from_robot`` stands it on the floor under gravity
(the joints carry its weight through the feet: :mod:`pinkctl.sim.stance`). A
:class:`~pinkctl.PinkIKController` holds the feet as contacts (``contacts=``), keeps the CoM
inside their support polygon with a 5 cm margin (``support_margin=``), and puts the hand
strictly above the posture (``priority_levels=[["frame"], ["posture"]]``). The hand then
reaches ten targets around the body, the last one 0.2 m above the floor in front, each along a
minimum-jerk path of 6 s held for 1 s (:func:`pinkctl.app.whole_body.run_reach`).

Every target is checked (issue 26's acceptance): hand within 5 mm at the end of the hold,
pelvis drop below 0.15 m, no body but the feet on the floor, each foot within 5 mm of its
stance, the simulated CoM inside the support polygon on every tick, every command within the
position and velocity limits. The table lists them; the example passes when every target does.

Run::

    python examples/humanoid_reach.py
    python examples/humanoid_reach.py --robot talos --picture talos.png
    python examples/humanoid_reach.py --quick
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from pinkctl.app.whole_body import HUMANOIDS, REACH_SECONDS, ReachReport, run_reach


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--robot", choices=sorted(HUMANOIDS), default="g1")
    parser.add_argument(
        "--quick", action="store_true", help="two targets near the hand, 3 s reaches"
    )
    parser.add_argument("--picture", default=None, help="write the last frame to this .png")
    args = parser.parse_args(argv)
    frames: list[np.ndarray] = []

    def keep_last(sim) -> None:  # type: ignore[no-untyped-def]
        if args.picture and sim.time > keep_last.next:  # type: ignore[attr-defined]
            frames[:] = [sim.render(960, 720)]
            keep_last.next = sim.time + 0.5  # type: ignore[attr-defined]

    keep_last.next = 0.0  # type: ignore[attr-defined]
    report: ReachReport = run_reach(
        args.robot,
        offsets=[(0.1, 0.0, 0.0), (0.1, 0.05, -0.1)] if args.quick else None,
        seconds=3.0 if args.quick else REACH_SECONDS,
        on_tick=keep_last if args.picture else None,
    )
    print(report.table)
    if args.picture and frames:
        from PIL import Image  # noqa: PLC0415

        Image.fromarray(frames[-1]).save(args.picture)
        print(f"picture written to {args.picture}")
    ok = report.passed == len(report.rows)
    print(f"humanoid_reach [{'OK' if ok else 'FAILED'}]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
