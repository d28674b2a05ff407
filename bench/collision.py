"""What collision avoidance costs: the control tick and the global IK, with and without it.

One process, franka, the SRDF-filtered self pairs (165); every tick variant runs its own
kinematic loop on the step-latency bench's moving target (:mod:`bench.step_latency`: 10 cm
circle in the y-z plane, roll, 5 ms period), in chunks of ``--chunk`` ticks taken in turn so
that machine load hits all alike. Medians and p90 [us], and the ratio to the collision-free
tick:

- **pinkctl, no collision**: ``PinkIKController.forward`` with its default settings;
- **pinkctl + pink SelfCollisionBarrier**: the same with pink's barrier over the robot's
  collision model (``extra_barriers``, pink's default ``d_min`` 1 cm);
- **pink + SelfCollisionBarrier**: raw pink ``solve_ik`` (DAQP) with the same barrier;
- **mink + CollisionAvoidanceLimit**: raw mink ``solve_ik`` (DAQP) on the MuJoCo model
  compiled from the same URDF, the same link pairs (``geom_pairs`` per link pair), detection
  distance 5 cm and 1 m (every pair);
- **pinkctl with avoidance** (:func:`avoidance_variants`): ``PinkIKController(...,
  world=...)``, self-collision only and self + 5 obstacles, when this pinkctl's controller
  takes a world.

Global IK (TRAC-IK protocol, :mod:`bench.ik_protocol`; targets from collision-free
configurations, every query from the nominal configuration, count-based budgets): success,
answers in self-collision and mean time of ``IKSolver.find`` collision-blind and with a
``validate`` callback that rejects colliding answers (the baseline the native ``world=`` of
the IK is measured against).

Usage::

    python -m bench.collision                  # 2000 ticks, 300 IK targets
    python -m bench.collision --steps 500 --targets 100
"""

from __future__ import annotations

import argparse
import inspect
import time
import warnings
from typing import Any

import numpy as np
import pinocchio as pin

from bench.common import machine_line, timing_stats_us
from bench.ik_protocol import TOLERANCE
from bench.step_latency import (
    DT,
    PinkctlVariant,
    _Mink,
    _peer_models,
    _Pink,
    _Variant,
    home_tool_pose,
    mink,
    moving_target,
)
from pinkctl import CollisionScene, PinkIKController, World, load_pink_supported_robot
from pinkctl.ik import IKSolver
from pinkctl.world import RobotGeometry

WARMUP = 200
#: Whether this pinkctl's controller avoids collisions (``world=``, ``self_collision=``).
AVOIDS = "world" in inspect.signature(PinkIKController.__init__).parameters
#: Options that keep the controller's own avoidance off (on by default where it exists).
NO_AVOIDANCE: dict[str, Any] = {"self_collision": False} if AVOIDS else {}
MINK_DETECTION = (0.05, 1.0)  # [m]
MINK_MARGIN = 0.01  # [m] minimum distance, as pink's d_min


def _robot(collision: bool) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_pink_supported_robot("franka", build_collision_model=collision)


def five_obstacles(robot: Any) -> World:
    """The floor and four obstacles around the franka's workspace (bench.world_distances')."""
    world = World.for_robot(robot)
    world.add_box("box", size=(0.1, 0.4, 0.3), position=(0.6, 0.0, 0.15))
    world.add_sphere("ball", radius=0.08, position=(0.35, 0.35, 0.55))
    world.add_capsule("pole", radius=0.03, length=0.8, position=(0.2, -0.45, 0.4))
    world.add_cylinder("can", radius=0.05, length=0.2, position=(0.45, -0.25, 0.1))
    return world


class _MinkCollision(_Mink):
    """mink with ``CollisionAvoidanceLimit`` over the robot geometry's link pairs."""

    def __init__(self, peer: Any, robot: Any, target: Any, *, detection: float, n_total: int):
        super().__init__(peer, target, "daqp", n_total=n_total, solver_options={})
        model = peer.mj_model
        geometry = RobotGeometry.from_robot(robot)
        links = sorted({(geometry.links[i], geometry.links[j]) for i, j in geometry.pairs})

        def geoms(link: str) -> list[int]:
            body = model.body(link).id
            return [
                g
                for g in range(model.ngeom)
                if model.geom_bodyid[g] == body and model.geom_contype[g] != 0
            ]

        limit = mink.CollisionAvoidanceLimit(
            model,
            [(geoms(a), geoms(b)) for a, b in links],
            minimum_distance_from_collisions=MINK_MARGIN,
            collision_detection_distance=detection,
        )
        self.pairs = len(limit.geom_id_pairs)
        self.limits.append(limit)


def avoidance_variants(target: Any, n_total: int) -> dict[str, _Variant]:
    """pinkctl's own collision avoidance, when the controller takes ``world=`` (the rows of
    the controller's collision tick bench, ``bench.collision_tick``, join these): self pairs
    only, and self + :func:`five_obstacles`. Empty when this pinkctl has no avoidance."""
    if not AVOIDS:
        return {}
    robot = _robot(False)
    variants: dict[str, _Variant] = {}
    for name, world in (("self only", None), ("self + 5 obstacles", five_obstacles(robot))):
        variant = PinkctlVariant(
            robot, target, "daqp", barrier=False, n_total=n_total, default_settings=True,
            controller_options={"self_collision": True, "world": world},
        )  # fmt: skip
        variant.pairs = len(CollisionScene(robot, world).pairs)  # type: ignore[attr-defined]
        variants[f"pinkctl with avoidance, {name}"] = variant
    return variants


def tick_rows(steps: int, chunk: int, warmup: int = WARMUP) -> list[dict[str, Any]]:
    """One row per variant (module docstring): median, p90 [us], ratio, failures, pairs."""
    plain, collision = _robot(False), _robot(True)
    n_total = warmup + steps
    target = moving_target(home_tool_pose(plain), n_total)
    peer = _peer_models(collision, with_mujoco=True)
    variants: dict[str, _Variant] = {
        "pinkctl, no collision": PinkctlVariant(
            plain,
            target,
            "daqp",
            barrier=False,
            n_total=n_total,
            default_settings=True,
            controller_options=NO_AVOIDANCE,
        ),
        "pinkctl + pink SelfCollisionBarrier": PinkctlVariant(
            collision,
            target,
            "daqp",
            barrier=True,
            n_total=n_total,
            default_settings=True,
            controller_options=NO_AVOIDANCE,
        ),
        "pink solve_ik + SelfCollisionBarrier": _Pink(
            peer, target, "daqp", barrier=True, n_total=n_total, solver_options={}
        ),
    }
    if mink is not None:
        for d in MINK_DETECTION:
            name = f"mink solve_ik + CollisionAvoidanceLimit, detection {d * 100:g} cm"
            variants[name] = _MinkCollision(peer, collision, target, detection=d, n_total=n_total)
    variants.update(avoidance_variants(target, n_total))
    times: dict[str, list[int]] = {name: [] for name in variants}
    for start in range(0, n_total, chunk):
        for name, variant in variants.items():
            for k in range(start, min(start + chunk, n_total)):
                variant.prepare(k)
                t0 = time.perf_counter_ns()
                variant.step(k)
                elapsed = time.perf_counter_ns() - t0
                variant.record(k)
                if k >= warmup:
                    times[name].append(elapsed)
    base = timing_stats_us(times["pinkctl, no collision"])["median_us"]
    rows = []
    for name, variant in variants.items():
        stats = timing_stats_us(times[name])
        pairs = getattr(variant, "pairs", len(collision.collision_model.collisionPairs))
        rows.append(
            {
                "variant": name,
                **stats,
                "ratio": stats["median_us"] / base,
                "failures": variant.failures,
                "pairs": 0 if name == "pinkctl, no collision" else pairs,
            }
        )
    return rows


def ik_rows(n_targets: int, seed: int = 0) -> list[dict[str, Any]]:
    """Global IK collision-blind and with a rejecting ``validate`` (module docstring)."""
    robot = _robot(False)
    frame = robot.tool_frame
    scene = CollisionScene(robot)
    solver = IKSolver(
        robot, frame=frame, position_tolerance=TOLERANCE, orientation_tolerance=TOLERANCE
    )
    subset = solver.subset
    rng = np.random.default_rng(seed)
    data = robot.model.createData()
    fid = robot.model.getFrameId(frame)
    targets = []
    while len(targets) < n_targets:
        q = subset.sample(rng, robot.q0)
        if not scene.in_collision(q):
            pin.framesForwardKinematics(robot.model, data, q)
            targets.append(data.oMf[fid].copy())
    nominal = subset.middle(robot.q0)

    def collision_free(values: np.ndarray) -> bool:
        q = robot.q0.copy()
        subset.write(q, values)
        return not scene.in_collision(q)

    rows = []
    for name, validate in (
        ("find_ik, collision-blind", None),
        ("find_ik + validate", collision_free),
    ):
        solver.find(targets[0], seed=nominal, rng=0, validate=validate)  # warm up
        found = colliding = 0
        elapsed = 0.0
        for i, target in enumerate(targets):
            t0 = time.perf_counter()
            result = solver.find(target, seed=nominal, rng=i, validate=validate)
            elapsed += time.perf_counter() - t0
            if result.success:
                found += 1
                colliding += not collision_free(result.q)
        rows.append(
            {
                "variant": name,
                "success": found / n_targets,
                "in_collision": colliding / max(found, 1),
                "mean_ms": 1e3 * elapsed / n_targets,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000, help="timed ticks per variant")
    parser.add_argument("--chunk", type=int, default=100, help="ticks per turn")
    parser.add_argument("--targets", type=int, default=300, help="global IK targets")
    args = parser.parse_args(argv)
    print(machine_line())
    print(f"tick, franka, {args.steps} ticks after {WARMUP} warm-up, dt {DT * 1e3:g} ms")
    print(f"{'variant':<58} {'pairs':>5} {'median us':>10} {'p90 us':>8} {'ratio':>6} {'fail':>5}")
    for row in tick_rows(args.steps, args.chunk):
        print(
            f"{row['variant']:<58} {row['pairs']:>5} {row['median_us']:>10.1f} "
            f"{row['p90_us']:>8.1f} {row['ratio']:>6.2f} {row['failures']:>5}"
        )
    if mink is None:
        print("(mink is not installed: its rows are missing)")
    print(f"global IK, franka, {args.targets} TRAC-IK-protocol targets, self-collision")
    print(f"{'variant':<28} {'success':>8} {'answers in collision':>21} {'mean ms':>8}")
    for row in ik_rows(args.targets):
        print(
            f"{row['variant']:<28} {100 * row['success']:>7.1f}% "
            f"{100 * row['in_collision']:>20.1f}% {row['mean_ms']:>8.2f}"
        )
    print(machine_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
