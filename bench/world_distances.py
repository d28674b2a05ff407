"""What the reference distance queries of a robot in a world cost (to size the compiled kernel).

Franka with its 165 SRDF-filtered self pairs and 5 obstacles (the floor, a box, a sphere, a
capsule, a cylinder: 24 moving geometries each, 285 pairs), over configurations that sweep the
arm around home, interleaved in one process. Rows, median and p90 [us] per configuration:

- ``computeDistances, all pairs``: Pinocchio's ``computeDistances`` (kinematics, placements
  and one coal distance per pair, in C++);
- ``broad phase d=...``: kinematics and placements, the bounding-sphere bounds of every pair
  (numpy), then ``computeDistances`` on the pairs the bounds keep, ``d`` the influence
  distance; and that last call alone (the narrow phase a C++ broad phase would pay);
- ``CollisionScene.distances`` / ``pairs_within``: the public queries, which also build one
  Python result per pair.

Usage::

    python -m bench.world_distances [--configurations 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pinocchio as pin

from bench.common import machine_line, timing_stats_us
from pinkctl import CollisionScene, World, load_pink_supported_robot

INFLUENCE = (0.05, 0.10)  # [m]


def _scene() -> tuple[CollisionScene, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = load_pink_supported_robot("franka")
    world = World.for_robot(robot)
    world.add_box("box", size=(0.1, 0.4, 0.3), position=(0.6, 0.0, 0.15))
    world.add_sphere("ball", radius=0.08, position=(0.35, 0.35, 0.55))
    world.add_capsule("pole", radius=0.03, length=0.8, position=(0.2, -0.45, 0.4))
    world.add_cylinder("can", radius=0.05, length=0.2, position=(0.45, -0.25, 0.1))
    return CollisionScene(robot, world), robot.q0


def _configurations(q0: np.ndarray, count: int) -> list[np.ndarray]:
    """The arm swept around home: each joint on its own sine, 0.5 rad amplitude."""
    phases = np.linspace(0.0, 2.0 * np.pi, count, endpoint=False)
    rates = np.array([1.0, 2.0, 3.0, 1.5, 2.5, 3.5, 0.5, 0.0])
    return [q0 + 0.5 * np.sin(rates * t) * (rates > 0) for t in phases]


def run(configurations: int = 200, repeats: int = 5) -> dict[str, object]:
    """Timings [us] of each method (see the module docstring) and the pair counts."""
    scene, q0 = _scene()
    model, data = scene.model, scene.data
    geometry, gdata = scene.geometry_model, scene.geometry_data
    spheres = scene._spheres  # the broad phase the scene uses
    pairs = spheres.pairs
    everything = np.ones((geometry.ngeoms, geometry.ngeoms), dtype=bool)
    qs = _configurations(q0, configurations)

    def all_pairs(q: np.ndarray) -> None:
        gdata.setActiveCollisionPairs(geometry, everything)
        pin.computeDistances(model, data, geometry, gdata, q)

    kept: dict[float, list[int]] = {d: [] for d in INFLUENCE}
    narrow: dict[float, list[int]] = {d: [] for d in INFLUENCE}

    def broad(limit: float):
        def method(q: np.ndarray) -> None:
            pin.updateGeometryPlacements(model, data, geometry, gdata, q)
            near = spheres.lower_bounds(data.oMi) < limit
            mask = np.zeros_like(everything)
            chosen = pairs[near]
            mask[chosen[:, 0], chosen[:, 1]] = True
            gdata.setActiveCollisionPairs(geometry, mask)
            start = time.perf_counter_ns()
            pin.computeDistances(geometry, gdata)
            narrow[limit].append(time.perf_counter_ns() - start)
            kept[limit].append(int(near.sum()))

        return method

    methods = {"computeDistances, all pairs": all_pairs}
    methods.update({f"broad phase d={d:.2f} m": broad(d) for d in INFLUENCE})
    methods["CollisionScene.distances"] = scene.distances
    methods.update(
        {
            f"CollisionScene.pairs_within d={d:.2f}": lambda q, d=d: scene.pairs_within(q, d)
            for d in INFLUENCE
        }  # fmt: skip
    )
    times: dict[str, list[int]] = {name: [] for name in methods}
    for _ in range(repeats):
        for name, method in methods.items():
            for q in qs:
                start = time.perf_counter_ns()
                method(q)
                times[name].append(time.perf_counter_ns() - start)
    within = {
        d: float(np.mean([sum(x.distance < d for x in scene.distances(q)) for q in qs]))
        for d in INFLUENCE
    }
    return {
        "pairs": len(scene.pairs),
        "times": {name: timing_stats_us(t) for name, t in times.items()},
        "narrow": {d: timing_stats_us(t) for d, t in narrow.items()},
        "kept": {d: float(np.mean(k)) for d, k in kept.items()},
        "within": within,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configurations", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    result = run(args.configurations, args.repeats)
    print(f"franka, {result['pairs']} pairs (165 self + 5 obstacles x 24 moving geometries)")
    print(f"{'method':<36} {'median [us]':>12} {'p90 [us]':>10}")
    for name, stats in result["times"].items():  # type: ignore[union-attr]
        print(f"{name:<36} {stats['median_us']:>12.1f} {stats['p90_us']:>10.1f}")
    for d in INFLUENCE:
        stats = result["narrow"][d]  # type: ignore[index]
        print(
            f"  d={d:.2f} m: broad phase keeps {result['kept'][d]:.1f} pairs on average "  # type: ignore[index]
            f"({result['within'][d]:.1f} within d); their narrow phase alone "  # type: ignore[index]
            f"{stats['median_us']:.1f} us median"
        )
    print(machine_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
