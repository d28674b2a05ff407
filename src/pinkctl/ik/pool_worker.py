"""An :class:`~pinkctl.ik.IKPool` worker process, which imports only what a solve needs.

The pool starts each worker as ``python pool_worker.py READ_FD WRITE_FD``: this file runs as
a script, not through :mod:`multiprocessing` (which imports the caller's main module again in
every worker) and not as ``pinkctl.ik.pool_worker`` (which runs ``pinkctl/__init__.py`` and so
imports the controllers, the simulation and the viewers). It registers ``pinkctl`` as a bare
package, whose submodules import as usual, then loads :mod:`pinkctl.ik.job` (Pinocchio, numpy,
the robot loader and the IK) and answers requests on its pipes until the pool closes them.

Messages (pickled, :class:`multiprocessing.connection.Connection` framing):

- to the pool, once: ``("ready", pid, import_seconds)``;
- from the pool: ``(job, chunk, strict)``: a pickled :class:`~pinkctl.ik.job.BatchJob` (None:
  the job of the previous request), the chunk's targets pickled
  (:class:`~pinkctl.ik.packed.PackedTargets` or a list of :class:`~pinkctl.ik.job.Chain`: the
  pool pickles a chunk once, knows its size, and sends it again as it is if a worker dies)
  and whether a target's exception is an error (else a failed result);
- to the pool, one per request, in order: ``("ok", PackedResults, solve, idle, cpu, clock)``
  or ``("error", index, message, traceback, solve, idle, cpu, clock)`` (index: the target whose
  solve raised, or None); ``solve``: this thread's CPU seconds in
  :func:`~pinkctl.ik.job.solve_chunk` (what the same chunk costs in any process; the rest of
  ``cpu`` is the worker's own: unpickling, replying); ``idle``: seconds this process waited
  for the request after its previous reply; ``cpu``: its CPU seconds so far; ``clock``:
  ``time.monotonic()`` as it replied (the same clock as the pool's on Linux and macOS).

This process has one thread: it reads a request from its pipe, solves it, replies, and blocks in
``read`` for the next (no thread, no queue, no polling: between requests it uses no CPU). The
pool keeps the next chunk queued in the pipe while this one is solved, and never sends more than
the pipe holds (:mod:`pinkctl.ik.workers`), so it never blocks writing a request while this
process writes a reply.
"""

from __future__ import annotations

import sys
from typing import Any


def bare_package(name: str) -> None:
    """Register package ``name`` without running its ``__init__`` (its submodules still import
    normally, each running its own subpackage's ``__init__``). The ``__init__`` runs on the
    first name asked of the package that only it defines: a user's ``validate`` callback,
    unpickled here, may live in a module that does ``from pinkctl import ...``."""
    import importlib.util
    import types

    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None or spec.loader is None:
        raise ImportError(f"{name} is not an importable package")
    module = types.ModuleType(name)
    module.__path__ = list(spec.submodule_search_locations)
    module.__file__ = spec.origin
    module.__package__ = name
    module.__spec__ = spec
    loader = spec.loader

    def full(attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        del module.__dict__["__getattr__"]
        loader.exec_module(module)  # the package's __init__, in this module
        return getattr(module, attribute)

    module.__getattr__ = full  # type: ignore[method-assign]
    sys.modules[name] = module


def serve(read_fd: int, write_fd: int) -> None:
    """Answer the pool's requests until it closes the pipe (module docstring)."""
    import os
    import pickle
    import time
    import traceback
    import warnings
    from multiprocessing.connection import Connection

    started = time.perf_counter()
    warnings.simplefilter("ignore")  # the caller saw the robot's warnings when it loaded it
    from pinkctl.ik.job import TargetError, solve_chunk

    inbox = Connection(read_fd, writable=False)
    outbox = Connection(write_fd, readable=False)
    outbox.send(("ready", os.getpid(), time.perf_counter() - started))
    last, job = b"", None  # the last job sent, pickled and (once it loaded) unpickled
    while True:
        idle = time.monotonic()
        try:
            message = inbox.recv()  # blocks in read(): no CPU until a request comes
        except (EOFError, OSError):  # the pool closed the pipe
            return
        idle = time.monotonic() - idle
        job_bytes, chunk, strict = message
        solve = 0.0
        if job_bytes is not None and job_bytes != last:
            last, job = job_bytes, None
        try:
            if job is None:
                job = pickle.loads(last)
            targets = pickle.loads(chunk)
            solve = time.thread_time()
            packed = solve_chunk(job, targets, strict=strict)
            solve = time.thread_time() - solve
            reply: tuple = ("ok", packed)
        except TargetError as exc:
            cause = exc.__cause__
            text = f"{type(cause).__name__}: {cause}"
            reply = ("error", exc.index, text, "".join(traceback.format_exception(cause)))
        except Exception as exc:  # e.g. the robot does not load here
            reply = ("error", None, f"{type(exc).__name__}: {exc}", traceback.format_exc())
        outbox.send((*reply, solve, idle, time.process_time(), time.monotonic()))


if __name__ == "__main__":
    bare_package("pinkctl")
    serve(int(sys.argv[1]), int(sys.argv[2]))
