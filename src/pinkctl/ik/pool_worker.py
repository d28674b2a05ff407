"""An :class:`~pinkctl.ik.IKPool` worker process, which imports only what a solve needs.

The pool starts each worker as ``python pool_worker.py READ_FD WRITE_FD``: this file runs as
a script, not through :mod:`multiprocessing` (which imports the caller's main module again in
every worker) and not as ``pinkctl.ik.pool_worker`` (which runs ``pinkctl/__init__.py`` and so
imports the controllers, the simulation and the viewers). It registers ``pinkctl`` as a bare
package, whose submodules import as usual, then loads :mod:`pinkctl.ik.job` (Pinocchio, numpy,
the robot loader and the IK) and answers requests on its pipes until the pool closes them.

Messages (pickled, :class:`multiprocessing.connection.Connection` framing):

- to the pool, once: ``("ready", pid, import_seconds)``;
- from the pool: ``(job, chunk, strict)``: a pickled :class:`~pinkctl.ik.job.BatchJob`, the chunk's
  targets (:class:`~pinkctl.ik.transport.PackedTargets` or a list of
  :class:`~pinkctl.ik.job.Chain`) and whether a target's exception is an error (else a failed
  result);
- to the pool: ``("ok", PackedResults, cpu_seconds)`` or ``("error", index, message,
  traceback)`` (index: the target whose solve raised, or None).
"""

from __future__ import annotations

import sys


def bare_package(name: str) -> None:
    """Register package ``name`` without running its ``__init__`` (its submodules still import
    normally, each running its own subpackage's ``__init__``)."""
    import importlib.util
    import types

    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError(f"{name} is not an importable package")
    module = types.ModuleType(name)
    module.__path__ = list(spec.submodule_search_locations)
    module.__file__ = spec.origin
    sys.modules[name] = module


def serve(read_fd: int, write_fd: int) -> None:
    """Answer the pool's requests until it closes the pipe (module docstring)."""
    import os
    import pickle
    import time
    import traceback
    import warnings
    from multiprocessing.connection import Connection
    from typing import Any

    started = time.perf_counter()
    warnings.simplefilter("ignore")  # the caller saw the robot's warnings when it loaded it
    from pinkctl.ik.job import TargetError, solve_chunk
    from pinkctl.ik.transport import unpack_chunk

    inbox = Connection(read_fd, writable=False)
    outbox = Connection(write_fd, readable=False)
    outbox.send(("ready", os.getpid(), time.perf_counter() - started))
    known: tuple[bytes, Any] = (b"", None)  # the last job, unpickled
    while True:
        try:
            job_bytes, chunk, strict = inbox.recv()
        except EOFError:
            return
        cpu = time.process_time()
        try:
            if job_bytes != known[0]:
                known = (job_bytes, pickle.loads(job_bytes))
            job = known[1]
            packed = solve_chunk(job, unpack_chunk(chunk), strict=strict)
            reply: tuple = ("ok", packed, time.process_time() - cpu)
        except TargetError as exc:
            cause = exc.__cause__
            text = f"{type(cause).__name__}: {cause}"
            reply = ("error", exc.index, text, "".join(traceback.format_exception(cause)))
        except Exception as exc:  # e.g. the robot does not load here
            known = (b"", None)
            reply = ("error", None, f"{type(exc).__name__}: {exc}", traceback.format_exc())
        outbox.send(reply)


if __name__ == "__main__":
    bare_package("pinkctl")
    serve(int(sys.argv[1]), int(sys.argv[2]))
