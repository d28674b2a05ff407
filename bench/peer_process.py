"""A benchmark worker in another Python process, driven chunk by chunk.

Some rows cannot run in the bench's own interpreter: placo pins an older Pinocchio (its own
virtual environment, ``.venv-placo``), and "today's" pinkctl (the revision a change is measured
against) is another source tree. Such a row runs in a worker process that keeps its state
(robot, solver, loop configuration) between requests; the bench sends it one chunk of work at
a time, in turn with its own rows, so that machine load hits both processes alike.

Protocol: one JSON object per line. The worker first prints ``{"ready": ...}`` (what it set
up); then, for each request line read on stdin, it prints one reply line. An empty line (or
end of input) ends it. Anything else the worker prints goes to its stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

__all__ = ["ChunkWorker", "serve"]


class ChunkWorker:
    """A worker process speaking the protocol above.

    Args:
        command: The command line (an interpreter and a script or ``-m module``, arguments).
        env: Variables added to (or replacing those of) this process's environment.
        cwd: Working directory of the worker.

    Raises:
        RuntimeError: When the worker exits before it is ready (its stderr in the message).
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        self.process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
            cwd=cwd,
        )
        self.ready = self._read()

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            assert self.process.stderr is not None
            self.process.wait()
            raise RuntimeError(f"the worker exited: {self.process.stderr.read()[-2000:]}")
        return dict(json.loads(line))

    def request(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request; return the worker's reply."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        """End the worker (an empty request line) and wait for it."""
        if self.process.poll() is None:
            assert self.process.stdin is not None
            try:
                self.process.stdin.write("\n")
                self.process.stdin.flush()
            except BrokenPipeError:
                pass
            self.process.wait(timeout=30)


def serve(
    ready: Mapping[str, Any],
    handle: Callable[[dict[str, Any]], Mapping[str, Any]],
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> None:
    """The worker side: announce ``ready``, then answer each request with ``handle``."""
    read = stdin if stdin is not None else sys.stdin
    write = stdout if stdout is not None else sys.stdout
    write.write(json.dumps(dict(ready)) + "\n")
    write.flush()
    for line in read:
        if not line.strip():
            break
        write.write(json.dumps(dict(handle(json.loads(line)))) + "\n")
        write.flush()
