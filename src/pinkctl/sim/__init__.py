"""MuJoCo simulation: a robot compiled from its own URDF, closed-loop runs, videos."""

from .contacts import ContactReport
from .log import ClosedLoopLog
from .runner import run_closed_loop
from .simulation import MujocoSimulation
from .video import VideoRecorder

__all__ = ["ClosedLoopLog", "ContactReport", "MujocoSimulation", "VideoRecorder", "run_closed_loop"]
