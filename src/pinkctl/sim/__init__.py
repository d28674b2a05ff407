"""MuJoCo simulation backend: a robot compiled from its own URDF, and closed-loop runs."""

from .runner import ClosedLoopLog, run_closed_loop
from .simulation import MujocoSimulation

__all__ = ["ClosedLoopLog", "MujocoSimulation", "run_closed_loop"]
