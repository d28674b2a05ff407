"""pinkctl's exceptions and warnings: one small hierarchy.

Every exception pinkctl raises on purpose derives from :class:`PinkctlError`, and keeps the
built-in class code written before this hierarchy caught (``ValueError`` for bad input,
``FileNotFoundError`` for missing files, ``RuntimeError`` for a QP without solution):

- :class:`ConfigurationError` (``ValueError``): a robot description, a ``robot.toml`` or an
  SRDF that cannot be used as it is (the message names the file and the entry);
- :class:`InputError` (``ValueError``): an argument that is not what a function expects
  (the message names the argument and what was expected);
- :class:`DescriptionNotFoundError` (``FileNotFoundError``): a description, configuration or
  mesh file that no folder holds;
- :class:`SolverError` (``RuntimeError``): a solver that found no usable solution
  (:class:`~pinkctl.qp.QPSolveError` is one);
- :class:`MissingDependencyError` (``ImportError``): an optional package a feature needs is
  not installed (the message names the extra that brings it, e.g. ``pinkctl[plot]``);
- :class:`WorkerError` (``RuntimeError``): a worker process of an
  :class:`~pinkctl.ik.IKPool` raised on a target (its index in the message and in ``index``)
  or died.

:class:`PinkctlWarning` flags what pinkctl inferred, repaired or switched off.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "DescriptionNotFoundError",
    "InputError",
    "MissingDependencyError",
    "PinkctlError",
    "PinkctlWarning",
    "SolverError",
    "WorkerError",
]


class PinkctlError(Exception):
    """Base class of the exceptions pinkctl raises on purpose."""


class ConfigurationError(PinkctlError, ValueError):
    """A robot description, configuration or SRDF that cannot be used as it is."""


class InputError(PinkctlError, ValueError):
    """An argument that is not what the function expects."""


class DescriptionNotFoundError(PinkctlError, FileNotFoundError):
    """A description, configuration or mesh file that no folder holds."""


class SolverError(PinkctlError, RuntimeError):
    """A solver found no usable solution."""


class MissingDependencyError(PinkctlError, ImportError):
    """An optional package a feature needs is not installed."""


class WorkerError(PinkctlError, RuntimeError):
    """A worker process raised on a target or died.

    Attributes:
        index: The target's index in the batch (None when no single target is to blame).
        remote_traceback: The traceback in the worker, as text ("" when it died).
    """

    def __init__(self, message: str, *, index: int | None = None, remote_traceback: str = ""):
        super().__init__(message)
        self.index = index
        self.remote_traceback = remote_traceback


class PinkctlWarning(UserWarning):
    """Something pinkctl inferred, repaired or switched off that the user should know about
    (an assumed velocity limit, a repaired inertia, motion limits off for lack of limits)."""
