"""Progress of long work on stderr: a tqdm bar on a terminal, one line per 10 % otherwise.

A bar redrawn in place is what a person at a terminal wants; in a log file or a CI console the
same redraws pile up into one unreadable line, so there each tenth of the work done prints one
line (``pinkctl demo: simulating: 30 % (2.4 / 8 s)``). :func:`progress_bar` returns either,
with tqdm's ``update`` / ``close`` interface.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Protocol, TextIO

__all__ = ["LineProgress", "ProgressBar", "progress_bar"]

#: Lines printed by :class:`LineProgress` over the whole work.
STEPS = 10


class ProgressBar(Protocol):
    """What :func:`progress_bar` returns (tqdm's interface, the part pinkctl uses)."""

    def update(self, n: float = 1) -> Any: ...

    def close(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: object) -> Any: ...


class LineProgress:
    """Progress as one line per :data:`STEPS`-th of ``total`` (for streams that are not a
    terminal).

    Args:
        total: The amount of work (ticks, frames, targets, seconds).
        desc: What is being done; each line starts with it.
        unit: Unit of ``total``, printed after the amounts.
        file: The stream (default: ``sys.stderr`` at each write).
    """

    def __init__(
        self, total: float, desc: str, *, unit: str = "", file: TextIO | None = None
    ) -> None:
        self.total = float(total)
        self.desc = desc
        self.unit = unit
        self.file = file
        self.n = 0.0
        self._printed = 0  # tenths already printed

    def update(self, n: float = 1) -> None:
        """Add ``n`` to the work done; print a line for each tenth reached."""
        self.n += n
        if self.total <= 0:
            return
        reached = min(STEPS, math.floor(STEPS * self.n / self.total + 1e-9))
        if reached > self._printed:
            self._printed = reached
            unit = f" {self.unit.removesuffix('s')}s" if self.unit else ""  # "12 / 40 targets"
            line = (
                f"{self.desc}: {100 * reached // STEPS} % ({self.n:.4g} / {self.total:.4g}{unit})"
            )
            print(line, file=self.file or sys.stderr, flush=True)

    def close(self) -> None:
        """Nothing to release (the interface of tqdm)."""

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_bar(
    total: float,
    desc: str,
    *,
    enabled: bool | None = None,
    unit: str = "it",
    file: TextIO | None = None,
) -> ProgressBar:
    """A progress display for ``total`` units of work on ``file`` (default: stderr).

    Args:
        total: The amount of work.
        desc: What is being done (the bar's label, the lines' start).
        enabled: False: nothing is shown; True: always shown; None: only on a terminal.
        unit: Unit of ``total``.
        file: The stream.

    Returns:
        A tqdm bar when the stream is a terminal, a :class:`LineProgress` otherwise, or an
        object that shows nothing.
    """
    stream = file if file is not None else sys.stderr
    terminal = bool(getattr(stream, "isatty", lambda: False)())
    if enabled is False or (enabled is None and not terminal):
        return LineProgress(0, desc)  # a total of 0 prints nothing
    if terminal:
        from tqdm import tqdm  # noqa: PLC0415

        return tqdm(total=total, desc=desc, unit=unit, file=stream, leave=False)
    return LineProgress(total, desc, unit=unit, file=file)
