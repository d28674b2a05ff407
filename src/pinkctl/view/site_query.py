"""The IK queries of one target (:meth:`~pinkctl.view.target.IkTarget.solve_ik`).

A query is a local solve from its start (:class:`~pinkctl.ik.IKSolver`, Levenberg–Marquardt,
200 iterations) and, if that fails, a deterministic global search (50 random restarts, seed
0). The target's joints start where the query says; the robot's other joints start where the
simulation has them. It never touches the simulation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.robot import PinkRobot
from ..ik import IKSolver, IKTarget

if TYPE_CHECKING:
    from ..sim import MujocoSimulation

__all__ = ["SiteQuery"]


class SiteQuery:
    """IK queries on ``site`` over ``joint_names`` (one solver per goal kind, built on first
    use).

    Args:
        robot: The Pinocchio robot.
        sim: The simulation the other joints' start positions are read from.
        site: The frame to place.
        joint_names: The joints a query moves.
    """

    def __init__(
        self, robot: PinkRobot, sim: MujocoSimulation, site: str, joint_names: list[str]
    ) -> None:
        self.robot = robot
        self.sim = sim
        self.site = site
        self.joint_names = joint_names
        self._solvers: dict[bool, IKSolver] = {}

    def solve(self, target: IKTarget, start: np.ndarray) -> np.ndarray | None:
        """Positions of :attr:`joint_names` that put the site at ``target`` (a position [m],
        or a position and a (w, x, y, z) quaternion), or None when none was found."""
        solver = self._solver(position_only=not isinstance(target, tuple))
        seed = self._seed(start)
        result = solver.solve(target, seed=seed, max_iterations=200)
        if not result.success:
            result = solver.find(target, seed=seed, time_budget_ms=None, max_restarts=50, rng=0)
        return np.array(result.q, dtype=float) if result.success else None

    def _solver(self, *, position_only: bool) -> IKSolver:
        solver = self._solvers.get(position_only)
        if solver is None:
            solver = IKSolver(
                self.robot,
                frame=self.site,
                joint_names=self.joint_names,
                position_only=position_only,
            )
            self._solvers[position_only] = solver
        return solver

    def _seed(self, start: np.ndarray) -> dict[str, float]:
        """``start`` for the query's joints, the simulation's positions for the robot's
        other joints."""
        model, qpos = self.sim.model, self.sim.data.qpos
        known = self.robot.home_positions()
        seed = {
            name: float(qpos[model.joint(name).qposadr[0]])
            for name in self.sim.joint_names
            if name in known and name not in self.joint_names
        }
        seed.update(zip(self.joint_names, start.tolist(), strict=True))
        return seed
